import type { DataSource } from 'typeorm';
import type { DeliveryStatus, EventEnvelope } from '@app/contracts';
import { newId, pgArray } from '@app/database';
import { eventsCompletedBy, PendingEvent } from '../fanout/pending-event';
import { WriteBatcher } from './write-batcher';

/** A claim leaves the row `delivering` with attempts = the attempt in flight, under a lease. */
export type Claim =
  | { kind: 'claimed'; deliveryId: string; webhookId: string; attemptBase: number; envelope: EventEnvelope }
  /** another dispatcher holds a live lease on this attempt; look again when it ends */
  | { kind: 'leased'; leasedUntil: number }
  /** nothing to do: delivered, dead, deleted, or the job is older than the delivery's state */
  | { kind: 'gone' };

export interface AttemptRecord {
  deliveryId: string;
  attemptNo: number;
  status: Exclude<DeliveryStatus, 'delivering'>;
  statusCode: number | null;
  error: string | null;
  snippet: string | null;
  durationMs: number;
  startedAt: number;
  /** epoch ms of the next attempt when status is pending */
  nextAttemptAt: number | null;
}

interface ClaimRow {
  id: string;
  webhook_id: string | null;
  attempt_base: number | null;
  envelope: EventEnvelope | null;
  leased_until: Date | null;
  claimed: boolean;
}

/** A delivery of a fresh fan-out: no row yet, written after its first POST (or held, when that takes long). */
export interface NewDelivery {
  deliveryId: string;
  webhookId: string;
  eventId: string;
  organizationId: string;
  eventType: string;
}

/** A delivery row to insert: in its final state with its attempt (`outcome`), or claimed (`delivering`) when `outcome` is null. */
export interface RowWrite {
  kind: 'row';
  delivery: NewDelivery;
  event: PendingEvent;
  outcome: AttemptRecord | null;
  /** set when its statement starts: from then on, the outcome can no longer be attached */
  flushing: boolean;
}

type LogWrite = RowWrite | { kind: 'record'; outcome: AttemptRecord } | { kind: 'mark'; event: PendingEvent };

/** SQLSTATEs after which a statement is worth running again: foreign key gone, deadlock with another replica. */
const FK_VIOLATION = '23503';
const DEADLOCK = '40P01';

/**
 * Runs a delivery insert: first as is (every webhook exists, and its foreign key is the only check),
 * then — after a foreign key failure (a webhook deleted since it was cached) or a deadlock with another
 * replica — skipping rows whose webhook is gone, up to three more times.
 */
export async function insertSkippingMissing<T>(run: (skipMissing: boolean) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(attempt > 1);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt < 4 && (code === FK_VIOLATION || code === DEADLOCK)) continue;
      throw err;
    }
  }
}
/** How long the log writer lets a batch fill (cut short when no attempt is in flight). */
const LOG_LINGER_MS = 40;

/**
 * The delivery record in PostgreSQL. A first attempt from a fresh fan-out writes its row once, after
 * its POST, in its final state together with its attempt row (or claims it first when the POST is slow
 * to come). Any other attempt claims its delivery (`delivering` with a lease), then records its
 * outcome. Everything is batched across concurrent attempts: one statement per batch and kind.
 */
export class DeliveryStore {
  private readonly claims: WriteBatcher<{ deliveryId: string; attemptNo: number }, Claim>;
  /** one writer, one batch in flight: a batch sees every earlier batch committed (event completion relies on it) */
  private readonly log: WriteBatcher<LogWrite, boolean | Error>;

  constructor(
    private readonly db: DataSource,
    private readonly leaseMs: number,
  ) {
    this.claims = new WriteBatcher((items) => this.claimBatch(items), 200, 2);
    // under load a batch fills for up to LOG_LINGER_MS: PostgreSQL spends ~115 µs per row in
    // statements of ~60 rows and ~85 µs in statements of 500 (planning, triggers, commit)
    this.log = new WriteBatcher((items) => this.writeLog(items), 1000, 1, LOG_LINGER_MS);
  }

  claim(deliveryId: string, attemptNo: number): Promise<Claim> {
    return this.claims.submit({ deliveryId, attemptNo });
  }

