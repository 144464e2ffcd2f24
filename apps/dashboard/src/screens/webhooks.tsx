import { RETRY_POLICIES, type RetryPolicyKind } from '@app/contracts';
import { useEffect, useState } from 'preact/hooks';
import { api, type DeliveryDetailView, type DeliveryView, type WebhookInput, type WebhookView } from '../api';
import { go } from '../router';
import { ErrorLine, Panel, plural, Status, useAction, useLoad, When } from '../ui';
import { DeliveryChart } from './delivery-chart';

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return headers;
}

/** Create (no `webhook`) or edit; an empty secret on edit keeps the stored one. */
function WebhookForm({ webhook, onSaved, onCancel }: { webhook?: WebhookView; onSaved: (w: WebhookView) => void; onCancel?: () => void }) {
  const [url, setUrl] = useState(webhook?.url ?? '');
  const [events, setEvents] = useState((webhook?.events ?? ['*']).join(', '));
  const [sessionId, setSessionId] = useState(webhook?.sessionId ?? '');
  const [active, setActive] = useState(webhook?.active ?? true);
  const [secret, setSecret] = useState('');
  const [removeSecret, setRemoveSecret] = useState(false);
  const [policy, setPolicy] = useState<RetryPolicyKind>(webhook?.retryPolicy.policy ?? 'exponential');
  const [delaySeconds, setDelay] = useState(String(webhook?.retryPolicy.delaySeconds ?? ''));
  const [attempts, setAttempts] = useState(String(webhook?.retryPolicy.attempts ?? ''));
  const [headers, setHeaders] = useState(Object.entries(webhook?.customHeaders ?? {}).map(([k, v]) => `${k}: ${v}`).join('\n'));
  const { error, busy, run } = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    const input: WebhookInput = {
      url: url.trim(),
      // typed by the catalog; a name outside it is the server's to refuse (422 naming the known ones, shown by the form)
      events: list(events) as WebhookInput['events'],
      sessionId: sessionId.trim() || null,
      active,
      customHeaders: parseHeaders(headers),
      retryPolicy: {
        policy,
        ...(delaySeconds ? { delaySeconds: Number(delaySeconds) } : {}),
        ...(attempts ? { attempts: Number(attempts) } : {}),
      } as WebhookInput['retryPolicy'],
    };
    if (secret) input.secret = secret;
    else if (removeSecret) input.secret = null;
    if (!webhook && !input.sessionId) delete input.sessionId;
    run(async () => onSaved(webhook ? await api.updateWebhook(webhook.id, input) : await api.createWebhook(input)));
  };

  return (
    <form class="grid-form" onSubmit={submit} aria-label={webhook ? 'Edit webhook' : 'New webhook'}>
      <label class="wide">URL <input name="url" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://example.com/hooks/whatsapp" /></label>
      <label>Events <input name="events" value={events} onInput={(e) => setEvents(e.currentTarget.value)} title="comma separated; * is every type" /></label>
      <label>Session (optional) <input name="sessionId" value={sessionId} onInput={(e) => setSessionId(e.currentTarget.value)} placeholder="ses_…" /></label>
      <label>Secret <input name="secret" type="password" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} placeholder={webhook ? 'unchanged' : 'optional, signs every delivery'} /></label>
      {webhook && <label class="check"><input type="checkbox" checked={removeSecret} onChange={(e) => setRemoveSecret(e.currentTarget.checked)} /> remove the secret</label>}
      <label>Retry policy
        <select name="policy" value={policy} onChange={(e) => setPolicy(e.currentTarget.value as RetryPolicyKind)}>
          {RETRY_POLICIES.map((p) => <option value={p}>{p}</option>)}
        </select>
      </label>
      <label>Delay (s) <input name="delaySeconds" type="number" min={1} value={delaySeconds} onInput={(e) => setDelay(e.currentTarget.value)} placeholder="default" /></label>
      <label>Attempts <input name="attempts" type="number" min={1} value={attempts} onInput={(e) => setAttempts(e.currentTarget.value)} placeholder="default" /></label>
      <label class="check"><input name="active" type="checkbox" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} /> active</label>
      <label class="wide">Custom headers <textarea name="customHeaders" rows={2} value={headers} onInput={(e) => setHeaders(e.currentTarget.value)} placeholder="X-Team: support" /></label>
      <div class="wide">
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy}>{webhook ? 'Save' : 'Create webhook'}</button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  );
}

