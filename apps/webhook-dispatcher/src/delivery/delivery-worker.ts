import { DelayedError, Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { DELIVER_JOB, DELIVERY_QUEUE, DeliverJobData, deliveryJobId } from '@app/contracts';
import type { WebhookDirectory } from '../webhooks/webhook-directory';
import type { DispatcherMetrics } from '../metrics';
import { deliveryHeaders, envelopeBody } from './delivery-request';
import type { DeliveryStore } from './delivery-store';
import { nextStep } from './retry-schedule';
import type { WebhookClient } from './webhook-client';

export interface DeliveryWorkerOptions {
  connection: Redis;
  bullPrefix: string;
  concurrency: number;
  lockMs: number;
}

/**
 * One job = one attempt. The attempt claims its delivery in PostgreSQL (a lease), POSTs, records the
 * outcome, and, when another try is due, persists next_attempt_at before adding the delayed job for
 * it, so the record always knows more than Redis does.
 */
export class DeliveryWorker {
  private worker: Worker<DeliverJobData> | null = null;

  constructor(
    private readonly queue: Queue<DeliverJobData>,
    private readonly store: DeliveryStore,
    private readonly directory: WebhookDirectory,
    private readonly client: WebhookClient,
    private readonly metrics: DispatcherMetrics,
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  start(options: DeliveryWorkerOptions): void {
    this.worker = new Worker<DeliverJobData>(DELIVERY_QUEUE, (job, token) => this.attempt(job, token), {
      connection: options.connection,
      prefix: options.bullPrefix,
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
    const claim = await this.store.claim(deliveryId, attemptNo);
    if (claim.kind === 'gone') return;
    if (claim.kind === 'leased') {
      // another dispatcher is on it; come back when its lease ends, in case it died
      await job.moveToDelayed(Math.max(claim.leasedUntil, this.clock()) + 250, token);
      throw new DelayedError();
    }
    const webhook = await this.directory.get(claim.webhookId);
    if (!webhook || !webhook.active) {
      await this.store.abandon(deliveryId, attemptNo, webhook ? 'webhook is inactive' : 'webhook was deleted');
      return;
    }
    const body = envelopeBody(claim.envelope);
    const startedAt = this.clock();
    const headers = deliveryHeaders({
      eventId: claim.envelope.id,
      body,
      secret: webhook.secret,
      customHeaders: webhook.customHeaders,
      now: startedAt,
    });
    const result = await this.client.post(webhook.url, headers, body);
    const finishedAt = this.clock();
    const step = nextStep(webhook.retryPolicy, attemptNo - claim.attemptBase, result, finishedAt);
    const nextAttemptAt = step.kind === 'retry' ? finishedAt + step.delayMs : null;
    await this.store.record({
      deliveryId,
      attemptNo,
      status: step.kind === 'retry' ? 'pending' : step.kind,
      statusCode: result.statusCode,
      error: result.error,
      snippet: result.snippet,
      durationMs: result.durationMs,
      startedAt,
      nextAttemptAt,
    });
    if (step.kind === 'retry') {
      await this.queue.add(
        DELIVER_JOB,
        { deliveryId, attemptNo: attemptNo + 1 },
        { jobId: deliveryJobId(deliveryId, attemptNo + 1), delay: step.delayMs },
      );
    }
    this.metrics.attemptSeconds.observe({ result: step.kind === 'delivered' ? 'success' : 'failure' }, result.durationMs / 1000);
    if (result.refused) this.metrics.outcomes.inc({ outcome: 'refused' });
    this.metrics.outcomes.inc({ outcome: step.kind });
    if (step.kind === 'delivered') {
      this.metrics.eventToDeliverySeconds.observe(Math.max(0, finishedAt - claim.envelope.timestamp) / 1000);
    } else {
      this.log.info({ deliveryId, webhookId: webhook.id, attemptNo, statusCode: result.statusCode, error: result.error, next: step.kind }, 'delivery attempt failed');
    }
  }
}
