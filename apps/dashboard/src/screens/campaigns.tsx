import { RECIPIENT_STATUSES, WEEKDAYS, type RecipientStatus, type Weekday } from '@app/contracts';
import { useEffect, useState } from 'preact/hooks';
import { api, type CampaignCreate, type CampaignView } from '../api';
import { live } from '../live';
import { useCan } from '../me';
import { go } from '../router';
import { type Action, ErrorLine, type Loaded, Panel, plural, Status, useAction, useLoad, When } from '../ui';

/**
 * Campaigns (CONTRACT 17, docs/campaigns.md): one message, its `{{variables}}` filled per recipient, sent by a session
 * paced like a person. `#/campaigns/{sessionId}` lists a session's campaigns and creates one; `…/{campaignId}` shows
 * its progress, pause/resume/cancel and each recipient's state. Creating and acting need `messages:send`.
 */

/** Counts while a campaign can still move are polled: `campaign.progress` comes at most every 10 s. */
const POLL_MS = 2000;
const settled = (c: CampaignView) => c.status === 'completed' || c.status === 'cancelled';
const done = (c: CampaignView) => c.counts.total - c.counts.pending;

const Progress = ({ campaign: c }: { campaign: CampaignView }) => (
  <div class="progress" role="progressbar" aria-valuemin={0} aria-valuemax={c.counts.total} aria-valuenow={done(c)} title={`${done(c)} of ${c.counts.total}`}>
    <span style={{ width: `${c.counts.total ? (done(c) / c.counts.total) * 100 : 0}%` }} />
  </div>
);

/** Reloads `reload` every POLL_MS while `active`, and on the socket's campaign events. */
function usePolling(reload: () => unknown, active: boolean) {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(reload, POLL_MS);
    const off = live.subscribe((e) => e.event.startsWith('campaign.') && reload());
    return () => (clearInterval(timer), off());
  }, [reload, active]);
}

export function CampaignsScreen({ sessionId, campaignId }: { sessionId?: string; campaignId?: string }) {
  const sessions = useLoad(() => api.sessions().then((p) => p.data));
  const chosen = sessionId ?? sessions.data?.[0]?.id;
  return (
    <>
      <Panel title="Campaigns">
        <ErrorLine error={sessions.error} />
        {sessions.data && !sessions.data.length && <p class="muted">No sessions yet: a campaign is sent by a session. Create one on Sessions.</p>}
        {sessions.data && sessions.data.length > 0 && (
          <label>Session
            <select name="campaignSession" value={chosen} onChange={(e) => go(`campaigns/${e.currentTarget.value}`)}>
              {sessions.data.map((s) => <option value={s.id}>{s.label} ({s.status.replace(/_/g, ' ')})</option>)}
            </select>
          </label>
        )}
      </Panel>
      {chosen && !campaignId && <SessionCampaigns sessionId={chosen} key={chosen} />}
      {chosen && campaignId && <CampaignDetail sessionId={chosen} campaignId={campaignId} key={campaignId} />}
    </>
  );
}

function SessionCampaigns({ sessionId }: { sessionId: string }) {
  const can = useCan();
  const campaigns = useLoad(() => api.campaigns(sessionId).then((p) => p.data), [sessionId]);
  usePolling(campaigns.reload, (campaigns.data ?? []).some((c) => !settled(c)));
  return (
    <>
      {can('messages:send') && (
        <Panel title="New campaign">
          <CampaignForm sessionId={sessionId} onCreated={(c) => go(`campaigns/${sessionId}/${c.id}`)} />
        </Panel>
      )}
      <Panel title="This session's campaigns" actions={<button onClick={campaigns.reload}>Refresh</button>}>
        <ErrorLine error={campaigns.error} />
        <table class="list" data-testid="campaigns">
          <thead><tr><th>Name</th><th>Status</th><th>Progress</th><th>Sent</th><th>Failed</th><th>Starts</th><th>Next send</th></tr></thead>
          <tbody>
            {(campaigns.data ?? []).map((c) => (
              <tr key={c.id} data-campaign-id={c.id}>
                <td><a href={`#/campaigns/${sessionId}/${c.id}`}>{c.name}</a><div class="muted mono">{c.id}</div></td>
                <td><Status value={c.status} /></td>
                <td><Progress campaign={c} /><div class="muted">{done(c)} of {plural(c.counts.total, 'recipient')}</div></td>
                <td>{c.counts.sent + c.counts.delivered + c.counts.read}</td>
                <td>{c.counts.failed}</td>
                <td><When at={c.startAt} /></td>
                <td><When at={c.nextSendAt} /></td>
              </tr>
            ))}
            {campaigns.data && !campaigns.data.length && <tr><td colSpan={7} class="muted">No campaigns on this session yet.</td></tr>}
          </tbody>
        </table>
      </Panel>
    </>
  );
}

