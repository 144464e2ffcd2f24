import { Injectable } from '@nestjs/common';
import type { DeliveryStatus, EventEnvelope } from '@app/contracts';
import { newId } from '../ids';
import { pgArray } from '../pg-array';
import { Db } from '../pg';

/** A delivery row as the API shows it. */
export interface DeliveryRecord {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  deliveredAt: Date | null;
  nextAttemptAt: Date | null;
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  delivered_at: Date | null;
  next_attempt_at: Date | null;
}

/** The columns a delivery row is read with (`DeliveryRow`). */
export const DELIVERY_COLUMNS = `id, webhook_id, event_id, event_type, status, attempts, last_status_code, last_error, created_at, updated_at, delivered_at, next_attempt_at`;

export function toDeliveryRecord(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deliveredAt: row.delivered_at,
    nextAttemptAt: row.next_attempt_at,
  };
}

/** The outcome of one attempt, written as its `delivery_attempts` row and the delivery's new state. */
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

/** A delivery of a fan-out: no row yet. */
export interface NewDelivery {
  deliveryId: string;
  webhookId: string;
  eventId: string;
  organizationId: string;
  eventType: string;
}

/**
 * A fresh row to insert: claimed (`delivering`, attempt 1 in flight under a lease), or parked (`pending`, no attempt,
 * no due time) when `parked` is set: its webhook is switched off.
 */
export interface FirstRow {
  delivery: NewDelivery;
  parked?: boolean;
}

/** The `last_error` of a row parked while its webhook is switched off (the API shows it until an attempt is made). */
export const PARKED_REASON = 'webhook is disabled: parked until it is re-enabled';

/**
 * How long a parked row waits for its webhook to be re-enabled: older ones are given up at re-enabling (`dead`, so a
 * user can still replay them) rather than all sent at once. The same as the default WEBHOOK_DISABLE_AFTER_MS.
 */
export const MAX_PARKED_MS = 3 * 24 * 3600 * 1000;
const expiredParkedReason = (ms: number) =>
  `parked for more than ${ms % 86_400_000 === 0 ? `${ms / 86_400_000} days` : `${Math.round(ms / 1000)} s`} while the webhook was disabled: not sent on re-enabling; replay it to send it`;

/**
 * A row about to be parked whose webhook is active by the time the statement runs (re-enabled while the dispatcher's
 * cache still said otherwise) is made due now instead: the reconciler enqueues it, so no row stays parked behind an
 * active webhook.
 */
const ACTIVE_AGAIN = (webhookId: string) => `EXISTS (SELECT 1 FROM webhooks w WHERE w.id = ${webhookId} AND w.active)`;

/** What re-enabling a webhook did to its open deliveries. */
export interface ResumedDeliveries {
  /** pending rows, due now (their next attempt is attempts + 1) */
  due: DueDelivery[];
  /** parked rows older than the parking bound, given up (`dead`, replayable) */
  expired: number;
}

/** A claim leaves the row `delivering` with attempts = the attempt in flight, under a lease. */
export type Claim =
  | { kind: 'claimed'; deliveryId: string; webhookId: string; attemptBase: number; envelope: EventEnvelope }
  /** another dispatcher holds a live lease on this attempt; look again when it ends */
  | { kind: 'leased'; leasedUntil: number }
  /** nothing to do: delivered, dead, deleted, or the job is older than the delivery's state */
  | { kind: 'gone' };

export interface AttemptRef {
  deliveryId: string;
  attemptNo: number;
}

/** An open delivery whose attempt is due (pending) or abandoned (delivering, lease ended). */
export interface DueDelivery {
  id: string;
  status: 'pending' | 'delivering';
  attempts: number;
}

interface ClaimRow {
  id: string;
  webhook_id: string | null;
  attempt_base: number | null;
  envelope: EventEnvelope | null;
  leased_until: Date | null;
  claimed: boolean;
}

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

/**
 * The first-row insert's columns, in parameter order: one typed list builds both the statement's
 * `unnest(...) AS r(...)` and the arrays bound to it, so a column cannot drift from its position.
 */
