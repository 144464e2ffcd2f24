import { readFileSync } from 'node:fs';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Logger } from 'pino';
import { DispatcherConfig } from '@app/config';
import { SecretBox } from '@app/crypto';
import { ChatwootRepository, ContactsRepository, DeliveriesRepository, EventsRepository, GroupsRepository, MessagesRepository, WebhooksRepository } from '@app/database';
import { BaileysMediaSource, MediaSourceByEngine, SimMediaSource } from '@app/media';
import { DeliveryQueue, EventPublisher, EventStream, ReconcileLock, WebhookChanges } from '@app/events';
import { InfraModule, LOGGER, MetricsRegistry, OpsEndpoints, REDIS_CLIENT } from '@app/infra';
import { Redis, RedisKeys } from '@app/redis';
import { DeliverySender } from './delivery/delivery-sender';
import { DeliveryStore } from './delivery/delivery-store';
import { DeliveryWorker } from './delivery/delivery-worker';
import { LogHealth } from './delivery/log-health';
import { OpenParkReleaser, ParkedResumer } from './delivery/resume-parked';
import { closeDestinations, Destinations, HttpDestination } from './delivery/destinations';
import { WebhookClient } from './delivery/webhook-client';
import { AmqpDestination } from './sinks/amqp-destination';
import { NatsDestination } from './sinks/nats-destination';
import { ChatwootClient } from './chatwoot/chatwoot-client';
import { ChatwootDestination } from './chatwoot/chatwoot-destination';
import { ChatwootImporter } from './chatwoot/chatwoot-import';
import { Dispatcher, DispatcherConnections } from './dispatcher';
import { BacklogDrain } from './fanout/backlog-drain';
import { EventConsumer, READ_COUNT } from './fanout/event-consumer';
import { READ_AHEAD_MS, ReadAhead, ReadAheadDepth } from './fanout/read-ahead';
import { EventFanout } from './fanout/event-fanout';
import { EventSpill, fanOutOrSpill } from './fanout/event-spill';
import { EventTracker } from './fanout/event-tracker';
import { DispatcherMetrics } from './metrics';
import { Reconciler } from './reconciler';
import { FairScheduler, OPEN_PARK_MS, PARK_AFTER_MS } from './scheduling/fair-scheduler';
import { WebhookDisabler, WebhookHealth } from './scheduling/webhook-health';
import { WebhookDirectory } from './webhooks/webhook-directory';

/** Extra time a lease grants beyond the request timeout, for recording the outcome. */
const LEASE_MARGIN_MS = 2000;
const DEAD_COUNT_CACHE_MS = 10_000;
/** DI token of how long an attempt holds its delivery row. */
const LEASE_MS = Symbol('LEASE_MS');
/** DI token of the delivery step of each kind of destination (`Record<DestinationKind, Destination>`). */
const DESTINATIONS = Symbol('DESTINATIONS');

const leaseMs = (c: DispatcherConfig) => c.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS;

/**
 * The webhook dispatcher as a Nest application context: the shared infrastructure (config, PostgreSQL, Redis,
 * metrics, logger) and the dispatcher's parts, each built once here.
 */
/**
 * How far the consumer reads ahead of the POSTs: as many attempts as start within READ_AHEAD_MS at the pace
 * they have been completing (ReadAheadDepth), at least four rounds of the slots (every slot stays busy while the next
 * batch is read), at most max(8 × 500, 16 × concurrency); a batch is read once there is room for a round of slots.
 * Held attempts keep their leases renewed. An organization whose backlog does not move keeps at most a quarter of the
 * most in memory.
 */
function readAheadOf(c: DispatcherConfig, sender: DeliverySender, scheduler: FairScheduler): ReadAhead {
  const most = Math.max(8 * READ_COUNT, 16 * c.DISPATCHER_CONCURRENCY);
  const round = c.DISPATCHER_CONCURRENCY;
  const depth = new ReadAheadDepth(() => sender.completed, () => sender.queued, 4 * round, most, READ_AHEAD_MS);
  return {
    room: async () => {
      const limit = depth.limit();
      await sender.whenBelow(limit - round + 1);
      return Math.max(round, limit - sender.queued);
    },
    held: () => sender.backlog,
    heldOf: (organizationId) => scheduler.heldOf(organizationId),
    stalled: (organizationId) => scheduler.stalled(organizationId),
    share: Math.floor(most / 4),
    max: 2 * most,
  };
}

