import { useEffect, useState } from 'preact/hooks';
import { api, type AuditEntry, type AuditQuery } from '../api';
import { ErrorLine, Panel, Status, useAction, WhenIso } from '../ui';

const PAGE = 50;
const OUTCOMES = ['success', 'denied', 'failed'] as const;

/**
 * The audit log (`audit:read`), newest first: filters by actor, action, target and outcome and a time range, 50
 * entries a page, "Older entries" follows the API's cursor. Filters apply when submitted (one request, not one per
 * keystroke); the API checks them (its 422 is shown).
 */
export function AuditLogScreen() {
  const [filters, setFilters] = useState({ actor: '', action: '', targetType: '', targetId: '', outcome: '', from: '', to: '' });
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const load = useAction();

  const query = (after: string | null): AuditQuery => {
    const q: AuditQuery = { limit: PAGE };
    for (const [k, v] of Object.entries(filters)) {
      if (!v.trim()) continue;
      // datetime-local is the reader's local time; the API takes an instant
      (q as Record<string, unknown>)[k] = k === 'from' || k === 'to' ? new Date(v).toISOString() : v.trim();
    }
    if (after) q.cursor = after;
    return q;
  };
  const fetchPage = (after: string | null) =>
    load.run(async () => {
      const page = await api.auditLog(query(after));
      setEntries((l) => (after ? [...(l ?? []), ...page.data] : page.data));
      setCursor(page.nextCursor);
    });
  useEffect(() => void fetchPage(null), []);

  const field = (key: keyof typeof filters, label: string, placeholder = '') => (
    <label>{label} <input name={`audit-${key}`} value={filters[key]} placeholder={placeholder} onInput={(e) => setFilters({ ...filters, [key]: e.currentTarget.value })} /></label>
  );

  return (
    <Panel title="Audit log">
      <form
        class="grid-form"
        aria-label="Audit filters"
        onSubmit={(e) => {
          e.preventDefault();
          fetchPage(null);
        }}
      >
        {field('actor', 'Actor id', 'usr_…, key_…, cli')}
        {field('action', 'Action', 'apikey.create')}
        {field('targetType', 'Target type', 'apiKey')}
        {field('targetId', 'Target id')}
        <label>Outcome
          <select name="audit-outcome" value={filters.outcome} onChange={(e) => setFilters({ ...filters, outcome: e.currentTarget.value })}>
            <option value="">any</option>
            {OUTCOMES.map((o) => <option value={o}>{o}</option>)}
          </select>
        </label>
        <label>From <input name="audit-from" type="datetime-local" value={filters.from} onInput={(e) => setFilters({ ...filters, from: e.currentTarget.value })} /></label>
        <label>To <input name="audit-to" type="datetime-local" value={filters.to} onInput={(e) => setFilters({ ...filters, to: e.currentTarget.value })} /></label>
        <div><button type="submit" class="primary" disabled={load.busy}>Filter</button></div>
      </form>
      <ErrorLine error={load.error} />
      <table class="list" data-testid="audit-log">
        <thead><tr><th>When</th><th>Actor</th><th>Action</th><th>Target</th><th>Outcome</th><th>Fields</th><th>From</th></tr></thead>
        <tbody>
          {(entries ?? []).map((a) => (
            <tr key={a.id} data-audit-id={a.id} data-action={a.action}>
              <td><WhenIso at={a.at} /></td>
              <td>{a.actor.name ?? a.actor.type}<div class="muted mono">{a.actor.type}{a.actor.id ? ` ${a.actor.id}` : ''}</div></td>
              <td class="mono">{a.action}</td>
              <td>{a.target.type ?? ''}<div class="muted mono">{a.target.id ?? ''}</div></td>
              <td><Status value={a.outcome} /></td>
              <td>{a.changes.join(', ')}</td>
              <td class="mono">{a.ip ?? ''}<div class="muted" title={a.userAgent ?? ''}>{a.requestId ?? ''}</div></td>
            </tr>
          ))}
          {entries && !entries.length && <tr><td colSpan={7} class="muted">No entries match.</td></tr>}
        </tbody>
      </table>
      {cursor && <p><button disabled={load.busy} onClick={() => fetchPage(cursor)}>Older entries</button></p>}
    </Panel>
  );
}
