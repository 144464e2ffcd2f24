import { BeforeApplicationShutdown, Inject, Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import { GatewayConfig } from '@app/config';
import { SecretBox } from '@app/crypto';
import { CampaignsRepository, ChatsRepository, ContactsRepository, FollowedChannelsRepository, GroupsRepository, LeaderLeasesRepository, MediaBlobsRepository, MessageAcksRepository, MessageQueueRepository, MessagesRepository, PgLeaderLease, SessionAuthKeysRepository, SessionsRepository, StatusPostsRepository } from '@app/database';
import { EventPublisher } from '@app/events';
import { AdoptSignal, CommandServer, GatewayDirectory, GatewaySignals, GatewayRegistry, RedisQrBoard, RedisSessionLeases, SessionPlacement } from '@app/fleet';
import { InfraModule, LOGGER, MetricsRegistry, OpsEndpoints, REDIS_CLIENT } from '@app/infra';
import { BaileysMediaSource, createMediaStore, MediaSourceByEngine, SimMediaSource } from '@app/media';
import { CampaignSignal, InboundSpool, SendRateLimiter, SendSignal } from '@app/messaging';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { PgAuthStates } from './auth-state';
import type { SessionEngine } from './engine/engine.interface';
import { loadEngine } from './engine/load-engine';
import { FleetSupervisor } from './fleet/fleet-supervisor';
import { GatewayMetrics } from './gateway-metrics';
import { GatewayNode, NodeSignalListener } from './gateway-node';
import { LeaseKeeper } from './lease-keeper';
import { LeaseWatchdog } from './lease-watchdog';
import { SentRecords } from './messages/sent-records';
import type { MessageRow } from './messages/message-store';
import { PgMessageStore } from './messages/pg-message-store';
import { PgChatStore } from './messages/pg-chat-store';
import { CampaignScheduler } from './campaigns/campaign-scheduler';
import { ClientVersionAlarm } from './sessions/client-version-alarm';
import { GroupedEventSink } from './sessions/grouped-event-sink';
import { PgSessionRecords } from './sessions/pg-session-records';
import { EventLoopDelay, LoopDelayAdmission } from './sessions/loop-delay-admission';
import { SessionHost } from './sessions/session-host';
import { SessionMover } from './fleet/session-mover';
import { PgContactBook } from './contacts/contact-book';
import { EagerMediaDownloads } from './media/eager-media-downloads';
import { MediaDownloadQueue } from './media/media-download-queue';

/** DI token of the WhatsApp engine this node runs (Baileys or the simulator's). */
export const SESSION_ENGINE = Symbol('SESSION_ENGINE');
/** DI token of this node's signal subscription (SendSignal and AdoptSignal, on one subscriber connection). */
export const SEND_SIGNALS = Symbol('SEND_SIGNALS');
/** DI token of this node's EagerMediaDownloads, or null when MEDIA_STORE=none. */
export const EAGER_MEDIA_DOWNLOADS = Symbol('EAGER_MEDIA_DOWNLOADS');

/** Starts the eager media download worker with the node and stops it (in-flight downloads finish) before Redis closes. */
@Injectable()
export class EagerMediaWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private connection: Redis | null = null;

  constructor(
    @Inject(EAGER_MEDIA_DOWNLOADS) private readonly downloads: EagerMediaDownloads | null,
    private readonly config: GatewayConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.downloads) return;
    // a BullMQ worker blocks its connection: one of its own
    this.connection = createRedis(this.config.REDIS_URL);
    this.connection.on('error', () => undefined);
    this.downloads.start(this.connection);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.downloads?.stop();
    await this.connection?.quit().catch(() => this.connection?.disconnect());
  }
}

/** Runs the campaign scheduler (scheduled sends and campaigns, apps/gateway/src/campaigns) with the node. */
@Injectable()
export class CampaignSchedulerWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(private readonly scheduler: CampaignScheduler) {}

  onApplicationBootstrap(): void {
    this.scheduler.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.scheduler.stop();
  }
}

/**
 * One gateway node as a Nest application context: the shared infrastructure (config, PostgreSQL, Redis, events,
 * metrics, logger) plus everything the node drives. main.ts starts the GatewayNode; closing the context stops it.
 */