export function WebhooksScreen() {
  const { data, setData, error, reload } = useLoad(() => api.webhooks().then((p) => p.data));
  return (
    <>
      <Panel title="New webhook">
        <WebhookForm key={data?.length ?? 0} onSaved={(w) => (setData((l) => [...(l ?? []), w]), go(`webhooks/${w.id}`))} />
      </Panel>
      <Panel title="Webhooks" actions={<button onClick={reload}>Refresh</button>}>
        <ErrorLine error={error} />
        <table class="list" data-testid="webhooks">
          <thead><tr><th>URL</th><th>Events</th><th>Session</th><th>Active</th><th>Retry</th><th>Updated</th></tr></thead>
          <tbody>
            {(data ?? []).map((w) => (
              <tr key={w.id} data-webhook-id={w.id}>
                <td><a href={`#/webhooks/${w.id}`}>{w.url}</a><div class="muted mono">{w.id}</div></td>
                <td>{w.events.length ? w.events.join(', ') : <span class="muted">none</span>}</td>
                <td class="mono">{w.sessionId ?? 'all'}</td>
                <td>
                  {w.active ? 'yes' : 'no'}
                  {w.disabledAt !== null && (
                    <div class="muted" title={w.disabledReason ?? ''}>disabled after failing, <When at={w.disabledAt} />: re-enable to resume</div>
                  )}
                  {w.rateLimitPerSecond !== null && <div class="muted">≤ {w.rateLimitPerSecond}/s</div>}
                </td>
                <td>{w.retryPolicy.policy}, {w.retryPolicy.attempts}× from {w.retryPolicy.delaySeconds}s</td>
                <td><When at={w.updatedAt} /></td>
              </tr>
            ))}
            {data && !data.length && <tr><td colSpan={6} class="muted">No webhooks yet.</td></tr>}
          </tbody>
        </table>
      </Panel>
    </>
  );
}

/** Delivery statuses change in the dispatcher, which the socket does not carry: the log polls while it is open. */
const LOG_POLL_MS = 2000;

export function WebhookDetail({ id }: { id: string }) {
  const hook = useLoad(() => api.webhook(id), [id]);
  const log = useLoad(() => api.deliveries(id).then((p) => p.data), [id]);
  const [editing, setEditing] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    const timer = setInterval(log.reload, LOG_POLL_MS);
    return () => clearInterval(timer);
  }, [log.reload]);

  const webhook = hook.data;
  if (hook.error) return <ErrorLine error={hook.error} />;
  if (!webhook) return <p class="muted">Loading…</p>;
  const deliveries = log.data ?? [];

  return (
    <>
      <p><a href="#/webhooks">← Webhooks</a></p>
      <Panel
        title={webhook.url}
        actions={
          <>
            <button
              class="primary"
              disabled={action.busy}
              onClick={() =>
                action.run(async () => {
                  const sent = await api.testWebhook(id);
                  setNotice(`Test event ${sent.eventId} queued as delivery ${sent.deliveryId}.`);
                  await log.reload();
                })
              }
            >
              Send test event
            </button>
            <button onClick={() => setEditing(!editing)}>{editing ? 'Close editor' : 'Edit'}</button>
            <button
              class="danger"
              onClick={() => confirm(`Delete the webhook to ${webhook.url}?`) && action.run(async () => (await api.deleteWebhook(id), go('webhooks')))}
            >
              Delete
            </button>
          </>
        }
      >
        {editing ? (
          <WebhookForm webhook={webhook} onSaved={(w) => (hook.setData(w), setEditing(false))} onCancel={() => setEditing(false)} />
        ) : (
          <dl class="facts">
            <dt>Id</dt><dd class="mono">{webhook.id}</dd>
            <dt>Events</dt><dd>{webhook.events.join(', ') || 'none'}</dd>
            <dt>Session</dt><dd class="mono">{webhook.sessionId ?? 'every session'}</dd>
            <dt>Active</dt><dd>{webhook.active ? 'yes' : 'no'}</dd>
            <dt>Retry</dt><dd>{webhook.retryPolicy.policy}, {plural(webhook.retryPolicy.attempts, 'attempt')} from {webhook.retryPolicy.delaySeconds}s</dd>
            <dt>Headers</dt><dd>{Object.keys(webhook.customHeaders).join(', ') || '—'}</dd>
          </dl>
        )}
        {notice && <p class="ok">{notice}</p>}
        <ErrorLine error={action.error} />
        <DeliveryChart deliveries={deliveries} />
      </Panel>
      <Panel title="Delivery log" actions={<button onClick={log.reload}>Refresh</button>}>
        <ErrorLine error={log.error} />
        <table class="list" data-testid="deliveries">
          <thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>Last answer</th><th>Created</th><th>Delivered</th><th /></tr></thead>
          <tbody>
            {deliveries.map((d) => (
              <DeliveryRow
                key={d.id}
                delivery={d}
                open={open === d.id}
                onToggle={() => setOpen(open === d.id ? null : d.id)}
                onReplay={() => action.run(async () => (await api.replay(id, d.id), setOpen(d.id), await log.reload()))}
              />
            ))}
            {log.data && !deliveries.length && <tr><td colSpan={7} class="muted">No deliveries yet: send a test event.</td></tr>}
          </tbody>
        </table>
      </Panel>
    </>
  );
}

