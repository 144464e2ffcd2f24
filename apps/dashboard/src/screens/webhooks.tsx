import { useState } from 'preact/hooks';
import { api, type WebhookInput, type WebhookView } from '../api';
import { useCan } from '../me';
import { go } from '../router';
import { ErrorLine, Panel, useAction, useLoad, When } from '../ui';
import { ActiveCell, DeliveryLog, DestinationActions, DestinationFacts, useDeliveryLog, useDestinationFields, type DeliverySource } from './destinations';
import { EventSinksPanel } from './event-sinks';

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
  const destination = useDestinationFields(webhook);
  const [secret, setSecret] = useState('');
  const [removeSecret, setRemoveSecret] = useState(false);
  const [headers, setHeaders] = useState(Object.entries(webhook?.customHeaders ?? {}).map(([k, v]) => `${k}: ${v}`).join('\n'));
  const { error, busy, run } = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    const input: WebhookInput = { url: url.trim(), ...destination.input(), customHeaders: parseHeaders(headers) };
    if (secret) input.secret = secret;
    else if (removeSecret) input.secret = null;
    run(async () => onSaved(webhook ? await api.updateWebhook(webhook.id, input) : await api.createWebhook(input)));
  };

  return (
    <form class="grid-form" onSubmit={submit} aria-label={webhook ? 'Edit webhook' : 'New webhook'}>
      <label class="wide">URL <input name="url" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://example.com/hooks/whatsapp" /></label>
      <label>Secret <input name="secret" type="password" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} placeholder={webhook ? 'unchanged' : 'optional, signs every delivery'} /></label>
      {webhook && <label class="check"><input type="checkbox" checked={removeSecret} onChange={(e) => setRemoveSecret(e.currentTarget.checked)} /> remove the secret</label>}
      {destination.fields}
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
  // every call of this screen needs webhooks:manage: without it, say so instead of forms the API would refuse
  if (!useCan()('webhooks:manage')) {
    return (
      <Panel title="Webhooks and event sinks">
        <p class="muted" data-testid="webhooks-not-managed">Webhooks and event sinks are managed by the organization's owners and admins (or an API key with <span class="mono">webhooks:manage</span>).</p>
      </Panel>
    );
  }
  return <ManagedWebhooks />;
}

function ManagedWebhooks() {
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
                <td><ActiveCell destination={w} /></td>
                <td>{w.retryPolicy.policy}, {w.retryPolicy.attempts}× from {w.retryPolicy.delaySeconds}s</td>
                <td><When at={w.updatedAt} /></td>
              </tr>
            ))}
            {data && !data.length && <tr><td colSpan={6} class="muted">No webhooks yet.</td></tr>}
          </tbody>
        </table>
      </Panel>
      <EventSinksPanel />
    </>
  );
}

const webhookDeliveries: DeliverySource = { deliveries: api.deliveries, delivery: api.delivery, replay: api.replay };

export function WebhookDetail({ id }: { id: string }) {
  const hook = useLoad(() => api.webhook(id), [id]);
  const log = useDeliveryLog(webhookDeliveries, id);
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);

  const webhook = hook.data;
  if (hook.error) return <ErrorLine error={hook.error} />;
  if (!webhook) return <p class="muted">Loading…</p>;

  return (
    <>
      <p><a href="#/webhooks">← Webhooks</a></p>
      <Panel
        title={webhook.url}
        actions={
          <DestinationActions
            busy={action.busy}
            run={action.run}
            test={() => api.testWebhook(id)}
            onTested={async (notice) => (setNotice(notice), await log.reload())}
            editing={editing}
            setEditing={setEditing}
            deleteQuestion={`Delete the webhook to ${webhook.url}?`}
            remove={async () => (await api.deleteWebhook(id), go('webhooks'))}
          />
        }
      >
        {editing ? (
          <WebhookForm webhook={webhook} onSaved={(w) => (hook.setData(w), setEditing(false))} onCancel={() => setEditing(false)} />
        ) : (
          <dl class="facts">
            <DestinationFacts destination={webhook} />
            <dt>Headers</dt><dd>{Object.keys(webhook.customHeaders).join(', ') || '—'}</dd>
          </dl>
        )}
        {notice && <p class="ok">{notice}</p>}
        <ErrorLine error={action.error} />
      </Panel>
      <DeliveryLog source={webhookDeliveries} id={id} log={log} />
    </>
  );
}