@Module({
  imports: [InfraModule.forRoot({ app: 'webhook-dispatcher', config: DispatcherConfig, poolMax: 12 })],
  providers: [
    { provide: LEASE_MS, inject: [DispatcherConfig], useFactory: leaseMs },
    {
      provide: DispatcherConnections,
      inject: [DispatcherConfig, REDIS_CLIENT, LOGGER],
      useFactory: (c: DispatcherConfig, redis: Redis, log: Logger) => new DispatcherConnections(c.REDIS_URL, redis, log),
    },
    { provide: DeliveryQueue, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new DeliveryQueue(redis, keys) },
    {
      provide: DispatcherMetrics,
      inject: [MetricsRegistry, DeliveryQueue, DeliveriesRepository],
      useFactory: (shared: MetricsRegistry, queue: DeliveryQueue, deliveries: DeliveriesRepository) => {
        let deadCache = { at: 0, value: 0 };
        return new DispatcherMetrics(shared, {
          queueDepth: () => queue.counts(),
          deadCount: async () => {
            if (Date.now() - deadCache.at > DEAD_COUNT_CACHE_MS) {
              deadCache = { at: Date.now(), value: await deliveries.countDead() };
            }
            return deadCache.value;
          },
        });
      },
    },
    {
      provide: WebhookDirectory,
      inject: [WebhooksRepository, DispatcherConnections, RedisKeys, SecretBox, LOGGER, DispatcherConfig],
      useFactory: (webhooks: WebhooksRepository, conns: DispatcherConnections, keys: RedisKeys, box: SecretBox, log: Logger, c: DispatcherConfig) =>
        new WebhookDirectory(webhooks, new WebhookChanges(conns.subscriber, keys), box, log, c.WEBHOOK_CACHE_REFRESH_MS),
    },
    {
      provide: WebhookClient,
      inject: [DispatcherConfig],
      useFactory: (c: DispatcherConfig) =>
        new WebhookClient({
          timeoutMs: c.WEBHOOK_TIMEOUT_MS,
          allowPrivateTargets: c.WEBHOOK_ALLOW_PRIVATE_TARGETS,
          ca: c.WEBHOOK_CA_FILE ? readFileSync(c.WEBHOOK_CA_FILE, 'utf8') : undefined,
          connectionsPerOrigin: c.DISPATCHER_CONCURRENCY,
        }),
    },
    {
      provide: DESTINATIONS,
      inject: [DispatcherConfig, WebhookClient, ChatwootRepository, MessagesRepository, ContactsRepository, GroupsRepository, WebhookDirectory, SecretBox, LOGGER],
      useFactory: (
        c: DispatcherConfig,
        client: WebhookClient,
        chatwootLinks: ChatwootRepository,
        messages: MessagesRepository,
        contacts: ContactsRepository,
        groups: GroupsRepository,
        directory: WebhookDirectory,
        box: SecretBox,
        log: Logger,
      ): Destinations => {
        const broker = { timeoutMs: c.WEBHOOK_TIMEOUT_MS, allowPrivateTargets: c.WEBHOOK_ALLOW_PRIVATE_TARGETS };
        // inbound media for Chatwoot attachments is read from the network that holds it, as the API's media download does
        const media = new MediaSourceByEngine({ sim: new SimMediaSource(c.NETWORK_SIM_URL), baileys: new BaileysMediaSource(undefined, { emulatorUrl: c.WHATSAPP_EMULATOR_URL }) });
        const chatwoot = new ChatwootDestination(new ChatwootClient(broker), { chatwoot: chatwootLinks, messages, contacts, groups, media, decrypt: (e) => box.decrypt(e) });
        // importDays: the history import runs beside the deliveries and stops with the destination
        chatwoot.importHistory(new ChatwootImporter(chatwoot, chatwootLinks, messages, (id) => directory.get(id), log));
        return { http: new HttpDestination(client), amqp: new AmqpDestination(broker), nats: new NatsDestination(broker), chatwoot };
      },
    },
    // no send without a record: while the delivery log cannot be written, no attempt starts
    { provide: LogHealth, inject: [DeliveriesRepository], useFactory: (deliveries: DeliveriesRepository) => new LogHealth(() => deliveries.ping()) },
    {
      provide: DeliveryStore,
      inject: [DeliveriesRepository, LEASE_MS, LogHealth],
      useFactory: (deliveries: DeliveriesRepository, lease: number, health: LogHealth) => new DeliveryStore(deliveries, lease, health),
    },
    {
      provide: FairScheduler,
      inject: [DispatcherConfig, LogHealth, WebhookDirectory, DeliveriesRepository, DeliveryQueue, LOGGER],
      useFactory: (c: DispatcherConfig, health: LogHealth, directory: WebhookDirectory, deliveries: DeliveriesRepository, queue: DeliveryQueue, log: Logger) => {
        // an open park lasts OPEN_PARK_MS plus up to half of it (the spread): every due time up to that is released
        const releaser = new OpenParkReleaser(deliveries, queue, 2 * OPEN_PARK_MS, log);
        const scheduler = new FairScheduler(
          {
            concurrency: c.DISPATCHER_CONCURRENCY,
            perWebhook: c.webhookConcurrency,
            parkAfterMs: PARK_AFTER_MS,
            breaker: { failures: c.WEBHOOK_BREAKER_FAILURES, cooldownMs: c.WEBHOOK_BREAKER_COOLDOWN_MS, maxCooldownMs: 2 * c.WEBHOOK_BREAKER_COOLDOWN_MS },
          },
          { writable: () => health.writable, disabled: (id) => directory.isDisabled(id), breakerClosed: (id) => releaser.releaseSoon(id) },
        );
        health.onChange((writable) => writable && scheduler.pump());
        directory.onReenabled((id) => scheduler.reset(id));
        return scheduler;
      },
    },
    {
      provide: WebhookHealth,
      inject: [DispatcherConfig, WebhooksRepository, EventPublisher, REDIS_CLIENT, RedisKeys, LOGGER],
      useFactory: (c: DispatcherConfig, webhooks: WebhooksRepository, publisher: EventPublisher, redis: Redis, keys: RedisKeys, log: Logger) =>
        new WebhookHealth(webhooks, new WebhookDisabler(webhooks, publisher, new WebhookChanges(redis, keys)), c.WEBHOOK_DISABLE_AFTER_MS, log),
    },
    {
      provide: DeliverySender,
      inject: [DispatcherConfig, LEASE_MS, DeliveryStore, DeliveryQueue, DESTINATIONS, DispatcherMetrics, LOGGER, FairScheduler, WebhookHealth, WebhookDirectory],
      useFactory: (
        c: DispatcherConfig,
        lease: number,
        store: DeliveryStore,
        queue: DeliveryQueue,
        destinations: Destinations,
        metrics: DispatcherMetrics,
        log: Logger,
        scheduler: FairScheduler,
        health: WebhookHealth,
        directory: WebhookDirectory,
      ) =>
        new DeliverySender({ timeoutMs: c.WEBHOOK_TIMEOUT_MS, leaseMs: lease }, store, queue, destinations, metrics, log, {
          scheduler,
          health,
          failingSince: (id) => directory.failingSince(id),
        }),
    },
    {
      provide: EventFanout,
      inject: [DeliveriesRepository, WebhookDirectory, DeliverySender, LEASE_MS, DeliveryStore, DispatcherMetrics],
      useFactory: (
        deliveries: DeliveriesRepository,
        directory: WebhookDirectory,
        sender: DeliverySender,
        lease: number,
        store: DeliveryStore,
        metrics: DispatcherMetrics,
      ) => new EventFanout(deliveries, directory, sender, lease, store, (n) => metrics.fannedOut.inc(n)),
    },
    // acknowledgements go out while the reading connection blocks
    { provide: EventTracker, inject: [REDIS_CLIENT, RedisKeys, LOGGER], useFactory: (redis: Redis, keys: RedisKeys, log: Logger) => new EventTracker(new EventStream(redis, keys), log) },
    {
      provide: EventSpill,
      inject: [DeliveriesRepository, WebhookDirectory, DeliveryQueue, LOGGER, DispatcherMetrics],
      useFactory: (deliveries: DeliveriesRepository, directory: WebhookDirectory, queue: DeliveryQueue, log: Logger, metrics: DispatcherMetrics) =>
        new EventSpill(deliveries, directory, queue, log, (n) => metrics.fannedOut.inc(n)),
    },
    {
      provide: EventConsumer,
      inject: [DispatcherConfig, DispatcherConnections, RedisKeys, EventFanout, EventTracker, DeliverySender, FairScheduler, EventSpill, LEASE_MS, LOGGER, REDIS_CLIENT],
      useFactory: (
        c: DispatcherConfig,
        conns: DispatcherConnections,
        keys: RedisKeys,
        fanout: EventFanout,
        tracker: EventTracker,
        sender: DeliverySender,
        scheduler: FairScheduler,
        spill: EventSpill,
        lease: number,
        log: Logger,
        redis: Redis,
      ) => {
        // a pending entry is another consumer's for longer than a lease: a live one acknowledges its entries as
        // soon as their rows are committed, long before that
        return new EventConsumer(
          new EventStream(conns.streamReader, keys),
          fanout,
          tracker,
          log,
          readAheadOf(c, sender, scheduler),
          // the backlog streams are read without blocking, on the shared connection
          new BacklogDrain(new EventStream(redis, keys), fanout, spill, readAheadOf(c, sender, scheduler), log, lease),
          spill,
          lease,
        );
      },
    },
    {
      provide: DeliveryWorker,
      inject: [DeliveryStore, WebhookDirectory, DeliverySender, LEASE_MS, LOGGER, DeliveriesRepository, DeliveryQueue],
      useFactory: (store: DeliveryStore, directory: WebhookDirectory, sender: DeliverySender, lease: number, log: Logger, deliveries: DeliveriesRepository, queue: DeliveryQueue) => {
        const resumer = new ParkedResumer(deliveries, queue, log);
        directory.onReenabled((id) => resumer.resumeSoon(id));
        return new DeliveryWorker(store, directory, sender, lease, log);
      },
    },
    {
      provide: Reconciler,
      inject: [DispatcherConfig, EventsRepository, DeliveriesRepository, REDIS_CLIENT, RedisKeys, DeliveryQueue, EventFanout, EventSpill, DeliverySender, FairScheduler, LOGGER],
      useFactory: (
        c: DispatcherConfig,
        events: EventsRepository,
        deliveries: DeliveriesRepository,
        redis: Redis,
        keys: RedisKeys,
        queue: DeliveryQueue,
        fanout: EventFanout,
        spill: EventSpill,
        sender: DeliverySender,
        scheduler: FairScheduler,
        log: Logger,
      ) =>
        new Reconciler(
          events,
          deliveries,
          new ReconcileLock(redis, keys),
          queue,
          // a stalled organization's stragglers are spilled as the consumer's are, not held in memory
          fanOutOrSpill(fanout, spill, readAheadOf(c, sender, scheduler)),
          log,
          c.RECONCILE_INTERVAL_MS,
        ),
    },
    {
      provide: Dispatcher,
      inject: [
        DispatcherConfig,
        WebhookDirectory,
        DeliverySender,
        EventConsumer,
        DeliveryWorker,
        EventTracker,
        Reconciler,
        DESTINATIONS,
        DeliveryQueue,
        DispatcherConnections,
        OpsEndpoints,
        LOGGER,
      ],
      useFactory: (
        c: DispatcherConfig,
        directory: WebhookDirectory,
        sender: DeliverySender,
        consumer: EventConsumer,
        worker: DeliveryWorker,
        tracker: EventTracker,
        reconciler: Reconciler,
        destinations: Destinations,
        queue: DeliveryQueue,
        connections: DispatcherConnections,
        ops: OpsEndpoints,
        log: Logger,
      ) =>
        new Dispatcher(
          { concurrency: c.DISPATCHER_CONCURRENCY, jobLockMs: c.DISPATCHER_JOB_LOCK_MS },
          {
            directory,
            sender,
            consumer,
            worker,
            tracker,
            reconciler,
            destinations: { close: () => closeDestinations(destinations) },
            queue,
            connections,
            log,
            opsServer: () => ops.start(c.DISPATCHER_HEALTH_PORT, c.OPS_HOST),
          },
        ),
    },
  ],
})
export class DispatcherModule {}

export interface RunningDispatcher {
  opsPort: number;
  log: Logger;
  stop(): Promise<void>;
}

/**
 * Boots the dispatcher as an application context and starts it; `stop` closes the context, which stops the
 * dispatcher first and the shared Redis client and data source last.
 */
export async function startDispatcher(): Promise<RunningDispatcher> {
  // the app logs through pino; Nest's own bootstrap lines would only repeat them
  const app = await NestFactory.createApplicationContext(DispatcherModule, { logger: false, abortOnError: false });
  const log = app.get<Logger>(LOGGER);
  for (const warning of app.get(DispatcherConfig).warnings) log.warn(warning);
  const dispatcher = app.get(Dispatcher);
  try {
    await dispatcher.start();
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
  return { opsPort: dispatcher.opsPort, log, stop: () => app.close() };
}
