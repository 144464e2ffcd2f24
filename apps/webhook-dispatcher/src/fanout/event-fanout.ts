import type { EventEnvelope } from '@app/contracts';
import { DeliveriesRepository, NewDelivery, newId } from '@app/database';
import { envelopeBody } from '../delivery/delivery-request';
import type { HeldAttempt } from '../delivery/delivery-sender';
import type { EventRows } from '../delivery/event-rows';
import type { WebhookTarget } from '../webhooks/webhook-directory';

export interface PlannedDelivery {
  id: string;
  webhook: WebhookTarget;
  envelope: EventEnvelope;
  /** its webhook is switched off: the row is recorded parked (no attempt) and sent once it is re-enabled */
  parked: boolean;
}

export interface FanoutDeps {
  /** the webhooks an event goes to (the in-memory directory) */
  match(envelope: EventEnvelope): WebhookTarget[];
  /** waits for webhook reloads in flight */
  settled(): Promise<void>;
}

export interface AttemptSink {
  sendAll(attempts: HeldAttempt[]): void;
}

export interface FanoutMarks {
  /** marks an event that matched no webhook fanned out */
  markFannedOut(event: EventRows): Promise<void>;
  /** writes a parked row (its webhook is switched off), counted as one of its event's rows */
  park(delivery: NewDelivery, event: EventRows): Promise<boolean>;
}

/** Starts tracking a fresh batch's events, given how many rows each waits for (the EventTracker). */
export type TrackEvents = (rowsPerEvent: ReadonlyMap<string, number>) => ReadonlyMap<string, EventRows>;

/**
 * One delivery per (matching webhook, event), in an order every replica shares: two fan-outs of the
 * same batch then lock rows in the same order and cannot deadlock.
 */
export function planDeliveries(envelopes: EventEnvelope[], directory: Pick<FanoutDeps, 'match'>): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  for (const envelope of envelopes) {
    for (const webhook of directory.match(envelope)) planned.push({ id: newId('dlv'), webhook, envelope, parked: !webhook.active });
  }
  planned.sort((a, b) =>
    a.webhook.id === b.webhook.id ? (a.envelope.id < b.envelope.id ? -1 : a.envelope.id > b.envelope.id ? 1 : 0) : a.webhook.id < b.webhook.id ? -1 : 1,
  );
  return planned;
}

function newDelivery(p: PlannedDelivery): NewDelivery {
  return { deliveryId: p.id, webhookId: p.webhook.id, eventId: p.envelope.id, organizationId: p.envelope.organizationId, eventType: p.envelope.event };
}

/**
 * The first attempts of the rows this fan-out created, one body Buffer per event whatever the number
 * of webhooks (only the signature differs per secret).
 */
export function firstAttempts(
  planned: PlannedDelivery[],
  createdIds: Iterable<string> | null,
  leaseUntil: number,
  events?: ReadonlyMap<string, EventRows>,
): HeldAttempt[] {
  const created = createdIds ? new Set(createdIds) : null;
  const bodies = new Map<string, Buffer>();
  const attempts: HeldAttempt[] = [];
  for (const p of planned) {
    if (p.parked || (created && !created.has(p.id))) continue;
    let body = bodies.get(p.envelope.id);
    if (!body) bodies.set(p.envelope.id, (body = envelopeBody(p.envelope)));
    attempts.push({
      deliveryId: p.id,
      attemptNo: 1,
      attemptBase: 0,
      webhook: p.webhook,
      eventId: p.envelope.id,
      eventType: p.envelope.event,
      sessionId: p.envelope.sessionId,
      eventTimestamp: p.envelope.timestamp,
      body,
      leaseUntil,
      fresh: events ? { event: events.get(p.envelope.id)!, organizationId: p.envelope.organizationId, eventType: p.envelope.event } : undefined,
    });
  }
  return attempts;
}

/**
 * Turns events into deliveries and makes their first attempt at once, without a job, in one of two ways.
 *
 * Fresh (`fanOutFresh`, events just read from the stream): the attempts go to the sender at once, and
 * each row is written once, after its POST, in its final state with its attempt row; the statement
 * writing an event's last row marks it fanned out, and only then is its stream entry acknowledged.
 *
 * Claimed (`fanOut`: takeovers, stragglers, test sends, late entries): one statement inserts the rows
 * already claimed (`delivering`, attempts = 1, a lease) and marks the events fanned out; only the rows
 * it created are attempted, so redoing an event already (partly) delivered sends nothing twice.
 *
 * Only a failed attempt becomes a BullMQ job.
 */
export class EventFanout {
  constructor(
    private readonly deliveries: Pick<DeliveriesRepository, 'insertClaimed'>,
    private readonly directory: FanoutDeps,
    private readonly sender: AttemptSink,
    private readonly leaseMs: number,
    private readonly marks: FanoutMarks,
    private readonly onCreated: (n: number) => void = () => undefined,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Hands the events' first attempts to the sender without writing anything; `track` (the tracker)
   * learns how many rows each event waits for, and owns what follows their writes.
   */
  async fanOutFresh(envelopes: EventEnvelope[], track: TrackEvents): Promise<void> {
    if (envelopes.length === 0) return;
    await this.directory.settled();
    const planned = planDeliveries(envelopes, this.directory);
    const perEvent = new Map<string, number>(envelopes.map((e) => [e.id, 0]));
    for (const p of planned) perEvent.set(p.envelope.id, perEvent.get(p.envelope.id)! + 1);
    const events = track(perEvent);
    this.sender.sendAll(firstAttempts(planned, null, Number.POSITIVE_INFINITY, events));
    for (const p of planned) {
      // a failed write fails its event (not acknowledged, redone by a takeover): nothing more to do here
      if (p.parked) void this.marks.park(newDelivery(p), events.get(p.envelope.id)!).catch(() => undefined);
    }
    for (const [id, n] of perEvent) {
      if (n === 0) void this.marks.markFannedOut(events.get(id)!).catch(() => undefined);
    }
  }

  /** Resolves once the rows are committed (the record); the attempts carry on in the sender. */
  async fanOut(envelopes: EventEnvelope[]): Promise<number> {
    if (envelopes.length === 0) return 0;
    await this.directory.settled();
    const planned = planDeliveries(envelopes, this.directory);
    const leaseFrom = this.clock();
    const created = await this.deliveries.insertClaimed(
      planned.map(newDelivery),
      envelopes.map((e) => e.id),
      this.leaseMs,
      new Set(planned.filter((p) => p.parked).map((p) => p.id)),
    );
    if (created.length) {
      this.sender.sendAll(firstAttempts(planned, created, leaseFrom + this.leaseMs));
      this.onCreated(created.length);
    }
    return created.length;
  }
}