  /** Writes the attempt row and the claimed delivery's new state; resolves once both are committed. */
  async record(attempt: AttemptRecord): Promise<void> {
    settled(await this.log.submit({ kind: 'record', outcome: attempt }));
  }

  /**
   * Inserts a fresh delivery's row in its final state with its first attempt; resolves true once
   * committed, false when a row for (webhook, event) already existed (nothing written: that row is
   * someone else's record).
   */
  async writeFirst(delivery: NewDelivery, outcome: AttemptRecord, event: PendingEvent): Promise<boolean> {
    return settled(await this.log.submit({ kind: 'row', delivery, event, outcome, flushing: false }));
  }

  /**
   * Inserts a fresh delivery's row claimed (`delivering`, attempt 1, a lease) before its outcome is
   * known. Until the statement starts, the outcome may still be attached to `write` (it is then
   * written in its final state instead). Resolves true when this call's row was created.
   */
  hold(delivery: NewDelivery, event: PendingEvent): { write: RowWrite; created: Promise<boolean> } {
    const write: RowWrite = { kind: 'row', delivery, event, outcome: null, flushing: false };
    return { write, created: this.log.submit(write).then(settled) };
  }

  /** Marks an event that matched no webhook fanned out (with the next batch of rows). */
  async markFannedOut(event: PendingEvent): Promise<void> {
    settled(await this.log.submit({ kind: 'mark', event }));
  }

