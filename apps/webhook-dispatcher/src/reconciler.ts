import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { DELIVER_JOB, DeliverJobData, deliveryJobId, EventEnvelope } from '@app/contracts';
import type { RedisKeys } from '@app/redis';
import type { EventFanout } from './fanout/event-fanout';

/**
 * An event younger than this is still on its way through the stream: a fresh entry (read within
 * FRESH_ENTRY_MS) has its rows written, or claimed after HOLD_AFTER_MS, well within it. Older entries
 * are fanned out with claimed rows, as here, so the two cannot both POST.
 */
const FANOUT_GRACE_MS = 10_000;
/** A due delivery younger than this may have its job being added right now. */
const DUE_GRACE_MS = 2000;
const BATCH = 500;
/** The reconciler's row in outbox_checkpoints. */
const CHECKPOINT = 'webhook-dispatcher';

/**
 * PostgreSQL is the record, Redis the engine: this puts back whatever the engine lost. It fans out
 * outbox events the stream never delivered, and re-enqueues deliveries that are due (or whose lease
 * expired) but have no job in BullMQ, e.g. after Redis restarted empty. One replica runs it per
 * interval (a short Redis lock); running it twice would still be harmless, since fan-out and job ids are
 * idempotent.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly lockKey: string;
  private readonly owner = randomBytes(8).toString('hex');

  constructor(
    private readonly db: DataSource,
    private readonly redis: Redis,
    keys: RedisKeys,
    private readonly queue: Queue<DeliverJobData>,
    private readonly fanout: EventFanout,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {
    this.lockKey = keys.key('dispatcher:reconcile-lock');
  }

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.tick().finally(() => (this.running = null));
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  async tick(): Promise<void> {
    try {
      const won = await this.redis.set(this.lockKey, this.owner, 'PX', Math.max(1000, this.intervalMs - 100), 'NX');
      if (!won) return;
      await this.fanOutStragglers();
      await this.requeueOrphans();
    } catch (err) {
      this.log.error({ err }, 'reconcile pass failed');
    }
  }

  /**
   * Fans out the outbox events the stream did not deliver, without a per-event mark to look for: every
   * event with `tx` below the checkpoint is fanned out, and each fan-out statement records its events in
   * `event_fanouts`. A pass looks at `[checkpoint, xmin)`, where xmin is the oldest transaction still
   * running: every event inserted below it has committed (or never will), so an insert committing late
   * is still ahead of the checkpoint. Events older than the grace with no fan-out row are fanned out
   * (claimed rows first), and the checkpoint moves up to the oldest event still within the grace, or to
   * xmin. Fan-out rows behind the new checkpoint only name events behind it, and are deleted.
   */
  private async fanOutStragglers(): Promise<void> {
    const [state]: { lo: string; hi: string; young: string | null }[] = await this.db.query(
      `WITH c AS (SELECT tx AS lo FROM outbox_checkpoints WHERE name = $1),
            s AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS hi)
       SELECT c.lo, s.hi,
              (SELECT min(e.tx) FROM events e
                WHERE e.tx >= c.lo AND e.tx < s.hi AND e.created_at >= now() - make_interval(secs => $2::float8 / 1000)) AS young
         FROM c, s`,
      [CHECKPOINT, FANOUT_GRACE_MS],
    );
    if (!state) {
      // a database migrated before the checkpoint existed has its row; this only guards a manual wipe
      await this.db.query(
        `INSERT INTO outbox_checkpoints (name, tx) VALUES ($1, 0) ON CONFLICT (name) DO NOTHING`,
        [CHECKPOINT],
      );
      return;
    }
    const lo = state.lo;
    const hi = state.young ?? state.hi;
    let after = '';
    for (;;) {
      // events of the window older than the grace (tx < hi) that no fan-out statement recorded
      const rows: { id: string; envelope: EventEnvelope }[] = await this.db.query(
        // the window is read through the BRIN index and only then sorted: ordering the events by id
        // made the planner walk the primary key over the whole table (~270 ms at a million rows, against
        // ~80 ms for a 120 000-event window whatever the table's size)
        `WITH w AS MATERIALIZED (SELECT id FROM events WHERE tx >= $1::bigint AND tx < $2::bigint),
              done AS (SELECT unnest(event_ids) AS id FROM event_fanouts WHERE tx >= $1::bigint),
              todo AS (SELECT w.id FROM w WHERE w.id > $3 AND NOT EXISTS (SELECT 1 FROM done WHERE done.id = w.id)
                        ORDER BY w.id LIMIT $4)
         SELECT e.id, e.envelope FROM events e JOIN todo USING (id) ORDER BY e.id`,
        [lo, hi, after, BATCH],
      );
      if (rows.length === 0) break;
      after = rows[rows.length - 1].id;
      const created = await this.fanout.fanOut(rows.map((r) => r.envelope));
      this.log.info({ events: rows.length, deliveries: created }, 'fanned out events the stream did not deliver');
      if (rows.length < BATCH) break;
    }
    if (BigInt(hi) > BigInt(lo)) {
      await this.db.query(
        `WITH moved AS (UPDATE outbox_checkpoints SET tx = $2::bigint, updated_at = now() WHERE name = $1 AND tx < $2::bigint)
         DELETE FROM event_fanouts WHERE tx < $2::bigint`,
        [CHECKPOINT, hi],
      );
    }
  }

  private async requeueOrphans(): Promise<void> {
    let after = '';
    for (;;) {
      // the status list lets the planner use the partial index of open deliveries, not the whole table
      const rows: { id: string; status: string; attempts: number }[] = await this.db.query(
        `SELECT id, status, attempts
           FROM deliveries
          WHERE id > $1 AND status IN ('pending', 'delivering') AND (
                (status = 'pending' AND next_attempt_at < now() - make_interval(secs => $2::float8 / 1000))
             OR (status = 'delivering' AND leased_until < now()))
          ORDER BY id LIMIT $3`,
        [after, DUE_GRACE_MS, BATCH],
      );
      if (rows.length === 0) return;
      after = rows[rows.length - 1].id;
      // pending: the next attempt; delivering: the attempt whose holder let its lease run out, redone
      // under the same number (a first attempt made from the fan-out never had a job at all)
      const due = rows.map((r) => ({ id: r.id, attemptNo: r.status === 'pending' ? r.attempts + 1 : Math.max(1, r.attempts) }));
      // a job hash exists while BullMQ holds the job in any state (waiting, delayed, active)
      const pipeline = this.redis.pipeline();
      for (const d of due) pipeline.exists(this.queue.toKey(deliveryJobId(d.id, d.attemptNo)));
      const exists = (await pipeline.exec()) ?? [];
      const missing = due.filter((_, i) => exists[i]?.[1] === 0);
      if (missing.length) {
        await this.queue.addBulk(
          missing.map((d) => ({
            name: DELIVER_JOB,
            data: { deliveryId: d.id, attemptNo: d.attemptNo },
            opts: { jobId: deliveryJobId(d.id, d.attemptNo) },
          })),
        );
        this.log.warn({ count: missing.length }, 're-enqueued deliveries whose job was lost or whose attempt was abandoned');
      }
      if (rows.length < BATCH) return;
    }
  }
}
