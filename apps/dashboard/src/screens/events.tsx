import { EVENT_TYPES } from '@app/contracts';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EventEnvelope } from '../api';
import { live } from '../live';
import { Panel, plural, When } from '../ui';

const KEEP = 500;

/** Kept from sign-in on (not from when the screen opens), so the monitor shows what just happened. */
let recent: EventEnvelope[] = [];
live.subscribe((e) => (recent = [e, ...recent].slice(0, KEEP)));
live.onState((s) => s === 'closed' && !live.wanted() && (recent = []));

/** Every event of the organization as the WebSocket delivers it, newest first, filtered in the browser. */
export function EventMonitor() {
  const [events, setEvents] = useState<EventEnvelope[]>(recent);
  const [type, setType] = useState('');
  const [sessionId, setSessionId] = useState('');
  const [text, setText] = useState('');
  const [paused, setPaused] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;

  // the module's subscriber runs first (registered at import), so `recent` already holds the event
  useEffect(() => live.subscribe(() => !pausedRef.current && setEvents(recent)), []);

  const shown = events.filter(
    (e) =>
      (!type || e.event === type || (type.endsWith('.*') && e.event.startsWith(type.slice(0, -1)))) &&
      (!sessionId || e.sessionId === sessionId.trim()) &&
      (!text || JSON.stringify(e.payload).toLowerCase().includes(text.toLowerCase())),
  );
  const families = [...new Set(EVENT_TYPES.map((t) => `${t.split('.')[0]}.*`))];

  return (
    <Panel
      title="Live events"
      actions={
        <>
          <button onClick={() => (paused && setEvents(recent), setPaused(!paused))}>{paused ? 'Resume' : 'Pause'}</button>
          <button onClick={() => setEvents((recent = []))}>Clear</button>
        </>
      }
    >
      <form class="inline" onSubmit={(e) => e.preventDefault()}>
        <label>Type
          <select name="type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            <option value="">every type</option>
            {families.map((f) => <option value={f}>{f}</option>)}
            {EVENT_TYPES.map((t) => <option value={t}>{t}</option>)}
          </select>
        </label>
        <label>Session <input name="sessionId" value={sessionId} placeholder="ses_…" onInput={(e) => setSessionId(e.currentTarget.value)} /></label>
        <label class="grow">Payload contains <input name="text" value={text} onInput={(e) => setText(e.currentTarget.value)} /></label>
      </form>
      <p class="muted">{shown.length} of {plural(events.length, 'event')} since you signed in{paused ? ' (paused)' : ''}; the socket is live-only.</p>
      <table class="list" data-testid="events">
        <thead><tr><th>Time</th><th>Event</th><th>Session</th><th>Payload</th></tr></thead>
        <tbody>
          {shown.map((e) => (
            <tr key={e.id} data-event={e.event} onClick={() => setOpen(open === e.id ? null : e.id)} class="clickable">
              <td><When at={e.timestamp} /></td>
              <td>{e.event}</td>
              <td class="mono">{e.sessionId ?? '—'}</td>
              <td class="mono snippet">{open === e.id ? <pre>{JSON.stringify(e, null, 2)}</pre> : JSON.stringify(e.payload).slice(0, 140)}</td>
            </tr>
          ))}
          {!shown.length && <tr><td colSpan={4} class="muted">Waiting for events…</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}
