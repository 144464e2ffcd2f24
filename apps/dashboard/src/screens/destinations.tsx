import { RETRY_POLICIES, type RetryPolicyKind } from '@app/contracts';
import { useEffect, useState } from 'preact/hooks';
import type { DeliveryDetailView, DeliveryView, WebhookInput } from '../api';
import { ErrorLine, Panel, plural, Status, useAction, useLoad, When } from '../ui';
import { DeliveryChart } from './delivery-chart';

/**
 * What webhooks and event sinks (CONTRACT 15) share on screen: the settings that pick events and retry them, and the
 * delivery log with its attempts and replay. Both kinds are one `DeliveryResponse` in the API, read through a
 * `DeliverySource` (the kind's three endpoints).
 */

export const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

interface DestinationView {
  events: string[];
  sessionId: string | null;
  active: boolean;
  retryPolicy: { policy: RetryPolicyKind; delaySeconds: number; attempts: number };
}

/** The part of a webhook's or a sink's body these fields set. */
export type DestinationInput = Pick<WebhookInput, 'events' | 'sessionId' | 'active' | 'retryPolicy'>;

/** Events, session scope, retry policy and active: the fields and the body they make (`sessionId` left out on create when empty). */
export function useDestinationFields(existing?: DestinationView) {
  const [events, setEvents] = useState((existing?.events ?? ['*']).join(', '));
  const [sessionId, setSessionId] = useState(existing?.sessionId ?? '');
  const [active, setActive] = useState(existing?.active ?? true);
  const [policy, setPolicy] = useState<RetryPolicyKind>(existing?.retryPolicy.policy ?? 'exponential');
  const [delaySeconds, setDelay] = useState(String(existing?.retryPolicy.delaySeconds ?? ''));
  const [attempts, setAttempts] = useState(String(existing?.retryPolicy.attempts ?? ''));

  const input = (): DestinationInput => {
    const body: DestinationInput = {
      // typed by the catalog; a name outside it is the server's to refuse (422 naming the known ones, shown by the form)
      events: list(events) as WebhookInput['events'],
      sessionId: sessionId.trim() || null,
      active,
      retryPolicy: {
        policy,
        ...(delaySeconds ? { delaySeconds: Number(delaySeconds) } : {}),
        ...(attempts ? { attempts: Number(attempts) } : {}),
      } as WebhookInput['retryPolicy'],
    };
    if (!existing && !body.sessionId) delete body.sessionId;
    return body;
  };

  const fields = (
    <>
      <label>Events <input name="events" value={events} onInput={(e) => setEvents(e.currentTarget.value)} title="comma separated; * is every type" /></label>
      <label>Session (optional) <input name="sessionId" value={sessionId} onInput={(e) => setSessionId(e.currentTarget.value)} placeholder="ses_…" /></label>
      <label>Retry policy
        <select name="policy" value={policy} onChange={(e) => setPolicy(e.currentTarget.value as RetryPolicyKind)}>
          {RETRY_POLICIES.map((p) => <option value={p}>{p}</option>)}
        </select>
      </label>
      <label>Delay (s) <input name="delaySeconds" type="number" min={1} value={delaySeconds} onInput={(e) => setDelay(e.currentTarget.value)} placeholder="default" /></label>
      <label>Attempts <input name="attempts" type="number" min={1} value={attempts} onInput={(e) => setAttempts(e.currentTarget.value)} placeholder="default" /></label>
      <label class="check"><input name="active" type="checkbox" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} /> active</label>
    </>
  );
  return { fields, input };
}

/** The shared facts of a destination's page. */
export const DestinationFacts = ({ destination: d }: { destination: DestinationView & { id: string } }) => (
  <>
    <dt>Id</dt><dd class="mono">{d.id}</dd>
    <dt>Events</dt><dd>{d.events.join(', ') || 'none'}</dd>
    <dt>Session</dt><dd class="mono">{d.sessionId ?? 'every session'}</dd>
    <dt>Active</dt><dd>{d.active ? 'yes' : 'no'}</dd>
    <dt>Retry</dt><dd>{d.retryPolicy.policy}, {plural(d.retryPolicy.attempts, 'attempt')} from {d.retryPolicy.delaySeconds}s</dd>
  </>
);