const FIRST_ROW_COLUMNS: readonly (readonly [name: string, type: 'text' | 'bool', value: (r: FirstRow) => string])[] = [
  ['id', 'text', (r) => r.delivery.deliveryId],
  ['webhook_id', 'text', (r) => r.delivery.webhookId],
  ['event_id', 'text', (r) => r.delivery.eventId],
  ['organization_id', 'text', (r) => r.delivery.organizationId],
  ['event_type', 'text', (r) => r.delivery.eventType],
  ['parked', 'bool', (r) => (r.parked ? 't' : 'f')],
];
const LEASE_PARAM = FIRST_ROW_COLUMNS.length + 1;
const FANNED_PARAM = FIRST_ROW_COLUMNS.length + 2;
const REASON_PARAM = FIRST_ROW_COLUMNS.length + 3;
const FIRST_ROWS_UNNEST = `unnest(${FIRST_ROW_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})
           AS r(${FIRST_ROW_COLUMNS.map(([name]) => name).join(', ')})`;

/**
 * The dispatcher's statements on `deliveries` (and the `delivery_attempts` and `event_fanouts` rows written in the
 * same statement); the API's reads, replays and test rows are `DeliveryLogRepository`'s. The dispatcher's statements are batched and benchmarked: one round trip per batch,
 * arrays bound as literals (pgArray) rather than one parameter per value.
 */

@Injectable()
export class DeliveriesRepository {
  constructor(private readonly db: Db) {}

  /**
   * Fresh rows, sorted by (webhook, event) so two replicas writing the same pairs lock them in the same
   * order, each claimed (or parked), and one `event_fanouts` row naming `fannedOut`. Returns the ids of
   * the rows NOT created: their (webhook, event) already had a row, left alone.
   */
  async insertFirstRows(rows: FirstRow[], fannedOut: string[], leaseMs: number): Promise<Set<string>> {
    rows.sort((x, y) => compareDeliveries(x.delivery, y.delivery));
    const n = rows.length;
    const params: unknown[] = FIRST_ROW_COLUMNS.map(([, , value]) => {
      const col = new Array<string>(n);
      for (let i = 0; i < n; i++) col[i] = value(rows[i]);
      return pgArray(col);
    });
    params.push(leaseMs, pgArray([...fannedOut].sort()), PARKED_REASON);
    return insertSkippingMissing((skipMissing) => this.runInsertFirstRows(skipMissing, params));
  }

  private async runInsertFirstRows(skipMissing: boolean, params: unknown[]): Promise<Set<string>> {
    const guard = skipMissing
      ? `WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = r.webhook_id)`
      : '';
    // a claim ('delivering') is attempt 1 in flight under a lease (its attempt row is written with its outcome);
    // a parked row (pending, attempts 0) has no due time and no attempt row
    // only the rows not created come back (normally none): reading back every id costs more than the check
    const found = await this.db.query<{ id: string }>(
      `WITH r AS (
         SELECT * FROM ${FIRST_ROWS_UNNEST}),
       ins AS (
         INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, next_attempt_at,
                                 leased_until, last_error)
         SELECT r.id, r.webhook_id, r.event_id, r.organization_id, r.event_type,
                CASE WHEN r.parked THEN 'pending' ELSE 'delivering' END, CASE WHEN r.parked THEN 0 ELSE 1 END,
                CASE WHEN NOT r.parked OR ${ACTIVE_AGAIN('r.webhook_id')} THEN now() END,
                CASE WHEN r.parked THEN NULL ELSE now() + make_interval(secs => $${LEASE_PARAM}::float8 / 1000) END,
                CASE WHEN r.parked THEN $${REASON_PARAM}::text END
           FROM r ${guard}
         ON CONFLICT (webhook_id, event_id) DO NOTHING
         RETURNING id),
       fanned AS (INSERT INTO event_fanouts (event_ids) SELECT $${FANNED_PARAM}::text[] WHERE cardinality($${FANNED_PARAM}::text[]) > 0)
       SELECT r.id FROM r WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.id = r.id)`,
      params,
    );
    return new Set(found.map((f) => f.id));
  }

