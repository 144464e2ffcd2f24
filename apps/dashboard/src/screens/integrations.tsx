import { useState } from 'preact/hooks';
import { ApiError, api, type ChatwootInput, type ChatwootView } from '../api';
import { useCan } from '../me';
import { type Action, CopyButton, ErrorLine, Panel, plural, Status, useAction, useLoad, When } from '../ui';

/**
 * A session's integrations (CONTRACT 16, docs/integrations/chatwoot.md): its Chatwoot inbox. Not connected, a form;
 * connected, its state (token masked, import, last error), the webhook URL to paste into Chatwoot, a connection test,
 * Edit and Disconnect. The API needs `webhooks:manage` for all of it, so without that only a line says so.
 */
export function IntegrationsPanel({ sessionId }: { sessionId: string }) {
  const can = useCan();
  if (!can('webhooks:manage')) {
    return (
      <Panel title="Integrations">
        <p class="muted" data-testid="integrations-not-managed">Connecting Chatwoot needs the webhooks:manage permission (an admin or owner).</p>
      </Panel>
    );
  }
  return <ChatwootPanel sessionId={sessionId} />;
}

/** The GET, with "not connected" (404) as `null`. */
const loadChatwoot = (sessionId: string) =>
  api.chatwoot(sessionId).then(
    (view) => ({ view }),
    (err) => {
      if (err instanceof ApiError && err.status === 404) return { view: null };
      throw err;
    },
  );

const IMPORT_LABEL: Record<ChatwootView['importState'], string> = { none: 'no import', pending: 'waiting to start', importing: 'importing', imported: 'imported' };
/** How often, and how far apart, the GET is read after a test for the delivery's outcome. */
const TEST_POLLS = 10;
const TEST_POLL_MS = 1000;

type TestOutcome = { ok: boolean; text: string };

/**
 * The connection test: the API queues a delivery to Chatwoot, and the GET is read again until the integration's
 * lastError says how it went (or TEST_POLLS reads later).
 */
function useChatwootTest(sessionId: string, view: ChatwootView | null, show: (v: ChatwootView) => void, action: Action) {
  const [outcome, setOutcome] = useState<TestOutcome | null>(null);
  const test = () =>
    action.run(async () => {
      setOutcome(null);
      const before = view?.lastError ?? null;
      await api.testChatwoot(sessionId);
      // the test is a delivery the dispatcher makes: its outcome is the integration's lastError once it has run
      let after = await api.chatwoot(sessionId);
      for (let i = 1; i < TEST_POLLS && after.lastError === before; i++) {
        await new Promise((resolve) => setTimeout(resolve, TEST_POLL_MS));
        after = await api.chatwoot(sessionId);
      }
      show(after);
      setOutcome(
        after.lastError
          ? { ok: false, text: `Chatwoot refused the test: ${after.lastError}` }
          : { ok: true, text: before ? 'The test worked: Chatwoot answered, the last error is cleared.' : 'No error from Chatwoot after the test delivery so far.' },
      );
    });
  return { outcome, setOutcome, test };
}