/** A list pasted or uploaded: CSV with a header row (`to` or `phone`, the other columns variables), or bare numbers one a line. */
function recipientsCsv(text: string): string {
  const trimmed = text.trim();
  const first = trimmed.split(/\r?\n/, 1)[0] ?? '';
  return /^[\d+\s()-]+$/.test(first) ? `to\n${trimmed}` : trimmed;
}

const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

const newCampaignForm = () => ({
  name: '',
  text: '',
  recipients: '',
  startAt: '',
  windowOn: false,
  days: ['mon', 'tue', 'wed', 'thu', 'fri'] as Weekday[],
  from: '09:00',
  to: '18:00',
  timeZone: localZone(),
  minDelay: '20',
  maxDelay: '60',
  typing: true,
  perHour: '',
  perDay: '',
  warmStart: '',
  warmGrowth: '',
  skipNotOnWhatsApp: true,
});
type CampaignFormFields = ReturnType<typeof newCampaignForm>;
type SetCampaignField = <K extends keyof CampaignFormFields>(key: K, value: CampaignFormFields[K]) => void;

function campaignBodyOf(f: CampaignFormFields): CampaignCreate {
  const num = (v: string) => (v.trim() === '' ? undefined : Number(v));
  const body: CampaignCreate = {
    name: f.name.trim(),
    message: { type: 'text', text: f.text },
    recipientsCsv: recipientsCsv(f.recipients),
    pacing: { minDelayMs: Number(f.minDelay) * 1000, maxDelayMs: Number(f.maxDelay) * 1000, typing: f.typing, perHour: num(f.perHour) ?? null, perDay: num(f.perDay) ?? null },
    skipNotOnWhatsApp: f.skipNotOnWhatsApp,
  };
  if (f.startAt) body.startAt = new Date(f.startAt).getTime();
  if (f.windowOn) body.window = { days: f.days, from: f.from, to: f.to, timeZone: f.timeZone.trim() };
  if (f.warmStart || f.warmGrowth) body.warmup = { startPerDay: Number(f.warmStart), growthPercent: Number(f.warmGrowth || 0) };
  return body;
}

