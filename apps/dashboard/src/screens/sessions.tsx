import { useEffect, useState } from 'preact/hooks';
import { SYNC_HISTORY_MODES } from '@app/contracts';
import { ApiError, api, type MessageView, type SessionPatch, type SessionView } from '../api';
import { live } from '../live';
import { go } from '../router';
import { ActionForm, ErrorLine, type Loaded, Panel, plural, Status, useAction, useLoad, When } from '../ui';
import { Reason } from '../reasons';
import { IntegrationsPanel } from './integrations';
import { Pairing } from './pairing';

type SessionAction = 'start' | 'stop' | 'restart' | 'logout';

/** Keeps a session (or a list of them) current from `session.*` events on the live socket. */
function useLiveSessions(update: (id: string, status?: string) => void) {
  useEffect(
    () =>
      live.subscribe((e) => {
        if (!e.sessionId || !e.event.startsWith('session.')) return;
        update(e.sessionId, e.event === 'session.status' ? String((e.payload as { status?: string }).status) : undefined);
      }),
    [],
  );
}

function SessionActions({ session, onChange, onDeleted }: { session: SessionView; onChange: (s: SessionView) => void; onDeleted: () => void }) {
  const { error, busy, run } = useAction();
  const act = (action: SessionAction) => run(async () => onChange(await api.sessionAction(session.id, action)));
  const stopped = ['stopped', 'failed', 'logged_out'].includes(session.status);
  return (
    <div class="actions">
      {stopped ? <button disabled={busy} onClick={() => act('start')}>Start</button> : <button disabled={busy} onClick={() => act('stop')}>Stop</button>}
      <button disabled={busy} onClick={() => act('restart')}>Restart</button>
      <button disabled={busy} onClick={() => confirm(`Log "${session.label}" out of WhatsApp? It will need a new scan.`) && act('logout')}>Logout</button>
      <button
        class="danger"
        disabled={busy}
        onClick={() => confirm(`Delete "${session.label}" and its credentials?`) && run(async () => (await api.deleteSession(session.id), onDeleted()))}
      >
        Delete
      </button>
      <ErrorLine error={error} />
    </div>
  );
}

export function SessionsScreen() {
  const { data, setData, error, reload } = useLoad(() => api.sessions().then((p) => p.data));
  const [label, setLabel] = useState('');
  const [pairingId, setPairingId] = useState<string | null>(null);
  const create = useAction();
  const sessions = data ?? [];

  const replace = (s: SessionView) => setData((list) => (list ?? []).map((x) => (x.id === s.id ? s : x)));
  useLiveSessions((id, status) => {
    setData((list) => {
      if (!list?.some((s) => s.id === id)) {
        reload();
        return list;
      }
      return status ? list.map((s) => (s.id === id ? { ...s, status: status as SessionView['status'] } : s)) : list;
    });
    // the event carries the status only; the row's phone number and times come from the API
    api.session(id).then(replace, () => undefined);
  });
  const pairing = sessions.find((s) => s.id === pairingId);

  return (
    <>
      <Panel title="New session">
        <ActionForm
          action={create}
          submit={async () => {
            const s = await api.createSession(label.trim());
            // where the API lists it (oldest first), so a reload does not move it
            setData((list) => [...(list ?? []).filter((x) => x.id !== s.id), s]);
            setPairingId(s.id);
            setLabel('');
          }}
        >
          <label>Label <input name="label" required maxLength={100} value={label} onInput={(e) => setLabel(e.currentTarget.value)} placeholder="Support line" /></label>
          <button type="submit" class="primary" disabled={create.busy}>Create session</button>
        </ActionForm>
        {pairing && (
          <div class="pairing-box">
            <h3>
              Pair “{pairing.label}” <Status value={pairing.status} />
            </h3>
            <Pairing session={pairing} />
          </div>
        )}
      </Panel>
      <SessionsPanel sessions={sessions} loaded={data !== null} error={error} reload={reload} pairingId={pairingId} pair={setPairingId} replace={replace} setData={setData} />
    </>
  );
}