  /**
   * `insertFirstRows` for one fan-out's rows: claimed (`delivering`, attempts = 1, a lease), or parked (`pending`,
   * attempts 0, no due time) for the deliveries named in `parked` (their webhook is switched off), and one
   * `event_fanouts` row naming `eventIds`; returns the ids of the rows created (a pair that had a row already is left
   * alone).
   */
  async insertClaimed(deliveries: NewDelivery[], eventIds: string[], leaseMs: number, parked: ReadonlySet<string> = new Set()): Promise<string[]> {
    const notCreated = await this.insertFirstRows(deliveries.map((delivery) => ({ delivery, parked: parked.has(delivery.deliveryId) })), eventIds, leaseMs);
    return deliveries.map((d) => d.deliveryId).filter((id) => !notCreated.has(id));
  }

  /**
   * Rows of events read past an organization's backlog (the dispatcher's read-ahead is full): `pending`, attempt 1
   * due now, no attempt made, and one `event_fanouts` row naming `eventIds`, in one statement. Returns the ids of
   * the rows created (a pair that had a row already is left alone: that row is the record).
   */
  async insertDue(deliveries: NewDelivery[], eventIds: string[]): Promise<string[]> {
    const sorted = [...deliveries].sort(compareDeliveries);
    const params = [
      pgArray(sorted.map((d) => d.deliveryId)),
      pgArray(sorted.map((d) => d.webhookId)),
      pgArray(sorted.map((d) => d.eventId)),
      pgArray(sorted.map((d) => d.organizationId)),
      pgArray(sorted.map((d) => d.eventType)),
      pgArray([...eventIds].sort()),
    ];
    return insertSkippingMissing(async (skipMissing) => {
      const guard = skipMissing ? `WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = u.webhook_id)` : '';
      const rows = await this.db.query<{ id: string }>(
        `WITH ins AS (
          INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, next_attempt_at)
          SELECT u.id, u.webhook_id, u.event_id, u.organization_id, u.event_type, 'pending', 0, now()
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, webhook_id, event_id, organization_id, event_type)
           ${guard}
          ON CONFLICT (webhook_id, event_id) DO NOTHING
          RETURNING id),
        fanned AS (INSERT INTO event_fanouts (event_ids) SELECT $6::text[] WHERE cardinality($6::text[]) > 0)
        SELECT id FROM ins`,
        params,
      );
      return rows.map((r) => r.id);
    });
  }