function CampaignForm({ sessionId, onCreated }: { sessionId: string; onCreated: (c: CampaignView) => void }) {
  const [f, setForm] = useState(newCampaignForm);
  const set: SetCampaignField = (key, value) => setForm((old) => ({ ...old, [key]: value }));
  const { error, busy, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const body = campaignBodyOf(f);
    run(async () => onCreated(await api.createCampaign(sessionId, body)));
  };

  return (
    <form class="grid-form" onSubmit={submit} aria-label="New campaign" noValidate>
      <label class="wide">Name <input name="campaignName" value={f.name} onInput={(e) => set('name', e.currentTarget.value)} placeholder="Spring restock" /></label>
      <label class="wide">Message (<span class="mono">{'{{column}}'}</span> is replaced per recipient)
        <textarea name="campaignText" rows={3} value={f.text} onInput={(e) => set('text', e.currentTarget.value)} placeholder="Hi {{name}}, your order {{order}} is ready" />
      </label>
      <label class="wide">Recipients: CSV with a header row (<span class="mono">to</span> or <span class="mono">phone</span>, other columns are variables), or one number a line
        <textarea name="recipientsCsv" rows={5} value={f.recipients} onInput={(e) => set('recipients', e.currentTarget.value)} placeholder={'to,name,order\n15551234567,Ana,A-17'} />
      </label>
      <label class="wide">…or upload a CSV file
        <input name="recipientsFile" type="file" accept=".csv,text/csv,text/plain" onChange={(e) => e.currentTarget.files?.[0]?.text().then((t) => set('recipients', t))} />
      </label>
      <label>Start (empty: now) <input name="startAt" type="datetime-local" value={f.startAt} onInput={(e) => set('startAt', e.currentTarget.value)} /></label>
      <label>Min delay (s) <input name="minDelay" type="number" value={f.minDelay} onInput={(e) => set('minDelay', e.currentTarget.value)} /></label>
      <label>Max delay (s) <input name="maxDelay" type="number" value={f.maxDelay} onInput={(e) => set('maxDelay', e.currentTarget.value)} /></label>
      <label class="check"><input name="typing" type="checkbox" checked={f.typing} onChange={(e) => set('typing', e.currentTarget.checked)} /> "typing…" before each</label>
      <label>At most per hour <input name="perHour" type="number" value={f.perHour} onInput={(e) => set('perHour', e.currentTarget.value)} placeholder="no cap" /></label>
      <label>At most per day <input name="perDay" type="number" value={f.perDay} onInput={(e) => set('perDay', e.currentTarget.value)} placeholder="no cap" /></label>
      <label>Warm-up: first day <input name="warmStart" type="number" value={f.warmStart} onInput={(e) => set('warmStart', e.currentTarget.value)} placeholder="off" /></label>
      <label>Warm-up: growth % a day <input name="warmGrowth" type="number" value={f.warmGrowth} onInput={(e) => set('warmGrowth', e.currentTarget.value)} placeholder="30" /></label>
      <label class="check wide"><input name="windowOn" type="checkbox" checked={f.windowOn} onChange={(e) => set('windowOn', e.currentTarget.checked)} /> only send within hours</label>
      {f.windowOn && <SendWindowFields f={f} set={set} />}
      <label class="check wide"><input name="skipNotOnWhatsApp" type="checkbox" checked={f.skipNotOnWhatsApp} onChange={(e) => set('skipNotOnWhatsApp', e.currentTarget.checked)} /> skip numbers that are not on WhatsApp</label>
      <div class="wide">
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy}>Start campaign</button>
      </div>
    </form>
  );
}

/** The days and hours a campaign may send in, in a time zone of the user's choice. */
function SendWindowFields({ f, set }: { f: CampaignFormFields; set: SetCampaignField }) {
  const { days } = f;
  return (
    <>
      <fieldset class="checks wide">
        <legend>Days</legend>
        {WEEKDAYS.map((d) => (
          <label class="check"><input type="checkbox" name="windowDay" value={d} checked={days.includes(d)} onChange={(e) => set('days', e.currentTarget.checked ? WEEKDAYS.filter((x) => x === d || days.includes(x)) : days.filter((x) => x !== d))} /> {d}</label>
        ))}
      </fieldset>
      <label>From <input name="windowFrom" type="time" value={f.from} onInput={(e) => set('from', e.currentTarget.value)} /></label>
      <label>To <input name="windowTo" type="time" value={f.to} onInput={(e) => set('to', e.currentTarget.value)} /></label>
      <label>Time zone <input name="timeZone" value={f.timeZone} onInput={(e) => set('timeZone', e.currentTarget.value)} placeholder="Asia/Jakarta" /></label>
    </>
  );
}

function CampaignDetail({ sessionId, campaignId }: { sessionId: string; campaignId: string }) {
  const campaign = useLoad(() => api.campaign(sessionId, campaignId), [sessionId, campaignId]);
  const [filter, setFilter] = useState<RecipientStatus | ''>('');
  const recipients = useLoad(() => api.campaignRecipients(sessionId, campaignId, filter || undefined), [sessionId, campaignId, filter]);
  usePolling(campaign.reload, !!campaign.data && !settled(campaign.data));
  // the recipients are read again whenever the campaign's counts or status move (the last time after it settled)
  const progress = campaign.data ? `${campaign.data.status}:${JSON.stringify(campaign.data.counts)}` : '';
  useEffect(() => void (progress && recipients.reload()), [progress]);
  const action = useAction();
  const act = (what: 'pause' | 'resume' | 'cancel') => action.run(async () => (campaign.setData(await api.campaignAction(sessionId, campaignId, what)), await recipients.reload()));

  const c = campaign.data;
  if (campaign.error) return <ErrorLine error={campaign.error} />;
  if (!c) return <p class="muted">Loading…</p>;
  return (
    <>
      <p><a href={`#/campaigns/${sessionId}`}>← Campaigns of this session</a></p>
      <CampaignPanel campaign={c} action={action} act={act} />
      <RecipientsPanel recipients={recipients} filter={filter} setFilter={setFilter} />
    </>
  );
}