@Module({
  imports: [InfraModule.forRoot({ app: 'gateway', config: GatewayConfig, genericPlans: true })],
  providers: [
    {
      provide: CampaignScheduler,
      inject: [GatewayConfig, LOGGER, CampaignsRepository, MessageQueueRepository, SessionsRepository, EventPublisher, REDIS_CLIENT, RedisKeys],
      useFactory: (c: GatewayConfig, logger: Logger, campaigns: CampaignsRepository, queue: MessageQueueRepository, sessions: SessionsRepository, events: EventPublisher, redis: Redis, keys: RedisKeys) =>
        new CampaignScheduler({
          campaigns,
          queue,
          sessions,
          events,
          limiter: new SendRateLimiter(redis, keys),
          logger: logger.child({ component: 'campaign-scheduler' }),
          optOutKeywords: c.OPT_OUT_KEYWORDS.split(','),
          maxSleepMs: c.CAMPAIGN_SCHEDULER_MAX_SLEEP_MS,
        }),
    },
    CampaignSchedulerWorker,
    {
      provide: EAGER_MEDIA_DOWNLOADS,
      inject: [GatewayConfig, REDIS_CLIENT, RedisKeys, MessagesRepository, MediaBlobsRepository, LOGGER],
      useFactory: (c: GatewayConfig, redis: Redis, keys: RedisKeys, messages: MessagesRepository, blobs: MediaBlobsRepository, logger: Logger) => {
        const store = createMediaStore(c, blobs);
        if (!store) return null;
        // the same sources as the API's on-demand path: any gateway can download any engine's media
        const source = new MediaSourceByEngine({ sim: new SimMediaSource(c.NETWORK_SIM_URL), baileys: new BaileysMediaSource(undefined, { emulatorUrl: c.WHATSAPP_EMULATOR_URL }) });
        const queue = new MediaDownloadQueue(redis, keys, { attempts: c.MEDIA_STORE_ATTEMPTS, backoffMs: c.MEDIA_STORE_BACKOFF_MS });
        return new EagerMediaDownloads(queue, store, source, messages, { maxBytes: c.MEDIA_STORE_MAX_BYTES, concurrency: c.MEDIA_STORE_CONCURRENCY }, logger.child({ component: 'eager-media' }));
      },
    },
    EagerMediaWorker,
    {
      provide: InboundSpool,
      inject: [REDIS_CLIENT, RedisKeys, GatewayMetrics, LOGGER],
      useFactory: (redis: Redis, keys: RedisKeys, metrics: GatewayMetrics, logger: Logger) => {
        const spool = new InboundSpool(redis, keys, { metrics: metrics.spoolMetrics(), logger: logger.child({ component: 'inbound-spool' }) });
        metrics.watchSpool(spool);
        return spool;
      },
    },
    {
      provide: SESSION_ENGINE,
      inject: [GatewayConfig, LOGGER, InboundSpool, GatewayMetrics],
      useFactory: (c: GatewayConfig, logger: Logger, spool: InboundSpool, metrics: GatewayMetrics): Promise<SessionEngine> =>
        loadEngine(c, logger, { spool, receiptMetrics: metrics.receiptMetrics() }),
    },
    { provide: GatewayMetrics, inject: [MetricsRegistry], useFactory: (m: MetricsRegistry) => new GatewayMetrics(m) },
    {
      provide: LeaseKeeper,
      inject: [GatewayConfig, RedisKeys, SESSION_ENGINE],
      useFactory: (c: GatewayConfig, keys: RedisKeys, engine: SessionEngine) =>
        new LeaseKeeper({
          redisUrl: c.REDIS_URL,
          prefix: keys.prefix,
          node: { id: c.GATEWAY_ID, capacity: c.GATEWAY_CAPACITY, engine: engine.name, version: c.APP_VERSION, simulated: simulatedNetwork(c, engine) },
          ttlMs: c.GATEWAY_TTL_MS,
          heartbeatMs: c.GATEWAY_HEARTBEAT_MS,
          mainStallMs: c.mainStallMs,
          pingMs: Math.max(50, Math.floor(c.GATEWAY_HEARTBEAT_MS / 4)),
        }),
    },
    {
      provide: RedisSessionLeases,
      inject: [REDIS_CLIENT, RedisKeys, GatewayConfig, LeaseKeeper],
      useFactory: (redis: Redis, keys: RedisKeys, c: GatewayConfig, keeper: LeaseKeeper) =>
        new RedisSessionLeases(redis, keys, c.GATEWAY_ID, c.GATEWAY_TTL_MS, () => keeper.ackedEpoch()),
    },
    { provide: RedisQrBoard, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new RedisQrBoard(redis, keys) },
    {
      provide: GatewayRegistry,
      inject: [REDIS_CLIENT, RedisKeys, GatewayConfig, SESSION_ENGINE],
      useFactory: (redis: Redis, keys: RedisKeys, c: GatewayConfig, engine: SessionEngine) =>
        new GatewayRegistry(
          redis,
          keys,
          { id: c.GATEWAY_ID, capacity: c.GATEWAY_CAPACITY, engine: engine.name, version: c.APP_VERSION, simulated: simulatedNetwork(c, engine), waWebVersion: () => engine.waWebVersion?.() ?? null },
          c.GATEWAY_TTL_MS,
        ),
    },
    {
      provide: SessionHost,
      inject: [
        GatewayConfig,
        LOGGER,
        SESSION_ENGINE,
        SessionAuthKeysRepository,
        SecretBox,
        SessionsRepository,
        GroupsRepository,
        MessagesRepository,
        MessageQueueRepository,
        MessageAcksRepository,
        EventPublisher,
        ChatsRepository,
        RedisSessionLeases,
        RedisQrBoard,
        LeaseWatchdog,
        GatewayMetrics,
        ContactsRepository,
        StatusPostsRepository,
        EAGER_MEDIA_DOWNLOADS,
        FollowedChannelsRepository,
        CampaignScheduler,
      ],
      useFactory: (
        c: GatewayConfig,
        logger: Logger,
        engine: SessionEngine,
        authKeys: SessionAuthKeysRepository,
        box: SecretBox,
        sessions: SessionsRepository,
        groups: GroupsRepository,
        messageLog: MessagesRepository,
        messageQueue: MessageQueueRepository,
        messageAcks: MessageAcksRepository,
        events: EventPublisher,
        chats: ChatsRepository,
        leases: RedisSessionLeases,
        qr: RedisQrBoard,
        watchdog: LeaseWatchdog,
        metrics: GatewayMetrics,
        contacts: ContactsRepository,
        statusPosts: StatusPostsRepository,
        eagerMedia: EagerMediaDownloads | null,
        followedChannels: FollowedChannelsRepository,
        scheduler: CampaignScheduler,
      ) => {
        const versionAlarm = new ClientVersionAlarm(logger, () => metrics.clientVersionRefused.inc());
        const authStates = new PgAuthStates(authKeys, box);
        const sessionEvents = new GroupedEventSink(events);
        const messages = new PgMessageStore(messageLog, messageQueue, messageAcks);
        const host = new SessionHost(
          c.GATEWAY_ID,
          {
            engine,
            authState: (sessionId) => authStates.forSession(sessionId),
            records: new PgSessionRecords(c.GATEWAY_ID, sessions, groups, box),
            events: sessionEvents,
            leases,
            qr,
            settings: sessionSettings(c),
            logger,
            messages,
            sentRecords: new SentRecords(messages, sessionEvents),
            chats: new PgChatStore(chats),
            chatLabels: chats,
            followedChannels,
            messaging: messagingSettings(c),
            afterNetworkAck: c.GATEWAY_FAULT === 'crash-after-send' ? crashNow : undefined,
            leasesTrusted: () => watchdog.trusted(),
            clientVersionRefused: (sessionId) => versionAlarm.refused(sessionId),
            contacts: new PgContactBook(contacts),
            statusPosts,
            inboundStored: (row) => afterInboundStored(row, eagerMedia, scheduler, logger),
            campaigns: scheduler,
          },
          logger,
          Date.now,
          c.GATEWAY_ADOPT_CONCURRENCY,
          admissionByLoopDelay(c),
        );
        scheduler.attach(host);
        return host;
      },
    },
    {
      provide: LeaseWatchdog,
      inject: [GatewayConfig, LeaseKeeper],
      useFactory: (c: GatewayConfig, keeper: LeaseKeeper) =>
        new LeaseWatchdog(
          { budgetMs: c.GATEWAY_TTL_MS - c.fenceMarginMs, tickMs: Math.max(50, Math.min(250, Math.floor(c.fenceMarginMs / 4))) },
          Date.now,
          undefined,
          () => keeper.renewStartedAt(),
        ),
    },
    { provide: GatewayDirectory, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new GatewayDirectory(redis, keys) },
    {
      provide: SessionPlacement,
      inject: [GatewayDirectory, SessionsRepository],
      useFactory: (directory: GatewayDirectory, sessions: SessionsRepository) => new SessionPlacement(directory, sessions),
    },
    {
      provide: SessionMover,
      inject: [SessionPlacement, SessionsRepository, REDIS_CLIENT, RedisKeys, EventPublisher, GatewayMetrics, LOGGER],
      useFactory: (placement: SessionPlacement, sessions: SessionsRepository, redis: Redis, keys: RedisKeys, events: EventPublisher, metrics: GatewayMetrics, logger: Logger) => {
        const adopt = new AdoptSignal(keys);
        return new SessionMover({ placement, sessions, signal: (to) => adopt.notify(redis, to), events, metrics, logger });
      },
    },
    {
      provide: CommandServer,
      inject: [GatewayConfig, RedisKeys, SessionHost, LOGGER, GatewayMetrics],
      useFactory: (c: GatewayConfig, keys: RedisKeys, host: SessionHost, logger: Logger, metrics: GatewayMetrics) =>
        new CommandServer(
          { redisUrl: c.REDIS_URL, gatewayId: c.GATEWAY_ID, concurrency: c.GATEWAY_COMMAND_CONCURRENCY },
          keys,
          host,
          logger,
          (name, outcome) => metrics.commands.inc({ name, outcome }),
        ),
    },
    {
      provide: SEND_SIGNALS,
      inject: [GatewayConfig, RedisKeys, LOGGER, CampaignScheduler],
      useFactory: (c: GatewayConfig, keys: RedisKeys, logger: Logger, scheduler: CampaignScheduler): NodeSignalListener => ({
        async listen(handlers) {
          // a connection in subscriber mode cannot run other commands: this one is the node's signals' alone, and
          // both the send and the adopt signal are heard on it
          const subscriber = createRedis(c.REDIS_URL);
          // ioredis resubscribes after a Redis restart; the error is worth a line, not a crash
          subscriber.on('error', (err) => logger.warn({ reason: err.message }, 'signal subscription: redis connection error'));
          const signals = new GatewaySignals(subscriber);
          const unlistenSend = await new SendSignal(keys).listen(signals, c.GATEWAY_ID, handlers.send);
          const unlistenAdopt = await new AdoptSignal(keys).listen(signals, c.GATEWAY_ID, handlers.adopt);
          const unlistenCampaigns = await new CampaignSignal(keys).listen(signals, c.GATEWAY_ID, (_sessionId, campaignId) => {
            scheduler.changed(campaignId).catch((err) => logger.warn({ campaignId, err: String(err) }, 'reading a changed campaign failed'));
          });
          return async () => {
            await unlistenSend();
            await unlistenAdopt();
            await unlistenCampaigns();
            await subscriber.quit().catch(() => subscriber.disconnect());
          };
        },
      }),
    },
    {
      provide: FleetSupervisor,
      inject: [GatewayConfig, LOGGER, REDIS_CLIENT, RedisKeys, SessionsRepository, SessionMover, GatewayMetrics, LeaderLeasesRepository],
      useFactory: (
        c: GatewayConfig,
        logger: Logger,
        redis: Redis,
        keys: RedisKeys,
        sessions: SessionsRepository,
        mover: SessionMover,
        metrics: GatewayMetrics,
        leases: LeaderLeasesRepository,
      ) => {
        return new FleetSupervisor(
          {
            enabled: c.SUPERVISOR_ENABLED,
            gatewayId: c.GATEWAY_ID,
            intervalMs: c.SUPERVISOR_INTERVAL_MS,
            ttlMs: c.GATEWAY_TTL_MS,
            // every live gateway re-registers within one heartbeat (after a Redis restart too)
            confirmMs: c.GATEWAY_HEARTBEAT_MS,
            rebalancePerMin: c.REBALANCE_MOVES_PER_MIN,
            rebalanceThresholdPct: c.REBALANCE_THRESHOLD,
          },
          {
            // one election per fleet: fleets sharing a database are told apart by their Redis namespace. Half the
            // gateway TTL: a new leader is elected while the stopped leader's own heartbeat is still counting down
            election: new PgLeaderLease(leases, { name: `fleet-supervisor:${c.REDIS_KEY_PREFIX}`, holder: c.GATEWAY_ID, ttlMs: Math.floor(c.GATEWAY_TTL_MS / 2) }),
            directory: new GatewayDirectory(redis, keys),
            sessions,
            mover,
            metrics,
            logger,
          },
        );
      },
    },
    {
      provide: GatewayNode,
      inject: [
        GatewayConfig,
        LOGGER,
        SESSION_ENGINE,
        SessionHost,
        GatewayRegistry,
        RedisSessionLeases,
        CommandServer,
        SEND_SIGNALS,
        OpsEndpoints,
        GatewayMetrics,
        SessionMover,
        LeaseWatchdog,
        FleetSupervisor,
        LeaseKeeper,
      ],
      useFactory: (
        c: GatewayConfig,
        logger: Logger,
        engine: SessionEngine,
        host: SessionHost,
        registry: GatewayRegistry,
        leases: RedisSessionLeases,
        commands: CommandServer,
        signals: NodeSignalListener,
        ops: OpsEndpoints,
        metrics: GatewayMetrics,
        mover: SessionMover,
        watchdog: LeaseWatchdog,
        supervisor: FleetSupervisor,
        keeper: LeaseKeeper,
      ) => {
        if (c.GATEWAY_FAULT === 'block-on-sigusr2') process.on('SIGUSR2', () => blockMainThread(3 * c.GATEWAY_TTL_MS));
        return new GatewayNode(
          {
            gatewayId: c.GATEWAY_ID,
            engine: engine.name,
            heartbeatMs: c.GATEWAY_HEARTBEAT_MS,
            sweepMs: c.MESSAGE_SWEEP_MS,
            adoptMs: c.GATEWAY_ADOPT_INTERVAL_MS,
            drainGraceMs: c.GATEWAY_DRAIN_GRACE_MS,
          },
          {
            host,
            registry,
            leases,
            keeper,
            waWebVersion: () => engine.waWebVersion?.() ?? null,
            watchdog,
            commands,
            signals,
            opsServer: (accepting) => ops.start(c.GATEWAY_HEALTH_PORT, c.OPS_HOST, accepting),
            mover,
            metrics,
            leader: supervisor,
            logger,
          },
        );
      },
    },
  ],
})
export class GatewayModule {}

