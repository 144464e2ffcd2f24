import { RECIPIENT_STATUSES, WEEKDAYS, type RecipientStatus, type Weekday } from '@app/contracts';
import { useEffect, useState } from 'preact/hooks';
import { api, type CampaignCreate, type CampaignView } from '../api';
import { live } from '../live';
import { useCan } from '../me';
import { go } from '../router';
import { ErrorLine, Panel, plural, Status, useAction, useLoad, When } from '../ui';

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

function CampaignForm({ sessionId, onCreated }: { sessionId: string; onCreated: (c: CampaignView) => void }) {
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const [recipients, setRecipients] = useState('');
  const [startAt, setStartAt] = useState('');
  const [windowOn, setWindowOn] = useState(false);
  const [days, setDays] = useState<Weekday[]>(['mon', 'tue', 'wed', 'thu', 'fri']);
  const [from, setFrom] = useState('09:00');
  const [to, setTo] = useState('18:00');
  const [timeZone, setTimeZone] = useState(localZone());
  const [minDelay, setMinDelay] = useState('20');
  const [maxDelay, setMaxDelay] = useState('60');
  const [typing, setTyping] = useState(true);
  const [perHour, setPerHour] = useState('');
  const [perDay, setPerDay] = useState('');
  const [warmStart, setWarmStart] = useState('');
  const [warmGrowth, setWarmGrowth] = useState('');
  const [skipNotOnWhatsApp, setSkip] = useState(true);
  const { error, busy, run } = useAction();
  const num = (v: string) => (v.trim() === '' ? undefined : Number(v));

  const submit = (e: Event) => {
    e.preventDefault();
    const body: CampaignCreate = {
      name: name.trim(),
      message: { type: 'text', text },
      recipientsCsv: recipientsCsv(recipients),
      pacing: { minDelayMs: Number(minDelay) * 1000, maxDelayMs: Number(maxDelay) * 1000, typing, perHour: num(perHour) ?? null, perDay: num(perDay) ?? null },
      skipNotOnWhatsApp,
    };
    if (startAt) body.startAt = new Date(startAt).getTime();
    if (windowOn) body.window = { days, from, to, timeZone: timeZone.trim() };
    if (warmStart || warmGrowth) body.warmup = { startPerDay: Number(warmStart), growthPercent: Number(warmGrowth || 0) };
    run(async () => onCreated(await api.createCampaign(sessionId, body)));
  };

  return (
    <form class="grid-form" onSubmit={submit} aria-label="New campaign" noValidate>
      <label class="wide">Name <input name="campaignName" value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="Spring restock" /></label>
      <label class="wide">Message (<span class="mono">{'{{column}}'}</span> is replaced per recipient)
        <textarea name="campaignText" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="Hi {{name}}, your order {{order}} is ready" />
      </label>
      <label class="wide">Recipients: CSV with a header row (<span class="mono">to</span> or <span class="mono">phone</span>, other columns are variables), or one number a line
        <textarea name="recipientsCsv" rows={5} value={recipients} onInput={(e) => setRecipients(e.currentTarget.value)} placeholder={'to,name,order\n15551234567,Ana,A-17'} />
      </label>
      <label class="wide">…or upload a CSV file
        <input name="recipientsFile" type="file" accept=".csv,text/csv,text/plain" onChange={(e) => e.currentTarget.files?.[0]?.text().then(setRecipients)} />
      </label>
      <label>Start (empty: now) <input name="startAt" type="datetime-local" value={startAt} onInput={(e) => setStartAt(e.currentTarget.value)} /></label>
      <label>Min delay (s) <input name="minDelay" type="number" value={minDelay} onInput={(e) => setMinDelay(e.currentTarget.value)} /></label>
      <label>Max delay (s) <input name="maxDelay" type="number" value={maxDelay} onInput={(e) => setMaxDelay(e.currentTarget.value)} /></label>
      <label class="check"><input name="typing" type="checkbox" checked={typing} onChange={(e) => setTyping(e.currentTarget.checked)} /> "typing…" before each</label>
      <label>At most per hour <input name="perHour" type="number" value={perHour} onInput={(e) => setPerHour(e.currentTarget.value)} placeholder="no cap" /></label>
      <label>At most per day <input name="perDay" type="number" value={perDay} onInput={(e) => setPerDay(e.currentTarget.value)} placeholder="no cap" /></label>
      <label>Warm-up: first day <input name="warmStart" type="number" value={warmStart} onInput={(e) => setWarmStart(e.currentTarget.value)} placeholder="off" /></label>
      <label>Warm-up: growth % a day <input name="warmGrowth" type="number" value={warmGrowth} onInput={(e) => setWarmGrowth(e.currentTarget.value)} placeholder="30" /></label>
      <label class="check wide"><input name="windowOn" type="checkbox" checked={windowOn} onChange={(e) => setWindowOn(e.currentTarget.checked)} /> only send within hours</label>
      {windowOn && (
        <>
          <fieldset class="checks wide">
            <legend>Days</legend>
            {WEEKDAYS.map((d) => (
              <label class="check"><input type="checkbox" name="windowDay" value={d} checked={days.includes(d)} onChange={(e) => setDays(e.currentTarget.checked ? WEEKDAYS.filter((x) => x === d || days.includes(x)) : days.filter((x) => x !== d))} /> {d}</label>
            ))}
          </fieldset>
          <label>From <input name="windowFrom" type="time" value={from} onInput={(e) => setFrom(e.currentTarget.value)} /></label>
          <label>To <input name="windowTo" type="time" value={to} onInput={(e) => setTo(e.currentTarget.value)} /></label>
          <label>Time zone <input name="timeZone" value={timeZone} onInput={(e) => setTimeZone(e.currentTarget.value)} placeholder="Asia/Jakarta" /></label>
        </>
      )}
      <label class="check wide"><input name="skipNotOnWhatsApp" type="checkbox" checked={skipNotOnWhatsApp} onChange={(e) => setSkip(e.currentTarget.checked)} /> skip numbers that are not on WhatsApp</label>
      <div class="wide">
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy}>Start campaign</button>
      </div>
    </form>
  );
}

function CampaignDetail({ sessionId, campaignId }: { sessionId: string; campaignId: string }) {
  const can = useCan();
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
  const counts = Object.entries(c.counts).filter(([k]) => k !== 'total');
  return (
    <>
      <p><a href={`#/campaigns/${sessionId}`}>← Campaigns of this session</a></p>
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
    </>
  );
}