function ChatwootPanel({ sessionId }: { sessionId: string }) {
  const { data, setData, error, reload } = useLoad(() => loadChatwoot(sessionId), [sessionId]);
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const view = data?.view ?? null;
  const show = (v: ChatwootView | null) => setData({ view: v });
  const { outcome, setOutcome, test } = useChatwootTest(sessionId, view, show, action);

  if (error) return <Panel title="Chatwoot"><ErrorLine error={error} /></Panel>;
  if (!data) return <Panel title="Chatwoot"><p class="muted">Loading…</p></Panel>;
  if (!view) {
    return (
      <Panel title="Chatwoot">
        <p class="muted">Show this session's WhatsApp chats in a Chatwoot inbox (channel type API; created for you when the inbox id is empty); agents' replies there are sent to WhatsApp.</p>
        <ChatwootForm sessionId={sessionId} onSaved={show} />
      </Panel>
    );
  }
  return (
    <Panel
      title="Chatwoot"
      actions={
        <>
          <button class="primary" disabled={action.busy || !view.active} title={view.active ? undefined : 'inactive: activate it to test'} onClick={test}>
            {action.busy ? 'Testing…' : 'Test connection'}
          </button>
          <button onClick={() => setEditing(!editing)}>{editing ? 'Close editor' : 'Edit'}</button>
          <button
            class="danger"
            disabled={action.busy}
            onClick={() =>
              confirm(`Disconnect Chatwoot (${view.baseUrl}, inbox ${view.inboxId ?? 'not created yet'})? Nothing more is sent to it; its conversations stay in Chatwoot.`) &&
              action.run(async () => (await api.disconnectChatwoot(sessionId), setOutcome(null), setEditing(false), show(null)))
            }
          >
            Disconnect
          </button>
        </>
      }
    >
      <div data-testid="chatwoot" data-chatwoot-id={view.id} data-last-error={view.lastError ?? ''}>
        {editing ? (
          <ChatwootForm sessionId={sessionId} current={view} onSaved={(v) => (show(v), setEditing(false), setOutcome(null))} onCancel={() => setEditing(false)} />
        ) : (
          <ChatwootFacts view={view} />
        )}
        <WebhookUrl url={view.webhookUrl} />
        {outcome && <p class={outcome.ok ? 'ok' : 'error'} data-test-outcome={outcome.ok ? 'ok' : 'error'}>{outcome.text}</p>}
        <ErrorLine error={action.error} />
        {!editing && <button type="button" onClick={reload}>Refresh</button>}
      </div>
    </Panel>
  );
}

