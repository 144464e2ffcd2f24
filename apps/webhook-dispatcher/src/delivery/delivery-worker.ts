import { DelayedError, Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { DeliverJobData } from '@app/contracts';
import { handBackJob, type DeliveryQueue } from '@app/events';
import type { WebhookDirectory } from '../webhooks/webhook-directory';
import { envelopeBody } from './delivery-request';
import type { DeliverySender } from './delivery-sender';
import type { DeliveryStore } from './delivery-store';

export interface DeliveryWorkerOptions {
  queue: Pick<DeliveryQueue, 'worker'>;
  /** a blocking connection of its own */
  connection: Redis;
  concurrency: number;
  lockMs: number;
}

/**
 * Retries (and replays, and attempts the reconciler put back) come as BullMQ jobs: one job = one
 * attempt. The job claims its delivery in PostgreSQL (a lease), then the sender POSTs and records it,
 * as for a first attempt made straight from the fan-out. An attempt the fair scheduler hands back is
 * `pending` again and its job delayed to the new due time; one of a switched-off webhook (`active: false`) is
 * parked (no job) until the webhook is re-enabled.
 */
export class DeliveryWorker {
  private worker: Worker<DeliverJobData> | null = null;

  constructor(
    private readonly store: Pick<DeliveryStore, 'claim' | 'abandon' | 'postpone'>,
    private readonly directory: Pick<WebhookDirectory, 'get'>,
    private readonly sender: Pick<DeliverySender, 'send'>,
    private readonly leaseMs: number,
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  start(options: DeliveryWorkerOptions): void {
    this.worker = options.queue.worker((job, token) => this.attempt(job, token), {
      connection: options.connection,
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: Math.max(1000, Math.floor(options.lockMs / 2)),
      // a stalled attempt is safe to run again: the PostgreSQL lease decides who POSTs
      maxStalledCount: 100,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    });
    this.worker.on('error', (err) => this.log.error({ err }, 'delivery worker error'));
  }

  /** Stops taking jobs and waits for the attempts in flight (their leases cover a forced exit). */
  async stop(): Promise<void> {
    await this.worker?.close();
  }

  async attempt(job: Job<DeliverJobData>, token?: string): Promise<void> {
    const { deliveryId, attemptNo } = job.data;
    const claimedAt = this.clock();
    const claim = await this.store.claim(deliveryId, attemptNo);
    if (claim.kind === 'gone') return;
    if (claim.kind === 'leased') {
      // another dispatcher is on it; come back when its lease ends, in case it died
      await job.moveToDelayed(Math.max(claim.leasedUntil, this.clock()) + 250, token);
      throw new DelayedError();
    }
    const webhook = await this.directory.get(claim.webhookId);
    if (webhook && !webhook.active) {
      // switched off (by a user, or by the dispatchers after failing continuously): parked (pending, no due time)
      // until re-enabled
      await this.store.postpone(deliveryId, attemptNo, null);
      return;
    }
    if (!webhook) {
      await this.store.abandon(deliveryId, attemptNo, 'webhook was deleted');
      return;
    }
    const sent = await this.sender.send({
      deliveryId,
      attemptNo,
      attemptBase: claim.attemptBase,
      webhook,
      eventId: claim.envelope.id,
      eventType: claim.envelope.event,
      sessionId: claim.envelope.sessionId,
      eventTimestamp: claim.envelope.timestamp,
      body: envelopeBody(claim.envelope),
      leaseUntil: claimedAt + this.leaseMs,
      viaJob: true,
    });
    if (sent.kind === 'postponed' && sent.until !== null) {
      // handed back (breaker open, webhook's share busy): this job comes back when the row is due again, in the
      // backlog's lane (other destinations' waiting first attempts are not kept behind it)
      await handBackJob(job, sent.until, token);
      throw new DelayedError();
    }
  }
}