/** GATEWAY_FAULT=crash-after-send: die like a killed pod, with no chance to record what the network already took. */
/** Sessions are adopted while the event loop keeps up: a few at a time, none while its delay is high. */
function admissionByLoopDelay(c: GatewayConfig): LoopDelayAdmission {
  const loopDelay = new EventLoopDelay();
  return new LoopDelayAdmission({ maxConcurrent: c.GATEWAY_ADOPT_CONCURRENCY, maxDelayMs: c.GATEWAY_ADMIT_LOOP_DELAY_MS }, () => loopDelay.p99Ms());
}

/** A session's pairing and reconnection settings, from the gateway's configuration. */
function sessionSettings(c: GatewayConfig) {
  return {
    qrMaxRetries: c.QR_MAX_RETRIES,
    qrTtlMs: c.QR_TTL_MS,
    reconnectMaxAttempts: c.RECONNECT_MAX_ATTEMPTS,
    reconnectBaseDelayMs: c.RECONNECT_BASE_DELAY_MS,
    reconnectMaxDelayMs: c.RECONNECT_MAX_DELAY_MS,
  };
}

/** How a session sends: a message's time to live and the typing it shows first. */
function messagingSettings(c: GatewayConfig) {
  return {
    ttlMs: c.MESSAGE_TTL_SECONDS * 1000,
    typingMsPerChar: c.TYPING_MS_PER_CHAR,
    typingMinMs: c.TYPING_MIN_MS,
    typingMaxMs: c.TYPING_MAX_MS,
  };
}

/** An inbound message is stored: its media may be fetched now, and it may be a campaign's opt-out. */
function afterInboundStored(row: MessageRow, eagerMedia: EagerMediaDownloads | null, scheduler: CampaignScheduler, logger: Logger): void {
  eagerMedia?.received(row);
  scheduler.inbound(row).catch((err) => logger.warn({ err: String(err) }, 'recording an opt-out failed'));
}

function crashNow(): void {
  process.kill(process.pid, 'SIGKILL');
}

/** GATEWAY_FAULT=block-on-sigusr2: the main thread does nothing else for `ms`, as under an engine that hogs it. */
function blockMainThread(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spinning on purpose
  }
}

/** Whether this node's WhatsApp is the network simulator (its registry entry says so: the dashboard's pairing hint). */
function simulatedNetwork(c: GatewayConfig, engine: SessionEngine): boolean {
  return engine.name === 'sim' || Boolean(c.WHATSAPP_EMULATOR_URL);
}
