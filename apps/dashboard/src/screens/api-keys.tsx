import { ALL_PERMISSIONS, PERMISSIONS } from '@app/contracts';
import { useState } from 'preact/hooks';
import { api, type ApiKeyCreate, type ApiKeyView } from '../api';
import { useCan } from '../me';
import { ErrorLine, type Loaded, Panel, ShownOnce, useAction, useLoad, WhenIso } from '../ui';
import { list } from './destinations';

type KeyPermission = ApiKeyCreate['permissions'][number];
/** The created key as the API answers it once: its listing with the token. */
type ApiKeyCreated = Awaited<ReturnType<typeof api.createApiKey>>;

/**
 * API keys (`apikeys:manage`): create with permissions, an optional session scope, an IP allow-list and an expiry;
 * the token is shown once; revoke. A caller is offered only the permissions it holds itself (the API refuses the
 * others, docs/auth.md), and `*` only when it holds them all.
 */
export function ApiKeysScreen() {
  const keys = useLoad(() => api.apiKeys().then((p) => p.data));
  const [token, setToken] = useState<string | null>(null);
  return (
    <>
      {token && <ShownOnce label="New API key" value={token} onDone={() => setToken(null)} />}
      <NewApiKeyPanel
        onCreated={(created) => {
          setToken(created.token);
          const { token: _shownOnce, ...listed } = created;
          keys.setData((l) => [...(l ?? []), listed]);
        }}
      />
      <ApiKeysPanel keys={keys} />
    </>
  );
}

const toggle = <T,>(items: T[], item: T, on: boolean) => (on ? [...items, item] : items.filter((x) => x !== item));

type KeyForm = { name: string; permissions: KeyPermission[]; sessionIds: string[]; allowedIps: string; expiresAt: string };
const EMPTY_KEY_FORM: KeyForm = { name: '', permissions: [], sessionIds: [], allowedIps: '', expiresAt: '' };

function keyBodyOf({ name, permissions, sessionIds, allowedIps, expiresAt }: KeyForm): ApiKeyCreate {
  const body: ApiKeyCreate = { name: name.trim(), permissions };
  if (sessionIds.length) body.sessionIds = sessionIds;
  if (list(allowedIps).length) body.allowedIps = list(allowedIps);
  // datetime-local is the reader's local time; the API takes an instant
  if (expiresAt) body.expiresAt = new Date(expiresAt).toISOString();
  return body;
}

function NewApiKeyPanel({ onCreated }: { onCreated: (created: ApiKeyCreated) => void }) {
  const can = useCan();
  const sessions = useLoad(() => (can('sessions:read') ? api.sessions().then((p) => p.data) : Promise.resolve([])));
  const grantable: KeyPermission[] = [...PERMISSIONS.filter(can), ...(PERMISSIONS.every(can) ? [ALL_PERMISSIONS as KeyPermission] : [])];
  const [form, setForm] = useState<KeyForm>(EMPTY_KEY_FORM);
  const set = <K extends keyof KeyForm>(key: K, value: KeyForm[K]) => setForm((f) => ({ ...f, [key]: value }));
  const create = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const body = keyBodyOf(form);
    create.run(async () => {
      onCreated(await api.createApiKey(body));
      setForm(EMPTY_KEY_FORM);
    });
  };
  const { permissions, sessionIds } = form;
  return (
    <Panel title="New API key">
      <form class="grid-form" onSubmit={submit} aria-label="New API key" noValidate>
        <label class="wide">Name <input name="keyName" value={form.name} onInput={(e) => set('name', e.currentTarget.value)} placeholder="ci, n8n, crm-sync…" /></label>
        <fieldset class="checks wide" data-testid="key-permissions">
          <legend>Permissions</legend>
          {grantable.map((p) => (
            <label class="check"><input type="checkbox" name="permission" value={p} checked={permissions.includes(p)} onChange={(e) => set('permissions', toggle(permissions, p, e.currentTarget.checked))} /> {p === ALL_PERMISSIONS ? '* (every permission)' : p}</label>
          ))}
        </fieldset>
        <fieldset class="checks wide" data-testid="key-sessions">
          <legend>Sessions it may reach (none ticked: every session)</legend>
          {(sessions.data ?? []).map((s) => (
            <label class="check"><input type="checkbox" name="sessionScope" value={s.id} checked={sessionIds.includes(s.id)} onChange={(e) => set('sessionIds', toggle(sessionIds, s.id, e.currentTarget.checked))} /> {s.label} <span class="muted mono">{s.id}</span></label>
          ))}
          {sessions.data && !sessions.data.length && <span class="muted">No sessions yet.</span>}
        </fieldset>
        <label class="wide">Allowed IPs (CIDRs, comma or line separated; empty: anywhere) <textarea name="allowedIps" rows={2} value={form.allowedIps} onInput={(e) => set('allowedIps', e.currentTarget.value)} placeholder="203.0.113.0/24, 2001:db8::/32" /></label>
        <label>Expires (optional) <input name="expiresAt" type="datetime-local" value={form.expiresAt} onInput={(e) => set('expiresAt', e.currentTarget.value)} /></label>
        <div class="wide">
          <ErrorLine error={create.error} />
          <button type="submit" class="primary" disabled={create.busy}>Create API key</button>
        </div>
      </form>
    </Panel>
  );
}

function ApiKeysPanel({ keys }: { keys: Loaded<ApiKeyView[]> }) {
  const revoke = useAction();
  return (
    <Panel title="API keys" actions={<button onClick={keys.reload}>Refresh</button>}>
      <ErrorLine error={keys.error} />
      <ErrorLine error={revoke.error} />
      <table class="list" data-testid="api-keys">
        <thead><tr><th>Name</th><th>Permissions</th><th>Sessions</th><th>Allowed IPs</th><th>Expires</th><th>Last used</th><th /></tr></thead>
        <tbody>
          {(keys.data ?? []).map((k) => (
            <tr key={k.id} data-key-id={k.id}>
              <td>{k.name}<div class="muted mono">{k.tokenHint} · {k.id}</div><div class="muted">created <WhenIso at={k.createdAt} />{k.createdBy ? ` by ${k.createdBy}` : ''}</div></td>
              <td class="mono">{[...k.permissions].sort().join(', ')}</td>
              <td class="mono">{k.sessionIds?.join(', ') ?? 'all'}</td>
              <td class="mono">{k.allowedIps?.join(', ') ?? 'anywhere'}</td>
              <td><WhenIso at={k.expiresAt} /></td>
              <td><WhenIso at={k.lastUsedAt} /></td>
              <td class="actions">
                <button
                  class="danger"
                  disabled={revoke.busy}
                  onClick={() =>
                    confirm(`Revoke the key "${k.name}"? Every request with it is refused at once.`) &&
                    revoke.run(async () => (await api.revokeApiKey(k.id), keys.setData((l) => (l ?? []).filter((x) => x.id !== k.id))))
                  }
                >
                  Revoke
                </button>
              </td>
            </tr>
          ))}
          {keys.data && !keys.data.length && <tr><td colSpan={7} class="muted">No API keys yet.</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}
