import type { Logger } from 'pino';
import type { DeliveriesRepository, EventsRepository } from '@app/database';
import type { DeliveryQueue, ReconcileLock } from '@app/events';
import type { EventFanout } from './fanout/event-fanout';

/**
 * An event younger than this is still on its way through the stream: a fresh entry (read within
 * FRESH_ENTRY_MS) has its rows inserted well within it. Rows are inserted claimed before any call, here as
 * there, and a (webhook, event) pair has one row, so the two cannot both POST.
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

  constructor(
    private readonly events: Pick<EventsRepository, 'outboxWindow' | 'findNotFannedOut' | 'advanceCheckpoint'>,
    private readonly deliveries: Pick<DeliveriesRepository, 'findDue' | 'unparkActive'>,
    private readonly lock: Pick<ReconcileLock, 'tryAcquire'>,
    private readonly queue: Pick<DeliveryQueue, 'withoutJob' | 'addMany'>,
    private readonly fanout: Pick<EventFanout, 'fanOut'>,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

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
      if (!(await this.lock.tryAcquire(Math.max(1000, this.intervalMs - 100)))) return;
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
    const window = await this.events.outboxWindow(CHECKPOINT, FANOUT_GRACE_MS);
    if (!window) return;
    let after = '';
    for (;;) {
      // events of the window older than the grace (tx < hi) that no fan-out statement recorded
      const rows = await this.events.findNotFannedOut(window, after, BATCH);
      if (rows.length === 0) break;
      after = rows[rows.length - 1].id;
      const created = await this.fanout.fanOut(rows.map((r) => r.envelope));
      this.log.info({ events: rows.length, deliveries: created }, 'fanned out events the stream did not deliver');
      if (rows.length < BATCH) break;
    }
    if (BigInt(window.hi) > BigInt(window.lo)) await this.events.advanceCheckpoint(CHECKPOINT, window.hi);
  }

  private async requeueOrphans(): Promise<void> {
    // a row parked from a stale cache just after its webhook was re-enabled: due now, enqueued by a later pass
    const unparked = await this.deliveries.unparkActive(DUE_GRACE_MS, BATCH);
    if (unparked) this.log.warn({ count: unparked }, 'made due the deliveries parked after their webhook was re-enabled');
    let after = '';
    for (;;) {
      const rows = await this.deliveries.findDue(after, DUE_GRACE_MS, BATCH);
      if (rows.length === 0) return;
      after = rows[rows.length - 1].id;
      // pending: the next attempt; delivering: the attempt whose holder let its lease run out, redone
      // under the same number (a first attempt made from the fan-out never had a job at all)
      const due = rows.map((r) => ({ deliveryId: r.id, attemptNo: r.status === 'pending' ? r.attempts + 1 : Math.max(1, r.attempts) }));
      const missing = await this.queue.withoutJob(due);
      if (missing.length) {
        await this.queue.addMany(missing);
        this.log.warn({ count: missing.length }, 're-enqueued deliveries whose job was lost or whose attempt was abandoned');
      }
      if (rows.length < BATCH) return;
    }
  }
}