/** The integration as stored: its state, where it delivers, its options, the history import and the last error. */
function ChatwootFacts({ view }: { view: ChatwootView }) {
  return (
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <Status value={view.disabledAt ? 'disabled' : view.active ? 'active' : 'paused'} />
          {view.disabledAt && <span class="muted"> since <When at={view.disabledAt} /></span>}
        </dd>
        <dt>Chatwoot</dt><dd class="mono">{view.baseUrl}</dd>
        <dt>Account · inbox</dt><dd>account {view.accountId} · {view.inboxId === null ? <span class="muted">inbox created for you with the first message</span> : <>inbox {view.inboxId}</>}</dd>
        <dt>Access token</dt><dd class="mono" data-token>{view.apiAccessToken}</dd>
        <dt>Options</dt>
        <dd>{[view.groups ? 'groups too' : 'no groups', view.signMessages ? 'replies signed with the agent\'s name' : 'replies unsigned'].join(' · ')}</dd>
        <dt>History import</dt>
        <dd data-import-state={view.importState}>
          {IMPORT_LABEL[view.importState]}
          {view.importDays > 0 && <span class="muted"> · last {plural(view.importDays, 'day')} · {plural(view.importedMessages, 'message')} shown</span>}
        </dd>
        <dt>Last error</dt>
        <dd data-testid="chatwoot-last-error">
          {view.lastError ? (
            <>
              <span class="error">{view.lastError}</span>
              {view.failingSince && <span class="muted"> · failing since <When at={view.failingSince} /></span>}
            </>
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
      </dl>
  );
}

/** The URL Chatwoot calls with agents' replies (it carries the integration's secret), with Copy. */
function WebhookUrl({ url }: { url: string }) {
  return (
    <div class="shown-once" data-testid="chatwoot-webhook-url">
      <p>
        <strong>Webhook URL</strong> — paste it in Chatwoot under <em>Settings → Inboxes → this inbox → Configuration → Webhook URL</em> and save, so agents'
        replies reach WhatsApp (an inbox created for you has it already).
      </p>
      <input class="mono" readOnly value={url} name="chatwootWebhookUrl" onFocus={(e) => e.currentTarget.select()} aria-label="Chatwoot webhook URL" />
      <div class="actions">
        <CopyButton value={url} />
      </div>
    </div>
  );
}

/** The form's fields as typed (numbers as text). */
function chatwootFormOf(current: ChatwootView | undefined) {
  return {
    baseUrl: current?.baseUrl ?? '',
    accountId: current ? String(current.accountId) : '',
    apiAccessToken: '',
    inboxId: current?.inboxId != null ? String(current.inboxId) : '',
    groups: current?.groups ?? false,
    signMessages: current?.signMessages ?? false,
    importDays: String(current?.importDays ?? 0),
    active: current?.active ?? true,
  };
}
type ChatwootFormFields = ReturnType<typeof chatwootFormOf>;

/** A number as typed: digits as a number, anything else as the text (the API's 422 names it), empty left out. */
const typedNumber = (text: string) => (text.trim() === '' ? undefined : /^\d+$/.test(text.trim()) ? Number(text.trim()) : (text.trim() as unknown as number));

/** The PUT's body: an empty token is left out, so an edit keeps the stored one. */
function chatwootBodyOf(form: ChatwootFormFields): ChatwootInput {
  return {
    baseUrl: form.baseUrl.trim(),
    accountId: typedNumber(form.accountId),
    ...(form.apiAccessToken.trim() ? { apiAccessToken: form.apiAccessToken.trim() } : {}),
    inboxId: typedNumber(form.inboxId),
    groups: form.groups,
    signMessages: form.signMessages,
    importDays: typedNumber(form.importDays),
    active: form.active,
  } as ChatwootInput;
}

/**
 * Connect (no `current`) or edit. The form checks nothing itself: the API validates and its 422 is shown as the
 * envelope's text. Editing, an empty token keeps the stored one (it is never shown back).
 */
function ChatwootForm({ sessionId, current, onSaved, onCancel }: { sessionId: string; current?: ChatwootView; onSaved: (v: ChatwootView) => void; onCancel?: () => void }) {
  const [form, setForm] = useState(() => chatwootFormOf(current));
  const set = <K extends keyof ChatwootFormFields>(key: K, value: ChatwootFormFields[K]) => setForm((f) => ({ ...f, [key]: value }));
  const { error, busy, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const body = chatwootBodyOf(form);
    run(async () => onSaved(await api.connectChatwoot(sessionId, body)));
  };
  const check = (key: 'groups' | 'signMessages' | 'active', label: string) => (
    <label class="check">
      <input type="checkbox" name={`chatwoot-${key}`} checked={form[key]} onChange={(e) => set(key, e.currentTarget.checked)} /> {label}
    </label>
  );

  return (
    <form class="grid-form" onSubmit={submit} noValidate aria-label={current ? 'Edit Chatwoot' : 'Connect Chatwoot'}>
      <label class="wide">Chatwoot URL <input name="chatwootBaseUrl" value={form.baseUrl} onInput={(e) => set('baseUrl', e.currentTarget.value)} placeholder="https://app.chatwoot.com" autoComplete="off" spellcheck={false} /></label>
      <label>Account id <input name="chatwootAccountId" inputMode="numeric" value={form.accountId} onInput={(e) => set('accountId', e.currentTarget.value)} placeholder="the number in /app/accounts/{id}" /></label>
      <label>Inbox id <input name="chatwootInboxId" inputMode="numeric" value={form.inboxId} onInput={(e) => set('inboxId', e.currentTarget.value)} placeholder="created for you when empty" /></label>
      <label class="wide">Access token
        <input
          name="chatwootToken"
          type="password"
          autoComplete="off"
          value={form.apiAccessToken}
          onInput={(e) => set('apiAccessToken', e.currentTarget.value)}
          placeholder={current ? `kept (${current.apiAccessToken}) unless typed anew` : 'Profile settings → Access token'}
        />
      </label>
      <label>Import history (days) <input name="chatwootImportDays" inputMode="numeric" value={form.importDays} onInput={(e) => set('importDays', e.currentTarget.value)} /></label>
      {check('groups', 'Group chats too')}
      {check('signMessages', 'Sign replies with the agent\'s name')}
      {check('active', 'Active')}
      <div class="wide">
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy}>{current ? 'Save' : 'Connect Chatwoot'}</button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  );
}
