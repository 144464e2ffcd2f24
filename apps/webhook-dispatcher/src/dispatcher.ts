import { BeforeApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import type { DeliveryQueue } from '@app/events';
import { createRedis, Redis } from '@app/redis';
import type { DeliverySender } from './delivery/delivery-sender';
import type { DeliveryWorker } from './delivery/delivery-worker';
import type { EventConsumer } from './fanout/event-consumer';
import type { EventTracker } from './fanout/event-tracker';
import type { Reconciler } from './reconciler';
import type { WebhookDirectory } from './webhooks/webhook-directory';

/**
 * The blocking and subscribed connections of one dispatcher, each its own (a blocked or subscribed connection can run
 * nothing else); plain commands share the process's client.
 */
export class DispatcherConnections {
  readonly subscriber: Redis;
  readonly streamReader: Redis;
  readonly worker: Redis;

  constructor(redisUrl: string, shared: Redis, log: Logger) {
    this.subscriber = createRedis(redisUrl);
    this.streamReader = createRedis(redisUrl);
    this.worker = createRedis(redisUrl);
    const named = { redis: shared, subscriber: this.subscriber, streamReader: this.streamReader, workerConnection: this.worker };
    for (const [name, conn] of Object.entries(named)) {
      conn.on('error', (err) => log.warn({ connection: name, reason: err.message }, 'redis connection error'));
    }
  }

  /**
   * Resolves once every connection passed its ready check: a connection must not enter subscriber mode (or block)
   * while its ready check is still on the wire, or the check fails and the connection is dropped.
   */
  async ready(): Promise<void> {
    await Promise.all(
      [this.subscriber, this.streamReader, this.worker].map((c) => (c.status === 'ready' ? undefined : new Promise<void>((resolve) => c.once('ready', () => resolve())))),
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.subscriber, this.streamReader, this.worker].map((c) => c.quit().catch(() => c.disconnect())));
  }
}

/** What a Dispatcher drives; each provided by DispatcherModule. */
export interface DispatcherParts {
  directory: Pick<WebhookDirectory, 'start' | 'stop'>;
  sender: Pick<DeliverySender, 'start' | 'stop'>;
  consumer: Pick<EventConsumer, 'start' | 'stop'>;
  worker: Pick<DeliveryWorker, 'start' | 'stop'>;
  tracker: Pick<EventTracker, 'drain'>;
  reconciler: Pick<Reconciler, 'start' | 'stop'>;
  /** every kind's delivery step (HTTP client, broker connections), closed last */
  destinations: { close(): Promise<void> };
  queue: DeliveryQueue;
  connections: Pick<DispatcherConnections, 'worker' | 'ready' | 'close'>;
  /** starts the health/readiness/metrics server */
  opsServer: () => Promise<{ port: number; close: () => Promise<void> }>;
  log: Logger;
}

export interface DispatcherSettings {
  concurrency: number;
  jobLockMs: number;
}

/**
 * The dispatcher's lifecycle: the event consumer (stream → delivery rows inserted claimed, in batches → XACK, and
 * the first attempts once their rows are committed), the sender (signed POSTs, batched records, retry jobs), the delivery worker (retry jobs), the
 * reconciler (PostgreSQL → lost Redis state), the webhook cache and the ops server. `stop` runs before the application
 * context closes the shared Redis client and the data source.
 */
export class Dispatcher implements BeforeApplicationShutdown {
  private ops: { port: number; close: () => Promise<void> } | null = null;
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly settings: DispatcherSettings,
    private readonly parts: DispatcherParts,
  ) {}

  get opsPort(): number {
    return this.ops?.port ?? 0;
  }

  async start(): Promise<void> {
    const { directory, sender, consumer, worker, reconciler, queue, connections, log } = this.parts;
    await connections.ready();
    await directory.start();
    sender.start();
    await consumer.start();
    worker.start({ queue, connection: connections.worker, concurrency: this.settings.concurrency, lockMs: this.settings.jobLockMs });
    reconciler.start();
    this.ops = await this.parts.opsServer();
    log.info({ port: this.ops.port, concurrency: this.settings.concurrency }, 'webhook dispatcher started');
  }

  stop(): Promise<void> {
    const { directory, sender, consumer, worker, tracker, reconciler, destinations, queue, connections } = this.parts;
    this.stopping ??= (async () => {
      // stop taking work first, then let in-flight attempts finish; a lease covers any we abandon
      void reconciler.stop();
      directory.stop();
      await consumer.stop();
      await worker.stop();
      await sender.stop();
      await tracker.drain();
      await reconciler.stop();
      await this.ops?.close();
      await destinations.close();
      await queue.close();
      await connections.close();
    })();
    return this.stopping;
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }
}
