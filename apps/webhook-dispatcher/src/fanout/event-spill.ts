import type { Logger } from 'pino';
import type { EventEnvelope } from '@app/contracts';
import type { DeliveriesRepository } from '@app/database';
import type { DeliveryQueue } from '@app/events';
import { FanoutDeps, planDeliveries } from './event-fanout';

/**
 * Fans out events the consumer reads past an organization's backlog (the read-ahead is full and that organization
 * holds its share of it): their delivery rows are written `pending`, attempt 1 due now, in one statement that also
 * records the events fanned out; once it commits the rows are the record and the entries may be acknowledged.
 * Nothing is held in memory: each row's first attempt is a low-priority job (BullMQ hands out retries, replays and
 * test sends first), and a job lost before it is added is enqueued by the reconciler's due scan.
 */
export class EventSpill {
  private readonly adds = new Set<Promise<void>>();

  constructor(
    private readonly deliveries: Pick<DeliveriesRepository, 'insertDue'>,
    private readonly directory: FanoutDeps,
    private readonly queue: Pick<DeliveryQueue, 'addBacklog'>,
    private readonly log: Logger,
    private readonly onCreated: (n: number) => void = () => undefined,
  ) {}

  /** Resolves once the rows are committed; their jobs are added after, without holding the reader. */
  async spill(envelopes: EventEnvelope[]): Promise<void> {
    if (envelopes.length === 0) return;
    await this.directory.settled();
    const planned = planDeliveries(envelopes, this.directory);
    const created = await this.deliveries.insertDue(
      planned.map((p) => ({ deliveryId: p.id, webhookId: p.webhook.id, eventId: p.envelope.id, organizationId: p.envelope.organizationId, eventType: p.envelope.event })),
      envelopes.map((e) => e.id),
    );
    this.log.debug({ events: envelopes.length, rows: created.length }, 'events read past a backlog written due');
    if (created.length === 0) return;
    this.onCreated(created.length);
    const add = this.queue
      .addBacklog(created.map((deliveryId) => ({ deliveryId, attemptNo: 1 })))
      // the rows are due and committed: the reconciler enqueues what has no job
      .catch((err) => this.log.warn({ reason: (err as Error).message, count: created.length }, 'backlog jobs not added; the reconciler enqueues them'))
      .finally(() => this.adds.delete(add));
    this.adds.add(add);
  }

  /** Waits for the job adds in flight (at shutdown). */
  async drain(): Promise<void> {
    while (this.adds.size) await Promise.allSettled([...this.adds]);
  }
}
