import { useState } from 'preact/hooks';
import { api, type EventSinkCreate, type EventSinkPatch, type EventSinkView } from '../api';
import { go } from '../router';
import { ErrorLine, Panel, useAction, useLoad, When } from '../ui';
import { ActiveCell, DeliveryLog, DestinationActions, DestinationFacts, useDeliveryLog, useDestinationFields, type DeliverySource } from './destinations';

/**
 * Event sinks (CONTRACT 15, docs/event-sinks.md): RabbitMQ exchanges and NATS JetStream subjects the organization's
 * events are published to, listed beside the webhooks and with the webhooks' delivery log, attempts and replay.
 */
type SinkKind = EventSinkView['kind'];

const KIND_LABEL: Record<SinkKind, string> = { amqp: 'RabbitMQ', nats: 'NATS JetStream' };
const URL_HINT: Record<SinkKind, string> = { amqp: 'amqp://user:password@rabbitmq.example.com:5672/vhost', nats: 'nats://user:password@nats.example.com:4222' };

/** Where on the broker a sink publishes: the exchange and routing key, or the subject. */
const target = (s: EventSinkView) => (s.kind === 'amqp' ? `${s.exchange === '' ? '(default exchange)' : s.exchange} · ${s.routingKey ?? '{event}'}` : s.subject ?? '');

/** Create (no `sink`) or edit. The URL shows its password as `***`; sent back unchanged, the API keeps the stored one. */
function EventSinkForm({ sink, onSaved, onCancel }: { sink?: EventSinkView; onSaved: (s: EventSinkView) => void; onCancel?: () => void }) {
  const [kind, setKind] = useState<SinkKind>(sink?.kind ?? 'amqp');
  const [url, setUrl] = useState(sink?.url ?? '');
  const [exchange, setExchange] = useState(sink?.exchange ?? '');
  const [routingKey, setRoutingKey] = useState(sink?.routingKey ?? '');
  const [subject, setSubject] = useState(sink?.subject ?? '');
  const destination = useDestinationFields(sink);
  const { error, busy, run } = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    const where = kind === 'amqp' ? { exchange: exchange.trim(), ...(routingKey.trim() ? { routingKey: routingKey.trim() } : {}) } : subject.trim() ? { subject: subject.trim() } : {};
    const body: EventSinkPatch = { url: url.trim(), ...where, ...destination.input() };
    run(async () => onSaved(sink ? await api.updateEventSink(sink.id, body) : await api.createEventSink({ kind, ...body } as EventSinkCreate)));
  };

  return (
    <form class="grid-form" onSubmit={submit} aria-label={sink ? 'Edit event sink' : 'New event sink'}>
      <label>Broker
        <select name="kind" value={kind} disabled={!!sink} onChange={(e) => setKind(e.currentTarget.value as SinkKind)}>
          {(Object.keys(KIND_LABEL) as SinkKind[]).map((k) => <option value={k}>{KIND_LABEL[k]}</option>)}
        </select>
      </label>
      <label class="wide">URL <input name="sinkUrl" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder={URL_HINT[kind]} autoComplete="off" spellcheck={false} /></label>
      {kind === 'amqp' ? (
        <>
          <label>Exchange <input name="exchange" value={exchange} onInput={(e) => setExchange(e.currentTarget.value)} placeholder="whatsapp.events" /></label>
          <label>Routing key <input name="routingKey" value={routingKey} onInput={(e) => setRoutingKey(e.currentTarget.value)} placeholder="{event}" /></label>
        </>
      ) : (
        <label>Subject <input name="subject" value={subject} onInput={(e) => setSubject(e.currentTarget.value)} placeholder="wa.{organizationId}.{sessionId}.{event}" /></label>
      )}
      {destination.fields}
      <div class="wide">
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy}>{sink ? 'Save' : 'Create event sink'}</button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  );
}

/** The Webhooks screen's second half: the sinks and a form for a new one (closed until asked for). */
export function EventSinksPanel() {
  const { data, setData, error, reload } = useLoad(() => api.eventSinks().then((p) => p.data));
  const [adding, setAdding] = useState(false);
  return (
    <Panel
      title="Event sinks (RabbitMQ, NATS)"
      actions={
        <>
          <button onClick={() => setAdding(!adding)}>{adding ? 'Close' : 'New event sink'}</button>
          <button onClick={reload}>Refresh</button>
        </>
      }
    >
      {adding && <EventSinkForm onSaved={(s) => (setData((l) => [...(l ?? []), s]), go(`event-sinks/${s.id}`))} />}
      <ErrorLine error={error} />
      <table class="list" data-testid="event-sinks">
        <thead><tr><th>Broker</th><th>Publishes to</th><th>Events</th><th>Session</th><th>Active</th><th>Updated</th></tr></thead>
        <tbody>
          {(data ?? []).map((s) => (
            <tr key={s.id} data-sink-id={s.id}>
              <td><a href={`#/event-sinks/${s.id}`}>{KIND_LABEL[s.kind]}</a><div class="muted mono">{s.url}</div></td>
              <td class="mono">{target(s)}</td>
              <td>{s.events.length ? s.events.join(', ') : <span class="muted">none</span>}</td>
              <td class="mono">{s.sessionId ?? 'all'}</td>
              <td><ActiveCell destination={s} /></td>
              <td><When at={s.updatedAt} /></td>
            </tr>
          ))}
          {data && !data.length && <tr><td colSpan={6} class="muted">No event sinks yet: publish events to a RabbitMQ exchange or a NATS JetStream subject.</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}

const sinkDeliveries: DeliverySource = { deliveries: api.sinkDeliveries, delivery: api.sinkDelivery, replay: api.replaySinkDelivery };

export function EventSinkDetail({ id }: { id: string }) {
  const sinkLoad = useLoad(() => api.eventSink(id), [id]);
  const log = useDeliveryLog(sinkDeliveries, id);
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);

  const sink = sinkLoad.data;
  if (sinkLoad.error) return <ErrorLine error={sinkLoad.error} />;
  if (!sink) return <p class="muted">Loading…</p>;

  return (
    <>
      <p><a href="#/webhooks">← Webhooks and event sinks</a></p>
      <Panel
        title={`${KIND_LABEL[sink.kind]}: ${target(sink)}`}
        actions={
          <DestinationActions
            busy={action.busy}
            run={action.run}
            test={() => api.testEventSink(id)}
            onTested={async (notice) => (setNotice(notice), await log.reload())}
            editing={editing}
            setEditing={setEditing}
            deleteQuestion={`Delete the event sink ${sink.url}?`}
            remove={async () => (await api.deleteEventSink(id), go('webhooks'))}
          />
        }
      >
        {editing ? (
          <EventSinkForm sink={sink} onSaved={(s) => (sinkLoad.setData(s), setEditing(false))} onCancel={() => setEditing(false)} />
        ) : (
          <dl class="facts">
            <dt>Broker</dt><dd>{KIND_LABEL[sink.kind]}</dd>
            <dt>URL</dt><dd class="mono">{sink.url}</dd>
            <dt>Publishes to</dt><dd class="mono">{target(sink)}</dd>
            <DestinationFacts destination={sink} />
          </dl>
        )}
        {notice && <p class="ok">{notice}</p>}
        <ErrorLine error={action.error} />
      </Panel>
      <DeliveryLog source={sinkDeliveries} id={id} log={log} />
    </>
  );
}
