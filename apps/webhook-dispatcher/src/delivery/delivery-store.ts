import type { DataSource } from 'typeorm';
import type { DeliveryStatus, EventEnvelope } from '@app/contracts';
import { newId } from '@app/database';
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

/**
 * The delivery record in PostgreSQL. An attempt first claims its delivery (status `delivering` with a
 * lease), then records its outcome. Both are batched across concurrent jobs: one statement per batch.
 */
export class DeliveryStore {
  private readonly claims: WriteBatcher<{ deliveryId: string; attemptNo: number }, Claim>;
  private readonly records: WriteBatcher<AttemptRecord, void>;

  constructor(
    private readonly db: DataSource,
    private readonly leaseMs: number,
  ) {
    this.claims = new WriteBatcher((items) => this.claimBatch(items), 200, 2);
    this.records = new WriteBatcher((items) => this.recordBatch(items), 1000, 1);
  }

  claim(deliveryId: string, attemptNo: number): Promise<Claim> {
    return this.claims.submit({ deliveryId, attemptNo });
  }

  /** Writes the attempt row and the delivery's new state; resolves once both are committed. */
  record(attempt: AttemptRecord): Promise<void> {
    return this.records.submit(attempt);
  }

  /** The webhook was switched off after the event was fanned out: give the delivery up without a POST. */
  async abandon(deliveryId: string, attemptNo: number, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE deliveries SET status = 'dead', leased_until = NULL, next_attempt_at = NULL, last_error = $3, updated_at = now()
       WHERE id = $1 AND attempts = $2 AND status = 'delivering'`,
      [deliveryId, attemptNo, reason],
    );
  }

  get backlog(): number {
    return this.claims.pending + this.records.pending;
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