/** The "disabled after failing" and rate lines of a list row. */
export const ActiveCell = ({ destination: d }: { destination: { active: boolean; disabledAt: number | null; disabledReason: string | null; rateLimitPerSecond: number | null } }) => (
  <>
    {d.active ? 'yes' : 'no'}
    {d.disabledAt !== null && <div class="muted" title={d.disabledReason ?? ''}>disabled after failing, <When at={d.disabledAt} />: re-enable to resume</div>}
    {d.rateLimitPerSecond !== null && <div class="muted">≤ {d.rateLimitPerSecond}/s</div>}
  </>
);

/** One destination kind's delivery endpoints. */
export interface DeliverySource {
  deliveries(id: string): Promise<{ data: DeliveryView[] }>;
  delivery(id: string, deliveryId: string): Promise<DeliveryDetailView>;
  replay(id: string, deliveryId: string): Promise<unknown>;
}

/** Delivery statuses change in the dispatcher, which the socket does not carry: the log polls while it is open. */
const LOG_POLL_MS = 2000;

/** The destination's delivery log (up to 100, newest first), polled while the page is open. */
export function useDeliveryLog(source: DeliverySource, id: string) {
  const log = useLoad(() => source.deliveries(id).then((p) => p.data), [id]);
  useEffect(() => {
    const timer = setInterval(log.reload, LOG_POLL_MS);
    return () => clearInterval(timer);
  }, [log.reload]);
  return log;
}

/** The log as a panel: the chart, each delivery with its attempts on demand and Replay for delivered/dead ones. */
export function DeliveryLog({ source, id, log }: { source: DeliverySource; id: string; log: ReturnType<typeof useDeliveryLog> }) {
  const [open, setOpen] = useState<string | null>(null);
  const action = useAction();
  const deliveries = log.data ?? [];
  return (
    <Panel title="Delivery log" actions={<button onClick={log.reload}>Refresh</button>}>
      <ErrorLine error={log.error} />
      <ErrorLine error={action.error} />
      <DeliveryChart deliveries={deliveries} />
      <table class="list" data-testid="deliveries">
        <thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>Last answer</th><th>Created</th><th>Delivered</th><th /></tr></thead>
        <tbody>
          {deliveries.map((d) => (
            <DeliveryRow
              key={d.id}
              source={source}
              ownerId={id}
              delivery={d}
              open={open === d.id}
              onToggle={() => setOpen(open === d.id ? null : d.id)}
              onReplay={() => action.run(async () => (await source.replay(id, d.id), setOpen(d.id), await log.reload()))}
            />
          ))}
          {log.data && !deliveries.length && <tr><td colSpan={7} class="muted">No deliveries yet: send a test event.</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}

function DeliveryRow(props: { source: DeliverySource; ownerId: string; delivery: DeliveryView; open: boolean; onToggle: () => void; onReplay: () => void }) {
  const { delivery: d, open, onToggle, onReplay } = props;
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
          <td colSpan={7}><Attempts source={props.source} ownerId={props.ownerId} deliveryId={d.id} version={`${d.attempts}:${d.status}`} /></td>
        </tr>
      )}
    </>
  );
}

function Attempts({ source, ownerId, deliveryId, version }: { source: DeliverySource; ownerId: string; deliveryId: string; version: string }) {
  const { data, error } = useLoad<DeliveryDetailView>(() => source.delivery(ownerId, deliveryId), [ownerId, deliveryId, version]);
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

/**
 * A destination page's buttons: send a test event (then the log reloads), open or close the editor, delete after a
 * confirm (then back to the list). The same for a webhook and an event sink.
 */
export function DestinationActions(props: {
  busy: boolean;
  run: (work: () => Promise<unknown>) => unknown;
  test: () => Promise<{ eventId: string; deliveryId?: string }>;
  onTested: (notice: string) => Promise<unknown>;
  editing: boolean;
  setEditing: (editing: boolean) => void;
  deleteQuestion: string;
  remove: () => Promise<unknown>;
}) {
  return (
    <>
      <button
        class="primary"
        disabled={props.busy}
        onClick={() =>
          props.run(async () => {
            const sent = await props.test();
            await props.onTested(`Test event ${sent.eventId} queued as delivery ${sent.deliveryId}.`);
          })
        }
      >
        Send test event
      </button>
      <button onClick={() => props.setEditing(!props.editing)}>{props.editing ? 'Close editor' : 'Edit'}</button>
      <button class="danger" onClick={() => confirm(props.deleteQuestion) && props.run(props.remove)}>
        Delete
      </button>
    </>
  );
}
