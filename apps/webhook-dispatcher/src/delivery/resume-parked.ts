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