function DeliveryRow({ delivery: d, open, onToggle, onReplay }: { delivery: DeliveryView; open: boolean; onToggle: () => void; onReplay: () => void }) {
  const replayable = d.status === 'delivered' || d.status === 'dead';
  return (
    <>
      <tr data-delivery-id={d.id} data-attempts={d.attempts}>
        <td>{d.event}<div class="muted mono">{d.id}</div></td>
        <td><Status value={d.status} /></td>
        <td>{d.attempts}</td>
        <td>{d.lastStatusCode ?? ''} {d.lastError && <span class="muted">{d.lastError}</span>}</td>
        <td><When at={d.createdAt} /></td>
        <td><When at={d.deliveredAt} /></td>
        <td class="actions">
          <button onClick={onToggle}>{open ? 'Hide attempts' : 'Attempts'}</button>
          <button onClick={onReplay} disabled={!replayable} title={replayable ? 'send it again' : 'only a delivered or dead delivery can be replayed'}>Replay</button>
        </td>
      </tr>
      {open && (
        <tr class="attempts-row">
          <td colSpan={7}><Attempts webhookId={d.webhookId} deliveryId={d.id} version={`${d.attempts}:${d.status}`} /></td>
        </tr>
      )}
    </>
  );
}

function Attempts({ webhookId, deliveryId, version }: { webhookId: string; deliveryId: string; version: string }) {
  const { data, error } = useLoad<DeliveryDetailView>(() => api.delivery(webhookId, deliveryId), [webhookId, deliveryId, version]);
  if (error) return <ErrorLine error={error} />;
  if (!data) return <span class="muted">Loading…</span>;
  return (
    <table class="attempts" data-attempts-of={deliveryId}>
      <thead><tr><th>#</th><th>Started</th><th>Answer</th><th>Duration</th><th>Error</th><th>Response</th></tr></thead>
      <tbody>
        {data.attemptList.map((a) => (
          <tr key={a.attemptNo} data-attempt-no={a.attemptNo}>
            <td>{a.attemptNo}</td>
            <td><When at={a.startedAt} /></td>
            <td>{a.statusCode ?? '—'}</td>
            <td>{a.durationMs} ms</td>
            <td>{a.error ?? ''}</td>
            <td class="mono snippet">{a.responseSnippet ?? ''}</td>
          </tr>
        ))}
        {!data.attemptList.length && <tr><td colSpan={6} class="muted">No attempt yet.</td></tr>}
      </tbody>
    </table>
  );
}
