import type { DataSource } from 'typeorm';
import type { EventEnvelope } from '@app/contracts';
import { newId } from '@app/database';
import { envelopeBody } from '../delivery/delivery-request';
import type { HeldAttempt } from '../delivery/delivery-sender';
import { insertSkippingMissing } from '../delivery/delivery-store';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import { PendingEvent } from './pending-event';

export interface PlannedDelivery {
  id: string;
  webhook: WebhookTarget;
  envelope: EventEnvelope;
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
  markFannedOut(event: PendingEvent): Promise<void>;
}

/**
 * One delivery per (matching webhook, event), in an order every replica shares: two fan-outs of the
 * same batch then lock rows in the same order and cannot deadlock.
 */
export function planDeliveries(envelopes: EventEnvelope[], directory: Pick<FanoutDeps, 'match'>): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  for (const envelope of envelopes) {
    for (const webhook of directory.match(envelope)) planned.push({ id: newId('dlv'), webhook, envelope });
  }
  planned.sort((a, b) =>
    a.webhook.id === b.webhook.id ? (a.envelope.id < b.envelope.id ? -1 : a.envelope.id > b.envelope.id ? 1 : 0) : a.webhook.id < b.webhook.id ? -1 : 1,
  );
  return planned;
}

/**
 * The first attempts of the rows this fan-out created, one body Buffer per event whatever the number
 * of webhooks (only the signature differs per secret).
 */
export function firstAttempts(
  planned: PlannedDelivery[],
  createdIds: Iterable<string> | null,
  leaseUntil: number,
  events?: Map<string, PendingEvent>,
): HeldAttempt[] {
  const created = createdIds ? new Set(createdIds) : null;
  const bodies = new Map<string, Buffer>();
  const attempts: HeldAttempt[] = [];
  for (const p of planned) {
    if (created && !created.has(p.id)) continue;
    let body = bodies.get(p.envelope.id);
    if (!body) bodies.set(p.envelope.id, (body = envelopeBody(p.envelope)));
    attempts.push({
      deliveryId: p.id,
      attemptNo: 1,
      attemptBase: 0,
      webhook: p.webhook,
      eventId: p.envelope.id,
      eventTimestamp: p.envelope.timestamp,
      body,
      leaseUntil,
      row: events ? { event: events.get(p.envelope.id)!, organizationId: p.envelope.organizationId, eventType: p.envelope.event, state: 'unwritten' } : undefined,
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
    private readonly db: DataSource,
    private readonly directory: FanoutDeps,
    private readonly sender: AttemptSink,
    private readonly leaseMs: number,
    private readonly marks: FanoutMarks,
    private readonly onCreated: (n: number) => void = () => undefined,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Hands the events' first attempts to the sender without writing anything; resolves with the ids
   * of the events whose rows are all committed and which are marked fanned out (the others failed to
   * be written: they stay for a takeover).
   */
  async fanOutFresh(envelopes: EventEnvelope[]): Promise<{ written: Promise<string[]> }> {
    if (envelopes.length === 0) return { written: Promise.resolve([]) };
    await this.directory.settled();
    const planned = planDeliveries(envelopes, this.directory);
    const perEvent = new Map<string, number>();
    for (const p of planned) perEvent.set(p.envelope.id, (perEvent.get(p.envelope.id) ?? 0) + 1);
    const ok: string[] = [];
    let open = envelopes.length;
    let done!: (ids: string[]) => void;
    const written = new Promise<string[]>((resolve) => (done = resolve));
    const events = new Map<string, PendingEvent>();
    for (const e of envelopes) {
      events.set(e.id, new PendingEvent(e.id, perEvent.get(e.id) ?? 0, (settledOk) => {
        if (settledOk) ok.push(e.id);
        if (--open === 0) done(ok);
      }));
    }
    this.sender.sendAll(firstAttempts(planned, null, Number.POSITIVE_INFINITY, events));
    for (const event of events.values()) {
      if (event.unwritten === 0) void this.marks.markFannedOut(event).catch(() => undefined);
    }
    return { written };
  }

  /** Resolves once the rows are committed (the record); the attempts carry on in the sender. */
  async fanOut(envelopes: EventEnvelope[]): Promise<number> {
    if (envelopes.length === 0) return 0;
    await this.directory.settled();
    const planned = planDeliveries(envelopes, this.directory);
    const leaseFrom = this.clock();
    const created = await this.insertClaimed(planned, envelopes.map((e) => e.id));
    if (created.length) {
      this.sender.sendAll(firstAttempts(planned, created, leaseFrom + this.leaseMs));
      this.onCreated(created.length);
    }
    return created.length;
  }

  private async insertClaimed(planned: PlannedDelivery[], eventIds: string[]): Promise<string[]> {
    const params = [
      planned.map((p) => p.id),
      planned.map((p) => p.webhook.id),
      planned.map((p) => p.envelope.id),
      planned.map((p) => p.envelope.organizationId),
      planned.map((p) => p.envelope.event),
      this.leaseMs,
      eventIds,
    ];
    return insertSkippingMissing((skipMissing) => this.runInsert(skipMissing, params));
  }

  private async runInsert(skipMissing: boolean, params: unknown[]): Promise<string[]> {
    const guard = skipMissing
      ? `WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = u.webhook_id)`
      : '';
    const rows: { id: string }[] = await this.db.query(
      `WITH ins AS (
        INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, next_attempt_at, leased_until)
        SELECT u.id, u.webhook_id, u.event_id, u.organization_id, u.event_type, 'delivering', 1, now(),
               now() + make_interval(secs => $6::float8 / 1000)
          FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, webhook_id, event_id, organization_id, event_type)
         ${guard}
        ON CONFLICT (webhook_id, event_id) DO NOTHING
        RETURNING id),
      fanned AS (INSERT INTO event_fanouts (event_ids) SELECT $7::text[] WHERE cardinality($7::text[]) > 0)
      SELECT id FROM ins`,
      params,
    );
    return rows.map((r) => r.id);
  }
}