/** A campaign's status, progress and counts, its settings, and Pause, Resume and Cancel while it runs. */
function CampaignPanel({ campaign: c, action, act }: { campaign: CampaignView; action: Action; act: (what: 'pause' | 'resume' | 'cancel') => void }) {
  const can = useCan();
  const counts = Object.entries(c.counts).filter(([k]) => k !== 'total');
  return (
    <Panel
      title={c.name}
      actions={
        can('messages:send') && !settled(c) && (
          <>
            {c.status === 'paused' ? <button class="primary" disabled={action.busy} onClick={() => act('resume')}>Resume</button> : <button disabled={action.busy} onClick={() => act('pause')}>Pause</button>}
            <button class="danger" disabled={action.busy} onClick={() => confirm(`Cancel "${c.name}"? Recipients not reached yet get nothing.`) && act('cancel')}>Cancel campaign</button>
          </>
        )
      }
    >
      <ErrorLine error={action.error} />
      <div data-testid="campaign" data-campaign-status={c.status} data-total={c.counts.total} data-done={done(c)}>
        <Status value={c.status} /> <span class="muted">{done(c)} of {plural(c.counts.total, 'recipient')} done</span>
        <Progress campaign={c} />
        <div class="counts">{counts.map(([k, v]) => <span data-count={k}>{k} <strong>{v}</strong></span>)}</div>
      </div>
      <dl class="facts">
        <dt>Id</dt><dd class="mono">{c.id}</dd>
        <dt>Starts</dt><dd><When at={c.startAt} /></dd>
        <dt>Next send</dt><dd><When at={c.nextSendAt} /></dd>
        <dt>Completed</dt><dd><When at={c.completedAt} /></dd>
        <dt>Pacing</dt><dd>{c.pacing.minDelayMs / 1000}–{c.pacing.maxDelayMs / 1000} s{c.pacing.typing ? ', typing' : ''}{c.pacing.perHour ? `, ≤ ${c.pacing.perHour}/h` : ''}{c.pacing.perDay ? `, ≤ ${c.pacing.perDay}/day` : ''}</dd>
        <dt>Window</dt><dd>{c.window ? `${c.window.days.join(' ')} ${c.window.from}–${c.window.to} ${c.window.timeZone}` : 'any time'}</dd>
        <dt>Warm-up</dt><dd>{c.warmup ? `${c.warmup.startPerDay} a day, +${c.warmup.growthPercent}% a day` : 'none'}</dd>
      </dl>
    </Panel>
  );
}

type RecipientsPage = Awaited<ReturnType<typeof api.campaignRecipients>>;

/** A campaign's recipients, filtered by status: each one's message, error and last change. */
function RecipientsPanel({ recipients, filter, setFilter }: { recipients: Loaded<RecipientsPage>; filter: RecipientStatus | ''; setFilter: (s: RecipientStatus | '') => void }) {
  return (
    <Panel
      title="Recipients"
      actions={
        <label>Status
          <select name="recipientStatus" value={filter} onChange={(e) => setFilter(e.currentTarget.value as RecipientStatus | '')}>
            <option value="">all</option>
            {RECIPIENT_STATUSES.map((s) => <option value={s}>{s}</option>)}
          </select>
        </label>
      }
    >
      <ErrorLine error={recipients.error} />
      <table class="list" data-testid="recipients">
        <thead><tr><th>#</th><th>To</th><th>Status</th><th>Message</th><th>Error</th><th>Updated</th></tr></thead>
        <tbody>
          {(recipients.data?.data ?? []).map((r) => (
            <tr key={r.position} data-recipient={r.to} data-recipient-status={r.status}>
              <td>{r.position + 1}</td>
              <td class="mono">{r.to}</td>
              <td><Status value={r.status} /></td>
              <td class="mono">{r.messageId ?? ''}</td>
              <td>{r.error ?? ''}</td>
              <td><When at={r.updatedAt} /></td>
            </tr>
          ))}
          {recipients.data && !recipients.data.data.length && <tr><td colSpan={6} class="muted">{filter ? `No recipient is ${filter}.` : 'No recipients.'}</td></tr>}
        </tbody>
      </table>
      {recipients.data?.nextCursor && <p class="muted">The first 100 shown; filter by status to see the others.</p>}
    </Panel>
  );
}