  /** The webhook was switched off after the event was fanned out: give the delivery up without a POST. */
  async abandon(deliveryId: string, attemptNo: number, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE deliveries SET status = 'dead', leased_until = NULL, next_attempt_at = NULL, last_error = $3, updated_at = now()
       WHERE id = $1 AND attempts = $2 AND status = 'delivering'`,
      [deliveryId, attemptNo, reason],
    );
  }

  /** No attempt is in flight: write what waits now rather than at the end of the linger. */
  flushSoon(): void {
    this.log.flushSoon();
  }

  private async claimBatch(items: { deliveryId: string; attemptNo: number }[]): Promise<Claim[]> {
    // `delivering` with attempts = n means attempt n is in flight. A job claims its attempt from
    // `pending` (counting it), or takes over the same attempt number when its holder's lease ran out.
    // The second branch reads the rows as they were before this statement's update: a delivery
    // `delivering` at the job's attempt number that was not claimed holds a live lease.
    const rows: ClaimRow[] = await this.db.query(
      `WITH req AS (SELECT * FROM unnest($1::text[], $2::int[]) AS r(id, attempt_no)),
       claimed AS (
         UPDATE deliveries d
            SET status = 'delivering', attempts = req.attempt_no,
                leased_until = now() + make_interval(secs => $3::float8 / 1000), updated_at = now()
           FROM req
          WHERE d.id = req.id
            AND ((d.status = 'pending' AND d.attempts = req.attempt_no - 1)
              OR (d.status = 'delivering' AND d.attempts = req.attempt_no AND d.leased_until < now()))
         RETURNING d.id, d.webhook_id, d.event_id, d.attempt_base)
       SELECT c.id, c.webhook_id, c.attempt_base, e.envelope, NULL::timestamptz AS leased_until, true AS claimed
         FROM claimed c JOIN events e ON e.id = c.event_id
       UNION ALL
       SELECT d.id, NULL, NULL, NULL, d.leased_until, false
         FROM deliveries d JOIN req ON req.id = d.id
        WHERE d.status = 'delivering' AND d.attempts = req.attempt_no
          AND NOT EXISTS (SELECT 1 FROM claimed c WHERE c.id = d.id)`,
      [items.map((i) => i.deliveryId), items.map((i) => i.attemptNo), this.leaseMs],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return items.map((item): Claim => {
      const row = byId.get(item.deliveryId);
      if (!row) return { kind: 'gone' };
      if (!row.claimed) return { kind: 'leased', leasedUntil: row.leased_until ? row.leased_until.getTime() : Date.now() };
      return { kind: 'claimed', deliveryId: row.id, webhookId: row.webhook_id!, attemptBase: row.attempt_base ?? 0, envelope: row.envelope! };
    });
  }

  /** Extends live leases of attempts still held; returns the ids whose lease was extended. */
  async renewLeases(items: { deliveryId: string; attemptNo: number }[]): Promise<Set<string>> {
    const rows: { id: string }[] = await this.db.query(
      `UPDATE deliveries d
          SET leased_until = now() + make_interval(secs => $3::float8 / 1000)
         FROM unnest($1::text[], $2::int[]) AS r(id, attempt_no)
        WHERE d.id = r.id AND d.attempts = r.attempt_no AND d.status = 'delivering'
       RETURNING d.id`,
      [items.map((i) => i.deliveryId), items.map((i) => i.attemptNo), this.leaseMs],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * One batch of the log writer: new rows (with their attempts and the events they complete) in one
   * statement, outcomes of claimed attempts in another. A failure is reported per item, never thrown:
   * the batch's other kind must not be lost with it.
   */
  private async writeLog(items: LogWrite[]): Promise<(boolean | Error)[]> {
    const rows: RowWrite[] = [];
    const records: AttemptRecord[] = [];
    const rowsByEvent = new Map<PendingEvent, number>();
    for (const item of items) {
      if (item.kind === 'row') {
        item.flushing = true;
        rows.push(item);
        rowsByEvent.set(item.event, (rowsByEvent.get(item.event) ?? 0) + 1);
      } else if (item.kind === 'record') records.push(item.outcome);
      else if (!rowsByEvent.has(item.event)) rowsByEvent.set(item.event, 0);
    }
    const [notCreated, recorded] = await Promise.all([
      rowsByEvent.size ? this.insertRows(rows, rowsByEvent).catch((err: Error) => err) : new Set<string>(),
      records.length ? this.recordBatch(records).then(() => true as const, (err: Error) => err) : true,
    ]);
    if (notCreated instanceof Error) for (const event of rowsByEvent.keys()) event.fail();
    else for (const [event, n] of rowsByEvent) event.written(n);
    return items.map((item) => {
      if (item.kind === 'record') return recorded;
      if (notCreated instanceof Error) return notCreated;
      return item.kind === 'row' ? !notCreated.has(item.delivery.deliveryId) : true;
    });
  }

  /** Returns the ids of the rows NOT created: their (webhook, event) already had a row, left alone. */
  private async insertRows(rows: RowWrite[], rowsByEvent: Map<PendingEvent, number>): Promise<Set<string>> {
    // two replicas writing the same pairs (a takeover racing a slow owner) lock them in the same order
    rows.sort((x, y) => compareRows(x.delivery, y.delivery));
    const marks = eventsCompletedBy(rowsByEvent).map((e) => e.eventId).sort();
    const params = rowParams(rows, marks, this.leaseMs);
    return insertSkippingMissing((skipMissing) => this.runInsertRows(skipMissing, params));
  }

  private async runInsertRows(skipMissing: boolean, params: unknown[]): Promise<Set<string>> {
    const guard = skipMissing
      ? `WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = r.webhook_id)`
      : '';
    // a null outcome (status 'delivering') is a claim: attempt 1 in flight under a lease, no attempt row yet
    // only the rows not created come back (normally none): reading back every id costs more than the check
    const found: { id: string }[] = await this.db.query(
      `WITH r AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::int[],
                              $9::text[], $10::float8[], $11::text[], $12::int[], $13::text[])
           AS r(id, webhook_id, event_id, organization_id, event_type, status, next_ms, status_code,
                error, started_ms, attempt_id, duration_ms, snippet)),
       ins AS (
         INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, next_attempt_at,
                                 leased_until, last_status_code, last_error, delivered_at, created_at, updated_at)
         SELECT r.id, r.webhook_id, r.event_id, r.organization_id, r.event_type, r.status, 1,
                CASE WHEN r.status = 'delivering' THEN now() WHEN r.next_ms IS NOT NULL THEN to_timestamp(r.next_ms / 1000) END,
                CASE WHEN r.status = 'delivering' THEN now() + make_interval(secs => $14::float8 / 1000) END,
                r.status_code, r.error,
                CASE WHEN r.status = 'delivered' THEN now() END,
                COALESCE(to_timestamp(r.started_ms / 1000), now()), now()
           FROM r ${guard}
         ON CONFLICT (webhook_id, event_id) DO NOTHING
         RETURNING id),
       att AS (
         INSERT INTO delivery_attempts (id, delivery_id, attempt_no, status_code, duration_ms, error, response_snippet, started_at)
         SELECT r.attempt_id, r.id, 1, r.status_code, r.duration_ms, r.error, r.snippet, to_timestamp(r.started_ms / 1000)
           FROM r JOIN ins ON ins.id = r.id
          WHERE r.status <> 'delivering'),
       fanned AS (INSERT INTO event_fanouts (event_ids) SELECT $15::text[] WHERE cardinality($15::text[]) > 0)
       SELECT r.id FROM r WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.id = r.id)`,
      params,
    );
    return new Set(found.map((f) => f.id));
  }

  private async recordBatch(items: AttemptRecord[]): Promise<void[]> {
    try {
      await this.writeRecords(items);
    } catch (err) {
      if (items.length === 1) throw err;
      // one bad row (its delivery deleted meanwhile: the attempt's foreign key fails) must not lose
      // the others' outcomes
      for (const item of items) await this.writeRecords([item]).catch(() => undefined);
    }
    return items.map(() => undefined);
  }


  private async writeRecords(items: AttemptRecord[]): Promise<void> {
    await this.db.query(
      `WITH v AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::text[], $7::text[], $8::int[], $9::float8[], $10::float8[])
           AS v(attempt_id, delivery_id, attempt_no, status, status_code, error, snippet, duration_ms, started_ms, next_ms)),
       ins AS (
         INSERT INTO delivery_attempts (id, delivery_id, attempt_no, status_code, duration_ms, error, response_snippet, started_at)
         SELECT v.attempt_id, v.delivery_id, v.attempt_no, v.status_code, v.duration_ms, v.error, v.snippet, to_timestamp(v.started_ms / 1000)
           FROM v)
       UPDATE deliveries d
          SET status = v.status, leased_until = NULL,
              next_attempt_at = CASE WHEN v.next_ms IS NULL THEN NULL ELSE to_timestamp(v.next_ms / 1000) END,
              last_status_code = v.status_code, last_error = v.error,
              delivered_at = CASE WHEN v.status = 'delivered' THEN now() ELSE d.delivered_at END,
              updated_at = now()
         FROM v
        WHERE d.id = v.delivery_id AND d.attempts = v.attempt_no AND d.status = 'delivering'`,
      [
        items.map(() => newId('att')),
        items.map((i) => i.deliveryId),
        items.map((i) => i.attemptNo),
        items.map((i) => i.status),
        items.map((i) => i.statusCode),
        items.map((i) => i.error),
        items.map((i) => i.snippet),
        items.map((i) => i.durationMs),
        items.map((i) => i.startedAt),
        items.map((i) => i.nextAttemptAt),
      ],
    );
  }
}

function settled<T>(result: T | Error): T {
  if (result instanceof Error) throw result;
  return result;
}

function compareRows(a: NewDelivery, b: NewDelivery): number {
  if (a.webhookId !== b.webhookId) return a.webhookId < b.webhookId ? -1 : 1;
  return a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0;
}

/** The insert's parameters, one array per column (rows already sorted). */
function rowParams(rows: RowWrite[], fannedOut: string[], leaseMs: number): unknown[] {
  const n = rows.length;
  const cols = Array.from({ length: 13 }, () => new Array<string | number | null>(n));
  for (let i = 0; i < n; i++) {
    const { delivery: d, outcome: o } = rows[i];
    cols[0][i] = d.deliveryId;
    cols[1][i] = d.webhookId;
    cols[2][i] = d.eventId;
    cols[3][i] = d.organizationId;
    cols[4][i] = d.eventType;
    cols[5][i] = o ? o.status : 'delivering';
    cols[6][i] = o ? o.nextAttemptAt : null;
    cols[7][i] = o ? o.statusCode : null;
    cols[8][i] = o ? o.error : null;
    cols[9][i] = o ? o.startedAt : null;
    cols[10][i] = o ? newId('att') : null;
    cols[11][i] = o ? o.durationMs : null;
    cols[12][i] = o ? o.snippet : null;
  }
  return [...cols.map(pgArray), leaseMs, pgArray(fannedOut)];
}