  /** Claims each attempt (in request order), from `pending` or from a holder whose lease ran out. */
  async claim(items: AttemptRef[], leaseMs: number): Promise<Claim[]> {
    // `delivering` with attempts = n means attempt n is in flight. A job claims its attempt from
    // `pending` (counting it), or takes over the same attempt number when its holder's lease ran out.
    // The second branch reads the rows as they were before this statement's update: a delivery
    // `delivering` at the job's attempt number that was not claimed holds a live lease.
    const rows = await this.db.query<ClaimRow>(
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
      [items.map((i) => i.deliveryId), items.map((i) => i.attemptNo), leaseMs],
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
  async renewLeases(items: AttemptRef[], leaseMs: number): Promise<Set<string>> {
    const rows = await this.db.query<{ id: string }>(
      `UPDATE deliveries d
          SET leased_until = now() + make_interval(secs => $3::float8 / 1000)
         FROM unnest($1::text[], $2::int[]) AS r(id, attempt_no)
        WHERE d.id = r.id AND d.attempts = r.attempt_no AND d.status = 'delivering'
       RETURNING d.id`,
      [items.map((i) => i.deliveryId), items.map((i) => i.attemptNo), leaseMs],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Writes each outcome's attempt row and its claimed delivery's new state, in one statement. `attemptIds` (one per
   * item) make a rerun after an outage idempotent: when the first run committed but its answer was lost, the rerun
   * writes no second attempt row (and its update no longer matches).
   */
  async recordAttempts(items: AttemptRecord[], attemptIds: string[] = items.map(() => newId('att'))): Promise<void> {
    await this.db.query(
      `WITH v AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::text[], $7::text[], $8::int[], $9::float8[], $10::float8[])
           AS v(attempt_id, delivery_id, attempt_no, status, status_code, error, snippet, duration_ms, started_ms, next_ms)),
       ins AS (
         INSERT INTO delivery_attempts (id, delivery_id, attempt_no, status_code, duration_ms, error, response_snippet, started_at)
         SELECT v.attempt_id, v.delivery_id, v.attempt_no, v.status_code, v.duration_ms, v.error, v.snippet, to_timestamp(v.started_ms / 1000)
           FROM v
         ON CONFLICT (id) DO NOTHING)
       UPDATE deliveries d
          SET status = v.status, leased_until = NULL,
              next_attempt_at = CASE WHEN v.next_ms IS NULL THEN NULL ELSE to_timestamp(v.next_ms / 1000) END,
              last_status_code = v.status_code, last_error = v.error,
              delivered_at = CASE WHEN v.status = 'delivered' THEN now() ELSE d.delivered_at END,
              updated_at = now()
         FROM v
        WHERE d.id = v.delivery_id AND d.attempts = v.attempt_no AND d.status = 'delivering'`,
      [
        attemptIds,
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

  /**
   * Hands a claimed attempt back without a POST: `pending` with the attempt's number unused (attempts − 1), due at
   * `dueAt` (epoch ms), or with no due time at all when null (parked while its webhook is disabled; see
   * `resumeParked`). False when the row is no longer held by this attempt.
   */
  async postpone(deliveryId: string, attemptNo: number, dueAt: number | null): Promise<boolean> {
    return (await this.postponeMany([{ deliveryId, attemptNo, dueAt }])).has(deliveryId);
  }

  /**
   * `postpone` for many attempts in one statement (the hand-backs of a destination turning its attempts away come in
   * bursts: one statement each kept the pool busy ahead of the log writer). Returns the ids handed back; an attempt
   * whose row was no longer `delivering` at its number (no longer ours) is left out.
   */
  async postponeMany(items: readonly { deliveryId: string; attemptNo: number; dueAt: number | null }[]): Promise<Set<string>> {
    if (items.length === 0) return new Set();
    const rows = await this.db.query<{ id: string }>(
      `UPDATE deliveries d
          SET status = 'pending', attempts = d.attempts - 1, leased_until = NULL,
              next_attempt_at = CASE WHEN v.due_ms IS NOT NULL THEN to_timestamp(v.due_ms / 1000)
                                     WHEN ${ACTIVE_AGAIN('d.webhook_id')} THEN now() END, updated_at = now()
         FROM unnest($1::text[], $2::int[], $3::float8[]) AS v(id, attempt_no, due_ms)
        WHERE d.id = v.id AND d.attempts = v.attempt_no AND d.status = 'delivering'
       RETURNING d.id`,
      [items.map((i) => i.deliveryId), items.map((i) => i.attemptNo), items.map((i) => i.dueAt)],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * A switched-off webhook was re-enabled: every open delivery waiting for a time is due now, the parked ones (no due
   * time) and the ones handed back or retried later alike. Parked rows created more than `maxParkedMs` ago are given
   * up instead (`dead`, replayable through the API), so a webhook switched off for long does not flood its receiver
   * with its whole backlog. The dispatchers enqueue the due rows' jobs (and the reconciler any they miss).
   */
  async resumeParked(webhookId: string, maxParkedMs = MAX_PARKED_MS): Promise<ResumedDeliveries> {
    const rows = await this.db.query<{ id: string; attempts: number; expired: boolean }>(
      `UPDATE deliveries
          SET status = CASE WHEN expired THEN 'dead' ELSE 'pending' END,
              next_attempt_at = CASE WHEN expired THEN NULL ELSE now() END,
              last_error = CASE WHEN expired THEN $3 ELSE last_error END, updated_at = now()
         FROM (SELECT id AS rid, next_attempt_at IS NULL AND created_at < now() - make_interval(secs => $2::float8 / 1000) AS expired
                 FROM deliveries WHERE webhook_id = $1 AND status = 'pending') p
        WHERE id = p.rid AND status = 'pending'
       RETURNING id, attempts, expired`,
      [webhookId, maxParkedMs, expiredParkedReason(maxParkedMs)],
    );
    const due = rows.filter((r) => !r.expired).map((r): DueDelivery => ({ id: r.id, status: 'pending', attempts: r.attempts }));
    return { due, expired: rows.length - due.length };
  }

  /**
   * A webhook's breaker closed after an outage: its pending deliveries due later, but within `withinMs` (the ones its
   * open breaker sent away, and retries that would come soon anyway), are due now. Returns them, for their jobs to
   * run now; after a Redis wipe the reconciler's due scan finds them at once rather than at their old due time.
   * Parked rows (no due time: a switched-off webhook) are left alone.
   */
  async dueNowOfWebhook(webhookId: string, withinMs: number): Promise<DueDelivery[]> {
    return this.db.query<DueDelivery>(
      `UPDATE deliveries SET next_attempt_at = now(), updated_at = now()
        WHERE webhook_id = $1 AND status = 'pending'
          AND next_attempt_at > now() AND next_attempt_at <= now() + make_interval(secs => $2::float8 / 1000)
       RETURNING id, status, attempts`,
      [webhookId, withinMs],
    );
  }

  /** A webhook's pending deliveries (parked, handed back or waiting for a retry), whatever their due time. */
  async pendingOfWebhook(webhookId: string): Promise<DueDelivery[]> {
    return this.db.query<DueDelivery>(`SELECT id, status, attempts FROM deliveries WHERE webhook_id = $1 AND status = 'pending' ORDER BY id`, [webhookId]);
  }

  /** A statement that reads nothing: does PostgreSQL answer? (the log's outage probe) */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /** Gives a claimed attempt up without a POST (its webhook was switched off or deleted). */
  async abandon(deliveryId: string, attemptNo: number, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE deliveries SET status = 'dead', leased_until = NULL, next_attempt_at = NULL, last_error = $3, updated_at = now()
       WHERE id = $1 AND attempts = $2 AND status = 'delivering'`,
      [deliveryId, attemptNo, reason],
    );
  }

  /**
   * Parked rows (pending, no due time) whose webhook is active: a fan-out that parked them from a stale cache committed
   * after the re-enabling's `resumeParked` had run, which did not see them. Made due now (the next `findDue` enqueues
   * them); left alone while younger than `graceMs` (their statement may still be deciding). Returns how many.
   */
  async unparkActive(graceMs: number, limit: number): Promise<number> {
    return this.db.affected(
      `UPDATE deliveries SET next_attempt_at = now(), updated_at = now()
        WHERE id IN (SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.active
                      WHERE d.status = 'pending' AND d.next_attempt_at IS NULL
                        AND d.updated_at < now() - make_interval(secs => $1::float8 / 1000)
                      LIMIT $2)
          AND status = 'pending' AND next_attempt_at IS NULL`,
      [graceMs, limit],
    );
  }

  /**
   * Open deliveries after `after` (id order) whose next attempt is overdue by more than `graceMs`, or
   * whose lease ran out.
   */
  async findDue(after: string, graceMs: number, limit: number): Promise<DueDelivery[]> {
    // the status list lets the planner use the partial index of open deliveries, not the whole table
    return this.db.query<DueDelivery>(
      `SELECT id, status, attempts
         FROM deliveries
        WHERE id > $1 AND status IN ('pending', 'delivering') AND (
              (status = 'pending' AND next_attempt_at < now() - make_interval(secs => $2::float8 / 1000))
           OR (status = 'delivering' AND leased_until < now()))
        ORDER BY id LIMIT $3`,
      [after, graceMs, limit],
    );
  }

  async countDead(): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'dead'`);
    return row.n;
  }
}

function compareDeliveries(a: NewDelivery, b: NewDelivery): number {
  if (a.webhookId !== b.webhookId) return a.webhookId < b.webhookId ? -1 : 1;
  return a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0;
}
