import { Job, Processor, Queue, Worker, WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { DELIVER_JOB, DELIVERY_JOB_OPTIONS, DELIVERY_QUEUE, DeliverJobData, deliveryJobId } from '@app/contracts';
import type { RedisKeys } from '@app/redis';

/** BullMQ priority of a backlog's first attempts (0 is none, which BullMQ serves first; higher numbers come later). */
const BACKLOG_PRIORITY = 1;

/** An attempt to trigger: the job carries ids only; the `deliveries` row is the record. */
export interface DeliveryJob {
  deliveryId: string;
  attemptNo: number;
}

/**
 * Both sides of the delivery queue: every job of an attempt is added here (the dispatcher's retries and
 * re-enqueues, the API's replays and test sends) with the deterministic id `deliveryJobId`, so a job
 * added twice collapses; the dispatcher's worker takes them from here. The only place that knows the
 * queue's name, its prefix and its job options.
 */
export class DeliveryQueue {
  private readonly queue: Queue<DeliverJobData>;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    this.queue = new Queue<DeliverJobData>(DELIVERY_QUEUE, { connection: redis, prefix: keys.bullPrefix, defaultJobOptions: DELIVERY_JOB_OPTIONS });
    // the shared connection's errors (a Redis restart) are its owner's to log; unheard, BullMQ prints each to stderr
    this.queue.on('error', () => undefined);
  }

  /** Adds the job of one attempt, delayed when `delayMs` is given. */
  async add(deliveryId: string, attemptNo: number, delayMs?: number): Promise<void> {
    const jobId = deliveryJobId(deliveryId, attemptNo);
    await this.queue.add(DELIVER_JOB, { deliveryId, attemptNo }, delayMs === undefined ? { jobId } : { jobId, delay: delayMs });
  }

  async addMany(jobs: readonly DeliveryJob[]): Promise<void> {
    await this.queue.addBulk(
      jobs.map((j) => ({ name: DELIVER_JOB, data: { deliveryId: j.deliveryId, attemptNo: j.attemptNo }, opts: { jobId: deliveryJobId(j.deliveryId, j.attemptNo) } })),
    );
  }

  /**
   * Makes the jobs of these attempts run now: added when missing, a delayed one promoted (a webhook re-enabled: its
   * handed-back attempts must not wait for their old due time). A job already waiting or running is left as is.
   */
  async runNow(jobs: readonly DeliveryJob[]): Promise<void> {
    for (let i = 0; i < jobs.length; i += 200) {
      const chunk = jobs.slice(i, i + 200);
      await this.addMany(chunk);
      await Promise.all(
        chunk.map(async (j) => {
          const job = await this.queue.getJob(deliveryJobId(j.deliveryId, j.attemptNo));
          // promote throws when the job left the delayed set meanwhile (it runs anyway)
          if (job && (await job.isDelayed())) await job.promote().catch(() => undefined);
        }),
      );
    }
  }

  /**
   * Adds the first attempts of a backlog read past (rows written `pending` by the fan-out) at a low priority: BullMQ
   * hands out every job without a priority (retries, replays, test sends) before these, and these in the order added.
   */
  async addBacklog(jobs: readonly DeliveryJob[]): Promise<void> {
    await this.queue.addBulk(
      jobs.map((j) => ({
        name: DELIVER_JOB,
        data: { deliveryId: j.deliveryId, attemptNo: j.attemptNo },
        opts: { jobId: deliveryJobId(j.deliveryId, j.attemptNo), priority: BACKLOG_PRIORITY },
      })),
    );
  }

  /** The jobs BullMQ holds in no state at all (waiting, delayed, active): lost, or never added. */
  async withoutJob<J extends DeliveryJob>(jobs: readonly J[]): Promise<J[]> {
    // a job hash exists while BullMQ holds the job in any state
    const pipeline = this.redis.pipeline();
    for (const j of jobs) pipeline.exists(this.queue.toKey(deliveryJobId(j.deliveryId, j.attemptNo)));
    const exists = (await pipeline.exec()) ?? [];
    return jobs.filter((_, i) => exists[i]?.[1] === 0);
  }

  /** Jobs waiting, delayed, active and prioritized, for the queue-depth gauge. */
  counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
  }

  /** A worker of this queue on `connection` (a blocking one of its own). */
  worker(processor: Processor<DeliverJobData>, options: Omit<WorkerOptions, 'prefix'>): Worker<DeliverJobData> {
    return new Worker<DeliverJobData>(DELIVERY_QUEUE, processor, { ...options, prefix: this.keys.bullPrefix });
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

/**
 * Moves the running job of an attempt handed back (its destination's breaker open, its share busy) into the backlog's
 * lane, due again at `dueAt`: it is handed out after the normal lane (retries of failed attempts, replays, test sends),
 * in turn with the spilled first attempts of a backlog. Otherwise the attempts of a destination that keeps turning them
 * away, due again every breaker cooldown, keep the normal lane busy and the spilled first attempts of every other
 * destination wait behind them (a webhook of the organization while its broker sink is down: issue 41 item 3).
 */
export async function handBackJob(job: Job<DeliverJobData>, dueAt: number, token?: string): Promise<void> {
  if (job.priority !== BACKLOG_PRIORITY) await job.changePriority({ priority: BACKLOG_PRIORITY });
  await job.moveToDelayed(dueAt, token);
}
