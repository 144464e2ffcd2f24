import type { Logger } from 'pino';
import type { EventEnvelope } from '@app/contracts';
import type { DeliveriesRepository } from '@app/database';
import type { DeliveryQueue } from '@app/events';
import { ReadAhead, spillOut } from './read-ahead';
import { EventFanout, FanoutDeps, planDeliveries } from './event-fanout';

/** Backlog jobs per BullMQ call: an add is one MULTI, and Redis serves nothing else (the stream reads) meanwhile. */
const ADD_CHUNK = 100;

/**
 * Fans out events the consumer reads past an organization's backlog (the read-ahead is full and that organization
 * holds its share of it): their delivery rows are written `pending`, attempt 1 due now, in one statement that also
 * records the events fanned out; once it commits the rows are the record and the entries may be acknowledged.
 * Nothing is held in memory: each row's first attempt is a low-priority job (BullMQ hands out retries, replays and
 * test sends first), and a job lost before it is added is enqueued by the reconciler's due scan.
 */
export class EventSpill {
  private readonly adds = new Set<Promise<void>>();
  /** the job adds, one chunk at a time, in the order the rows were written */
  private chain: Promise<void> = Promise.resolve();

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
    const startedAt = Date.now();
    const created = await this.deliveries.insertDue(
      planned.map((p) => ({ deliveryId: p.id, webhookId: p.webhook.id, eventId: p.envelope.id, organizationId: p.envelope.organizationId, eventType: p.envelope.event })),
      envelopes.map((e) => e.id),
    );
    this.log.debug({ events: envelopes.length, rows: created.length, ms: Date.now() - startedAt }, 'events read past a backlog written due');
    if (created.length === 0) return;
    this.onCreated(created.length);
    const jobs = created.map((deliveryId) => ({ deliveryId, attemptNo: 1 }));
    const add = (this.chain = this.chain.then(() => this.addJobs(jobs)));
    this.adds.add(add);
    void add.finally(() => this.adds.delete(add));
  }

  private async addJobs(jobs: { deliveryId: string; attemptNo: number }[]): Promise<void> {
    try {
      for (let i = 0; i < jobs.length; i += ADD_CHUNK) await this.queue.addBacklog(jobs.slice(i, i + ADD_CHUNK));
    } catch (err) {
      // the rows are due and committed: the reconciler enqueues what has no job
      this.log.warn({ reason: (err as Error).message, count: jobs.length }, 'backlog jobs not added; the reconciler enqueues them');
    }
  }

  /** Waits for the job adds in flight (at shutdown). */
  async drain(): Promise<void> {
    while (this.adds.size) await Promise.allSettled([...this.adds]);
  }
}

/**
 * The reconciler's fan-out of stragglers: the events of a stalled organization (or past the read-ahead's cap) are
 * spilled as the consumer's are, the others fanned out with claimed rows. Without it, a backlog the consumer read past
 * would come back into memory through the outbox scan. Returns the rows the claimed fan-out created.
 */
export function fanOutOrSpill(
  fanout: Pick<EventFanout, 'fanOut'>,
  spill: Pick<EventSpill, 'spill'>,
  readAhead: Omit<ReadAhead, 'room'>,
): Pick<EventFanout, 'fanOut'> {
  return {
    fanOut: async (envelopes: EventEnvelope[]) => {
      const rest = new Map(envelopes.map((envelope) => [envelope.id, { envelope, entryIds: [] as string[], text: '' }]));
      const spilled = spillOut([rest], readAhead, false);
      await spill.spill(spilled.map((g) => g.envelope));
      return fanout.fanOut([...rest.values()].map((g) => g.envelope));
    },
  };
}
