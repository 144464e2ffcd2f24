import type { Logger } from 'pino';
import type { DeliveriesRepository } from '@app/database';
import type { DeliveryQueue } from '@app/events';

/**
 * A switched-off webhook is active again: the jobs of all its pending deliveries run now. The API has already made
 * them due (`resumeParked`, before it announced the change); the parked ones have no job at all and the ones its
 * breaker handed back have a job delayed to their old due time, so without this they would wait for the
 * reconciler's pass or that time. Every replica hears the change and does this; job ids make it idempotent.
 */
export class ParkedResumer {
  constructor(
    private readonly deliveries: Pick<DeliveriesRepository, 'pendingOfWebhook'>,
    private readonly queue: Pick<DeliveryQueue, 'runNow'>,
    private readonly log: Logger,
  ) {}

  async resume(webhookId: string): Promise<number> {
    const pending = await this.deliveries.pendingOfWebhook(webhookId);
    await this.queue.runNow(pending.map((d) => ({ deliveryId: d.id, attemptNo: d.attempts + 1 })));
    if (pending.length) this.log.info({ webhookId, deliveries: pending.length }, 'webhook re-enabled: its pending deliveries run now');
    return pending.length;
  }

  /** Fire and forget, for the directory's listener: a failure leaves the rows to the reconciler (they are due). */
  resumeSoon(webhookId: string): void {
    this.resume(webhookId).catch((err: Error) =>
      this.log.warn({ webhookId, reason: err.message }, 'pending deliveries of a re-enabled webhook not enqueued; the reconciler will'),
    );
  }
}

/**
 * A webhook's breaker closed after its open period sent attempts away (`FairScheduler`'s open park): their deliveries
 * are made due now and their jobs run now (added when missing, promoted when delayed), instead of at the end of the
 * park. Every replica whose breaker closes does this for the whole webhook (job ids make it idempotent); a release
 * missed (the replica died, a hand-back still being written) leaves those attempts to their due time, at most the park
 * later, or to the reconciler when Redis lost their jobs.
 */
export class OpenParkReleaser {
  /** webhooks being released, and whether another release was asked for meanwhile */
  private readonly running = new Map<string, boolean>();

  constructor(
    private readonly deliveries: Pick<DeliveriesRepository, 'dueNowOfWebhook'>,
    private readonly queue: Pick<DeliveryQueue, 'runNow'>,
    /** how far ahead a pending delivery's due time may be and still be released: the longest open park */
    private readonly withinMs: number,
    private readonly log: Logger,
  ) {}

  async release(webhookId: string): Promise<number> {
    const due = await this.deliveries.dueNowOfWebhook(webhookId, this.withinMs);
    await this.queue.runNow(due.map((d) => ({ deliveryId: d.id, attemptNo: d.attempts + 1 })));
    if (due.length) this.log.info({ webhookId, deliveries: due.length }, 'breaker closed: the deliveries it sent away run now');
    return due.length;
  }

  /** Fire and forget, for the scheduler's signal; a release asked for while one runs runs once more after it. */
  releaseSoon(webhookId: string): void {
    if (this.running.has(webhookId)) {
      this.running.set(webhookId, true);
      return;
    }
    this.running.set(webhookId, false);
    this.release(webhookId)
      .catch((err: Error) =>
        this.log.warn({ webhookId, reason: err.message }, 'deliveries sent away by an open breaker not released; they run at their due time'),
      )
      .finally(() => {
        const again = this.running.get(webhookId);
        this.running.delete(webhookId);
        if (again) this.releaseSoon(webhookId);
      });
  }
}