/** Every session of the organization: status and why, phone, gateway, last connection, and its actions. */
function SessionsPanel({ sessions, loaded, error, reload, pairingId, pair, replace, setData }: {
  sessions: SessionView[];
  loaded: boolean;
  error: string | null;
  reload: () => void;
  pairingId: string | null;
  pair: (id: string) => void;
  replace: (s: SessionView) => void;
  setData: Loaded<SessionView[]>['setData'];
}) {
  return (
    <Panel title="Sessions" actions={<button onClick={reload}>Refresh</button>}>
      <ErrorLine error={error} />
      <table class="list" data-testid="sessions">
        <thead>
          <tr><th>Label</th><th>Status</th><th>Phone</th><th>Gateway</th><th>Last connected</th><th /></tr>
        </thead>
        <tbody>
          {sessions.map((s) => (
            <tr data-session-id={s.id} key={s.id}>
              <td><a href={`#/sessions/${s.id}`}>{s.label}</a><div class="muted mono">{s.id}</div></td>
              <td><Status value={s.status} /><Reason session={s} compact /></td>
              <td>{s.phoneNumber ? `+${s.phoneNumber}` : <span class="muted">—</span>}</td>
              <td class="mono">{s.gatewayId ?? '—'}</td>
              <td><When at={s.lastConnectedAt} /></td>
              <td>
                {s.status === 'scan_qr_code' && s.id !== pairingId && <button onClick={() => pair(s.id)}>Show QR</button>}
                <SessionActions session={s} onChange={replace} onDeleted={() => setData((l) => (l ?? []).filter((x) => x.id !== s.id))} />
              </td>
            </tr>
          ))}
          {loaded && !sessions.length && <tr><td colSpan={6} class="muted">No sessions yet: create one above.</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}

export function SessionDetail({ id }: { id: string }) {
  const { data: session, setData, error, reload } = useLoad(() => api.session(id), [id]);
  useLiveSessions((sid) => sid === id && reload());
  if (error) return <ErrorLine error={error} />;
  if (!session) return <p class="muted">Loading…</p>;
  return (
    <>
      <p><a href="#/sessions">← Sessions</a></p>
      <Panel
        title={session.label}
        actions={
          <>
            <a class="button" href={`#/sessions/${encodeURIComponent(session.id)}/inbox`} data-inbox-link>Inbox</a>
            <SessionActions session={session} onChange={setData} onDeleted={() => go('sessions')} />
          </>
        }
      >
        <dl class="facts">
          <dt>Status</dt><dd><Status value={session.status} /><Reason session={session} /></dd>
          <dt>Id</dt><dd class="mono">{session.id}</dd>
          <dt>Phone</dt><dd>{session.phoneNumber ? `+${session.phoneNumber}` : '—'}</dd>
          <dt>JID</dt><dd class="mono">{session.waJid ?? '—'}</dd>
          <dt>Gateway</dt><dd class="mono">{session.gatewayId ?? '—'}</dd>
          <dt>Created</dt><dd><When at={session.createdAt} /></dd>
          <dt>Last connected</dt><dd><When at={session.lastConnectedAt} /></dd>
        </dl>
        {session.status !== 'working' && <Pairing session={session} />}
      </Panel>
      <SessionSettings session={session} onSaved={setData} />
      <IntegrationsPanel sessionId={id} />
      {session.status === 'working' && <SendMessage sessionId={id} />}
      {session.status === 'working' && <Groups sessionId={id} />}
      {session.status === 'working' && <StatusComposer sessionId={id} />}
    </>
  );
}

function SendMessage({ sessionId }: { sessionId: string }) {
  const { data, setData, reload } = useLoad(() => api.messages(sessionId).then((p) => p.data), [sessionId]);
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const send = useAction();
  useEffect(() => live.subscribe((e) => e.sessionId === sessionId && e.event.startsWith('message.') && reload()), [sessionId]);
  return (
    <Panel title="Messages">
      <ActionForm
        action={send}
        submit={async () => {
          const m = await api.sendText(sessionId, to.trim(), text);
          setData((list) => [m, ...(list ?? [])]);
          setText('');
        }}
      >
        <label>To <input name="to" placeholder="15551234567" required value={to} onInput={(e) => setTo(e.currentTarget.value)} /></label>
        <label class="grow">Text <input name="text" required maxLength={4096} value={text} onInput={(e) => setText(e.currentTarget.value)} /></label>
        <button type="submit" class="primary" disabled={send.busy}>Send</button>
      </ActionForm>
      <table class="list">
        <thead><tr><th /><th>Chat</th><th>Type</th><th>Content</th><th>Status</th><th>At</th></tr></thead>
        <tbody>
          {(data ?? []).map((m: MessageView) => (
            <tr key={m.id} data-message-id={m.id}>
              <td>{m.direction === 'out' ? '→' : '←'}</td>
              <td class="mono">{m.chatJid}</td>
              <td>{m.type}</td>
              <td>
                {m.text ?? m.media?.caption ?? (m.location ? `${m.location.latitude}, ${m.location.longitude}` : '')}
                {m.media && m.direction === 'in' && <MediaLink message={m} />}
              </td>
              <td><Status value={m.status} /></td>
              <td><When at={m.createdAt} /></td>
            </tr>
          ))}
          {data && !data.length && <tr><td colSpan={6} class="muted">No messages yet: send one above, or wait for a contact to write.</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}

/**
 * Opens an inbound message's media in a new tab. The download needs the bearer token, so the bytes are fetched here
 * and shown as an object URL (the tab is opened first, inside the click, so no popup blocker stops it).
 */
function MediaLink({ message: m }: { message: MessageView }) {
  const action = useAction();
  const [url, setUrl] = useState<string | null>(null);
  // fetched once, kept for the next click, revoked when the row goes
  useEffect(() => () => void (url && URL.revokeObjectURL(url)), [url]);
  const open = () => {
    const tab = window.open('', '_blank');
    action.run(async () => {
      try {
        const objectUrl = url ?? URL.createObjectURL(await api.media(m.sessionId, m.id));
        setUrl(objectUrl);
        if (tab) tab.location.href = objectUrl;
        else location.href = objectUrl;
      } catch (err) {
        tab?.close();
        throw err;
      }
    });
  };
  const media = m.media!;
  return (
    <div class="media" data-media-of={m.id}>
      <a href={`#/sessions/${m.sessionId}`} data-media-url={url ?? undefined} onClick={(e) => (e.preventDefault(), open())}>
        {media.filename ?? `${m.type} (${media.mimetype})`}
      </a>
      {media.size !== null && <span class="muted"> · {formatBytes(media.size)}</span>}
      <ErrorLine error={action.error} />
    </div>
  );
}

function formatBytes(n: number): string {
  if (n < 1024) return plural(n, 'byte');
  return n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} kB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function Groups({ sessionId }: { sessionId: string }) {
  const { data, error, reload } = useLoad(() => api.groups(sessionId).then((p) => p.data), [sessionId]);
  const [name, setName] = useState('');
  const [participants, setParticipants] = useState('');
  const create = useAction();
  return (
    <Panel title="Groups" actions={<button onClick={reload}>Refresh</button>}>
      <ErrorLine error={error} />
      <ActionForm
        action={create}
        submit={async () => {
          await api.createGroup(sessionId, name.trim(), participants.split(/[\s,]+/).filter(Boolean));
          setName('');
          setParticipants('');
          await reload();
        }}
      >
        <label>Name <input name="groupName" required value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        <label class="grow">Participants <input name="participants" placeholder="15551234567, 15557654321" value={participants} onInput={(e) => setParticipants(e.currentTarget.value)} /></label>
        <button type="submit" disabled={create.busy}>Create group</button>
      </ActionForm>
      <table class="list">
        <thead><tr><th>Subject</th><th>JID</th><th>Participants</th><th>Settings</th></tr></thead>
        <tbody>
          {(data ?? []).map((g) => (
            <tr key={g.groupJid}>
              <td><a href={`#/sessions/${encodeURIComponent(sessionId)}/groups/${encodeURIComponent(g.groupJid)}`}>{g.subject}</a></td>
              <td class="mono">{g.groupJid}</td>
              <td>{plural(g.participants, 'participant')}</td>
              <td>{[g.isAnnounce && 'announce', g.isLocked && 'locked'].filter(Boolean).join(', ') || '—'}</td>
            </tr>
          ))}
          {data && !data.length && <tr><td colSpan={4} class="muted">No groups yet: create one above.</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}

/** Posts a status (story) to an audience; without one, to every contact of the session (CONTRACT 13). */
function StatusComposer({ sessionId }: { sessionId: string }) {
  const [text, setText] = useState('');
  const [color, setColor] = useState('#1f7a5a');
  const [audience, setAudience] = useState('');
  const [posted, setPosted] = useState<string | null>(null);
  const post = useAction();
  return (
    <Panel title="Status">
      <ActionForm
        action={post}
        submit={async () => {
          const to = audience.split(/[\s,]+/).filter(Boolean);
          const m = await api.postStatus(sessionId, { type: 'text', text, backgroundColor: color, ...(to.length ? { audience: to } : {}) });
          setPosted(m.id);
          setText('');
        }}
      >
        <label class="grow">Text <input name="statusText" required maxLength={700} value={text} onInput={(e) => setText(e.currentTarget.value)} /></label>
        <label>Background <input name="statusColor" type="color" value={color} onInput={(e) => setColor(e.currentTarget.value)} /></label>
        <label class="grow">Audience <input name="audience" placeholder="all contacts, or 15551234567, …" value={audience} onInput={(e) => setAudience(e.currentTarget.value)} /></label>
        <button type="submit" disabled={post.busy}>Post status</button>
      </ActionForm>
      {posted && <p class="ok" data-status-posted={posted}>Status accepted ({posted}): it goes out at the session's send rate.</p>}
    </Panel>
  );
}

type SyncHistory = (typeof SYNC_HISTORY_MODES)[number];

/**
 * The session's settings (`PATCH /sessions/{id}`). The form checks nothing itself: the API validates, and its 422
 * names each refused field, shown under that field. Only changed fields are sent; the proxy is shown masked, so it
 * is sent only when typed anew (empty: connect directly).
 */
function settingsFormOf(session: SessionView) {
  return {
    autoRead: session.autoRead,
    rejectCalls: session.rejectCalls,
    presenceTyping: session.presenceTyping,
    receiveStatus: session.receiveStatus,
    syncHistory: session.syncHistory as SyncHistory,
    ratePerMin: String(session.ratePerMin),
    ratePerHour: String(session.ratePerHour),
    proxyUrl: session.proxyUrl ?? '',
  };
}
type SettingsForm = ReturnType<typeof settingsFormOf>;

/** The fields the form changed from `was` (numbers as typed: the API's 422 names what is not one). */
function settingsPatchOf(form: SettingsForm, was: SettingsForm): SessionPatch {
  const number = (text: string) => (text.trim() === '' ? (text as unknown as number) : Number(text));
  const patch: SessionPatch = {};
  for (const key of ['autoRead', 'rejectCalls', 'presenceTyping', 'receiveStatus', 'syncHistory'] as const) {
    if (form[key] !== was[key]) (patch as Record<string, unknown>)[key] = form[key];
  }
  if (form.ratePerMin !== was.ratePerMin) patch.ratePerMin = number(form.ratePerMin);
  if (form.ratePerHour !== was.ratePerHour) patch.ratePerHour = number(form.ratePerHour);
  if (form.proxyUrl !== was.proxyUrl) patch.proxyUrl = form.proxyUrl.trim() || null;
  return patch;
}

/** Saves a patch of the settings; a 422's messages are kept by field, for each field to show its own. */
function useSettingsSave(sessionId: string, onSaved: (s: SessionView) => void) {
  const [fieldErrors, setFieldErrors] = useState<Record<string, string[]>>({});
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const run = (patch: SessionPatch) => {
    setFieldErrors({});
    save.run(async () => {
      try {
        onSaved(await api.updateSession(sessionId, patch));
        setSaved(true);
      } catch (err) {
        const fields = err instanceof ApiError ? err.fields() : {};
        setFieldErrors(fields);
        // the fields' own messages are under them; the line says only that nothing was saved
        throw Object.keys(fields).length ? new Error(`${(err as ApiError).message}: nothing was saved (see the fields marked).`) : err;
      }
    });
  };
  return { fieldErrors, saved, setSaved, save, run };
}

function SessionSettings({ session, onSaved }: { session: SessionView; onSaved: (s: SessionView) => void }) {
  const initial = () => settingsFormOf(session);
  const [form, setForm] = useState(initial);
  const { fieldErrors, saved, setSaved, save, run } = useSettingsSave(session.id, onSaved);
  useEffect(() => setForm(initial()), [session.updatedAt]);
  const set = <K extends keyof SettingsForm>(key: K, value: SettingsForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }));
    setSaved(false);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    run(settingsPatchOf(form, initial()));
  };
  const errorOf = (field: string) =>
    fieldErrors[field] ? <span class="field-error" role="alert" data-field-error={field}>{fieldErrors[field].join(', ')}</span> : null;
  const check = (key: 'autoRead' | 'rejectCalls' | 'presenceTyping' | 'receiveStatus', label: string, hint: string) => (
    <label class="check" title={hint}>
      <input type="checkbox" name={key} checked={form[key]} onChange={(e) => set(key, e.currentTarget.checked)} /> {label}
      {errorOf(key)}
    </label>
  );

  return (
    <Panel title="Settings">
      <form class="grid-form settings" onSubmit={submit} noValidate aria-label="Session settings" data-settings={session.id}>
        {check('autoRead', 'Mark received messages read', 'read receipts go to the contact as soon as a message arrives')}
        {check('rejectCalls', 'Reject incoming calls', 'call.incoming still fires, with rejected: true')}
        {check('presenceTyping', 'Show “typing…” before each text', 'the contact sees typing for a moment before the message')}
        {check('receiveStatus', 'Receive contacts’ statuses', 'as status.received events')}
        <label>History on pairing
          <select name="syncHistory" value={form.syncHistory} onChange={(e) => set('syncHistory', e.currentTarget.value as SyncHistory)}>
            {SYNC_HISTORY_MODES.map((m) => <option value={m}>{m}</option>)}
          </select>
          {errorOf('syncHistory')}
        </label>
        <label>Sends per minute <input name="ratePerMin" inputMode="numeric" value={form.ratePerMin} onInput={(e) => set('ratePerMin', e.currentTarget.value)} />{errorOf('ratePerMin')}</label>
        <label>Sends per hour <input name="ratePerHour" inputMode="numeric" value={form.ratePerHour} onInput={(e) => set('ratePerHour', e.currentTarget.value)} />{errorOf('ratePerHour')}</label>
        <label class="wide">Proxy <input name="proxyUrl" value={form.proxyUrl} onInput={(e) => set('proxyUrl', e.currentTarget.value)} placeholder="none: direct; socks5://user:password@host:1080 or http://host:3128" />{errorOf('proxyUrl')}</label>
        <div class="wide">
          <ErrorLine error={save.error} />
          <button type="submit" class="primary" disabled={save.busy}>Save settings</button>
          {saved && <span class="ok" data-settings-saved> Saved.</span>}
        </div>
      </form>
    </Panel>
  );
}
