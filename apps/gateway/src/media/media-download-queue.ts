import { Processor, Queue, Worker, WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { MEDIA_DOWNLOAD_JOB, MEDIA_DOWNLOAD_QUEUE, MediaDownloadJobData } from '@app/contracts';
import type { RedisKeys } from '@app/redis';

export interface MediaDownloadRetries {
  attempts: number;
  /** first retry delay; doubles per try */
  backoffMs: number;
}

/**
 * The eager media download queue (BullMQ, under the deployment's Redis prefix): the only place that knows its name,
 * prefix and job options. One job per inbound media message, its id the message id (added twice, it runs once while
 * held); retried with exponential backoff; kept a day after its last failure for inspection.
 */
export class MediaDownloadQueue {
  private readonly queue: Queue<MediaDownloadJobData>;

  constructor(
    redis: Redis,
    private readonly keys: RedisKeys,
    retries: MediaDownloadRetries,
  ) {
    this.queue = new Queue<MediaDownloadJobData>(MEDIA_DOWNLOAD_QUEUE, {
      connection: redis,
      prefix: keys.bullPrefix,
      defaultJobOptions: {
        attempts: retries.attempts,
        backoff: { type: 'exponential', delay: retries.backoffMs },
        removeOnComplete: true,
        removeOnFail: { age: 24 * 3600 },
      },
    });
    // the shared connection's errors (a Redis restart) are its owner's to log
    this.queue.on('error', () => undefined);
  }

  async add(messageId: string): Promise<void> {
    await this.queue.add(MEDIA_DOWNLOAD_JOB, { messageId }, { jobId: messageId });
  }

  worker(processor: Processor<MediaDownloadJobData>, options: Omit<WorkerOptions, 'prefix'>): Worker<MediaDownloadJobData> {
    return new Worker<MediaDownloadJobData>(MEDIA_DOWNLOAD_QUEUE, processor, { ...options, prefix: this.keys.bullPrefix });
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

