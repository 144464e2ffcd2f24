import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { DispatcherConfig } from '@app/config';
import { SecretBox } from '@app/crypto';
import { dataSourceOptions, DeliveriesRepository, EventsRepository, WebhooksRepository } from '@app/database';
import { DeliveryQueue, EventStream, WebhookChanges } from '@app/events';
import { checkDependencies, startOpsServer } from '@app/observability';
import { createRedis, RedisKeys } from '@app/redis';
import { DeliverySender } from './delivery/delivery-sender';
import { DeliveryStore } from './delivery/delivery-store';
import { DeliveryWorker } from './delivery/delivery-worker';
import { WebhookClient } from './delivery/webhook-client';
import { EventConsumer, READ_COUNT } from './fanout/event-consumer';
import { EventFanout } from './fanout/event-fanout';
import { EventTracker } from './fanout/event-tracker';
import { DispatcherMetrics } from './metrics';
import { Reconciler } from './reconciler';
import { WebhookDirectory } from './webhooks/webhook-directory';

/** Extra time a lease grants beyond the request timeout, for recording the outcome. */
const LEASE_MARGIN_MS = 2000;
const DEAD_COUNT_CACHE_MS = 10_000;

export interface RunningDispatcher {
  opsPort: number;
  stop(): Promise<void>;
}

/**
 * Wires the dispatcher: the event consumer (stream → first attempts, sent at once → delivery rows
 * written after the POSTs → XACK), the sender (signed POSTs, batched records, retry jobs), the delivery worker (retry jobs), the reconciler (PostgreSQL → lost Redis state), the webhook cache and the ops server.
 */
export async function startDispatcher(config: DispatcherConfig, log: Logger): Promise<RunningDispatcher> {
  const keys = new RedisKeys(config.REDIS_KEY_PREFIX);
  const db = new DataSource(dataSourceOptions(config.DATABASE_URL, { extra: { max: 12 } }));
  await db.initialize();
  const redis = createRedis(config.REDIS_URL);
  const subscriber = createRedis(config.REDIS_URL);
  const streamReader = createRedis(config.REDIS_URL);
  const workerConnection = createRedis(config.REDIS_URL);
  for (const [name, conn] of Object.entries({ redis, subscriber, streamReader, workerConnection })) {
    conn.on('error', (err) => log.warn({ connection: name, reason: err.message }, 'redis connection error'));
  }

  const deliveries = new DeliveriesRepository(db);
  const queue = new DeliveryQueue(redis, keys);
  let deadCache = { at: 0, value: 0 };
  const metrics = new DispatcherMetrics({
    queueDepth: () => queue.counts(),
    deadCount: async () => {
      if (Date.now() - deadCache.at > DEAD_COUNT_CACHE_MS) {
        deadCache = { at: Date.now(), value: await deliveries.countDead() };
      }
      return deadCache.value;
    },
  });

  const directory = new WebhookDirectory(new WebhooksRepository(db), new WebhookChanges(subscriber, keys), new SecretBox(config.encryptionKeys), log, config.WEBHOOK_CACHE_REFRESH_MS);
  await directory.start();
  const client = new WebhookClient({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    ca: config.WEBHOOK_CA_FILE ? readFileSync(config.WEBHOOK_CA_FILE, 'utf8') : undefined,
    connectionsPerOrigin: config.DISPATCHER_CONCURRENCY,
  });
  const leaseMs = config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS;
  const store = new DeliveryStore(deliveries, leaseMs);
  const sender = new DeliverySender(
    { concurrency: config.DISPATCHER_CONCURRENCY, timeoutMs: config.WEBHOOK_TIMEOUT_MS, leaseMs },
    store, queue, client, metrics, log,
  );
  const fanout = new EventFanout(deliveries, directory, sender, leaseMs, store, (n) => metrics.fannedOut.inc(n));
  // read the next batch while fewer than this many attempts are held: enough that every POST slot
  // stays busy while the next batch is read and inserted; held attempts keep their leases renewed
  const readAhead = Math.max(8 * READ_COUNT, 16 * config.DISPATCHER_CONCURRENCY);
  // a pending entry is another consumer's for longer than its POSTs can take: a live one claims the
  // rows of attempts it keeps waiting (HOLD_AFTER_MS) and acknowledges the entries long before that
  // acknowledgements go out while the reading connection blocks
  const tracker = new EventTracker(new EventStream(redis, keys), log);
  const consumer = new EventConsumer(new EventStream(streamReader, keys), fanout, tracker, log, () => sender.whenBelow(readAhead), leaseMs);
  const worker = new DeliveryWorker(store, directory, sender, leaseMs, log);
  const reconciler = new Reconciler(new EventsRepository(db), deliveries, redis, keys, queue, fanout, log, config.RECONCILE_INTERVAL_MS);

  sender.start();
  await consumer.start();
  worker.start({
    queue,
    connection: workerConnection,
    concurrency: config.DISPATCHER_CONCURRENCY,
    lockMs: config.DISPATCHER_JOB_LOCK_MS,
  });
  reconciler.start();

  const ops = await startOpsServer({
    port: config.DISPATCHER_HEALTH_PORT,
    registry: metrics.registry,
    ready: async () => Object.values(await checkDependencies(db, redis)).every(Boolean),
  });
  log.info({ port: ops.port, concurrency: config.DISPATCHER_CONCURRENCY }, 'webhook dispatcher started');

  return {
    opsPort: ops.port,
    async stop() {
      // stop taking work first, then let in-flight attempts finish; a lease covers any we abandon
      reconciler.stop();
      directory.stop();
      await consumer.stop();
      await worker.stop();
      await sender.stop();
      await tracker.drain();
      await reconciler.stop();
      await ops.close();
      await client.close();
      await queue.close();
      await Promise.all([redis, subscriber, streamReader, workerConnection].map((c) => c.quit().catch(() => c.disconnect())));
      await db.destroy();
    },
  };
}
