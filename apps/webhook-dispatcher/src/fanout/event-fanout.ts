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

/** The writer of a fresh fan-out's rows (the store's batched log): each counts as one of its event's rows. */
export interface FreshRows {
  /** inserts a row claimed (`delivering`, attempt 1, a lease); false when its (webhook, event) pair had one already */
  insertClaimed(delivery: NewDelivery, event: EventRows): Promise<boolean>;
  /** inserts a parked row (its webhook is switched off) */
  park(delivery: NewDelivery, event: EventRows): Promise<boolean>;
  /** marks an event that matched no webhook fanned out */
  markFannedOut(event: EventRows): Promise<void>;
  /** the fan-out's rows are all queued: write them now rather than at the end of the writer's linger */
  flushSoon(): void;
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
 * The first attempts of the rows this fan-out created (`created`), or of the rows it inserts (`insert`: each
 * attempt waits for its row), one body Buffer per event whatever the number of webhooks (only the signature differs
 * per secret).
 */
export function firstAttempts(
  planned: PlannedDelivery[],
  leaseUntil: number,
  rows: { created: Iterable<string> } | { insert(p: PlannedDelivery): Promise<boolean> },
): HeldAttempt[] {
  const created = 'created' in rows ? new Set(rows.created) : null;
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
      inserted: 'insert' in rows ? rows.insert(p) : undefined,
    });
  }
  return attempts;
}

/**
 * Turns events into deliveries and makes their first attempt at once, without a job. Every row is inserted before its
 * call: claimed (`delivering`, attempts = 1, a lease), or parked when its webhook is switched off; only the rows a
 * statement created are attempted, so redoing an event already (partly) delivered sends nothing twice. Two ways:
 *
 * Fresh (`fanOutFresh`, events just read from the stream): the rows go to the store's batched writer, with those of
 * other events and the outcomes of earlier attempts; the statement inserting an event's last row marks it fanned
 * out, and only then is its stream entry acknowledged. Each attempt goes on once its own row is committed.
 *
 * Claimed (`fanOut`: takeovers, stragglers, test sends, late entries): one statement inserts the batch's rows and
 * marks its events fanned out; the caller acknowledges them once it returns.
 *
 * Only a failed attempt becomes a BullMQ job.
 */
export class EventFanout {
  constructor(
    private readonly deliveries: Pick<DeliveriesRepository, 'insertClaimed'>,
    private readonly directory: FanoutDeps,
    private readonly sender: AttemptSink,
    private readonly leaseMs: number,
    private readonly rows: FreshRows,
    private readonly onCreated: (n: number) => void = () => undefined,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Queues the events' rows for the store's writer and hands their first attempts to the sender, each to go on once
   * its row is committed; `track` (the tracker) learns how many rows each event waits for, and owns what follows
   * their writes (the acknowledgement).
   */
  async fanOutFresh(envelopes: EventEnvelope[], track: TrackEvents): Promise<void> {
    if (envelopes.length === 0) return;
    await this.directory.settled();
    const planned = planDeliveries(envelopes, this.directory);
    const perEvent = new Map<string, number>(envelopes.map((e) => [e.id, 0]));
    for (const p of planned) perEvent.set(p.envelope.id, perEvent.get(p.envelope.id)! + 1);
    const events = track(perEvent);
    const leaseUntil = this.clock() + this.leaseMs;
    const insert = async (p: PlannedDelivery) => {
      const created = await this.rows.insertClaimed(newDelivery(p), events.get(p.envelope.id)!);
      if (created) this.onCreated(1);
      return created;
    };
    const attempts = firstAttempts(planned, leaseUntil, { insert });
    for (const p of planned) {
      // a failed write fails its event (not acknowledged, redone by a takeover): nothing more to do here
      if (p.parked) void this.rows.park(newDelivery(p), events.get(p.envelope.id)!).catch(() => undefined);
    }
    for (const [id, n] of perEvent) {
      if (n === 0) void this.rows.markFannedOut(events.get(id)!).catch(() => undefined);
    }
    this.rows.flushSoon();
    this.sender.sendAll(attempts);
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
      this.sender.sendAll(firstAttempts(planned, leaseFrom + this.leaseMs, { created }));
      this.onCreated(created.length);
    }
    return created.length;
  }
}
