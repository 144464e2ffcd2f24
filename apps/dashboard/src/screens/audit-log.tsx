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
type AuditFilters = { actor: string; action: string; targetType: string; targetId: string; outcome: string; from: string; to: string };

function auditQuery(filters: AuditFilters, after: string | null): AuditQuery {
  const q: AuditQuery = { limit: PAGE };
  for (const [k, v] of Object.entries(filters)) {
    if (!v.trim()) continue;
    // datetime-local is the reader's local time; the API takes an instant
    (q as Record<string, unknown>)[k] = k === 'from' || k === 'to' ? new Date(v).toISOString() : v.trim();
  }
  if (after) q.cursor = after;
  return q;
}

export function AuditLogScreen() {
  const [filters, setFilters] = useState<AuditFilters>({ actor: '', action: '', targetType: '', targetId: '', outcome: '', from: '', to: '' });
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const load = useAction();
  const fetchPage = (after: string | null) =>
    load.run(async () => {
      const page = await api.auditLog(auditQuery(filters, after));
      setEntries((l) => (after ? [...(l ?? []), ...page.data] : page.data));
      setCursor(page.nextCursor);
    });
  useEffect(() => void fetchPage(null), []);

  return (
    <Panel title="Audit log">
      <AuditFilterForm filters={filters} setFilters={setFilters} busy={load.busy} apply={() => fetchPage(null)} />
      <ErrorLine error={load.error} />
      <AuditTable entries={entries} />
      {cursor && <p><button disabled={load.busy} onClick={() => fetchPage(cursor)}>Older entries</button></p>}
    </Panel>
  );
}

function AuditFilterForm({ filters, setFilters, busy, apply }: { filters: AuditFilters; setFilters: (f: AuditFilters) => void; busy: boolean; apply: () => void }) {
  const field = (key: keyof AuditFilters, label: string, placeholder = '') => (
    <label>{label} <input name={`audit-${key}`} value={filters[key]} placeholder={placeholder} onInput={(e) => setFilters({ ...filters, [key]: e.currentTarget.value })} /></label>
  );
  return (
    <form
      class="grid-form"
      aria-label="Audit filters"
      onSubmit={(e) => {
        e.preventDefault();
        apply();
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
      <div><button type="submit" class="primary" disabled={busy}>Filter</button></div>
    </form>
  );
}

function AuditTable({ entries }: { entries: AuditEntry[] | null }) {
  return (
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
  );
}
