import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { GatewayConfig } from '@app/config';
import { SecretBox } from '@app/crypto';
import { dataSourceOptions, GroupsRepository, MessagesRepository, SessionAuthKeysRepository, SessionsRepository } from '@app/database';
import { EventPublisher } from '@app/events';
import { CommandServer, GatewayRegistry, RedisQrBoard, RedisSessionLeases } from '@app/fleet';
import { SendSignal } from '@app/messaging';
import { checkDependencies, startOpsServer } from '@app/observability';
import { createRedis, RedisKeys } from '@app/redis';
import { createPgAuthStateStore } from './auth-state';
import type { SessionEngine } from './engine/engine.interface';
import { loadEngine } from './engine/load-engine';
import { PgSessionRecords } from './sessions/pg-session-records';
import { SessionHost } from './sessions/session-host';

const VERSION = process.env.npm_package_version ?? '0.1.0';

/**
 * One gateway node: registry entry + heartbeat, session leases, the command worker, the sessions it holds,
 * and the ops server (health, readiness, metrics). Built from config; `start` and `stop` are the whole lifecycle.
 */
export class GatewayNode {
  private db!: DataSource;
  private redis!: Redis;
  /** SendSignal's subscriber: a connection in subscriber mode cannot run other commands */
  private signalRedis: Redis | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private host!: SessionHost;
  private registry!: GatewayRegistry;
  private leases!: RedisSessionLeases;
  private worker!: CommandServer;
  private ops: { close: () => Promise<void>; port: number } | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private stopping: Promise<void> | null = null;
  readonly metrics = new Registry();

  constructor(
    private readonly config: GatewayConfig,
    private readonly logger: Logger,
    private readonly engineFactory: (config: GatewayConfig) => SessionEngine = loadEngine,
  ) {}

  async start(): Promise<void> {
    const c = this.config;
    const keys = new RedisKeys(c.REDIS_KEY_PREFIX);
    this.db = new DataSource(dataSourceOptions(c.DATABASE_URL));
    await this.db.initialize();
    this.redis = createRedis(c.REDIS_URL);
    const box = new SecretBox(c.encryptionKeys);
    const engine = this.engineFactory(c);
    const messages = new MessagesRepository(this.db);
    const authKeys = new SessionAuthKeysRepository(this.db);

    collectDefaultMetrics({ register: this.metrics });
    const sessionsGauge = new Gauge({ name: 'gateway_sessions', help: 'sessions holding or seeking a socket on this gateway', registers: [this.metrics] });
    const commands = new Counter({ name: 'gateway_commands_total', help: 'commands handled, by name and outcome', labelNames: ['name', 'outcome'], registers: [this.metrics] });

    this.leases = new RedisSessionLeases(this.redis, keys, c.GATEWAY_ID, c.GATEWAY_TTL_MS);
    this.host = new SessionHost(
      c.GATEWAY_ID,
      {
        engine,
        authState: (sessionId) => createPgAuthStateStore(authKeys, box, sessionId),
        records: new PgSessionRecords(new SessionsRepository(this.db), new GroupsRepository(this.db)),
        events: new EventPublisher(this.db, this.redis, keys.prefix),
        leases: this.leases,
        qr: new RedisQrBoard(this.redis, keys),
        settings: {
          qrMaxRetries: c.QR_MAX_RETRIES,
          qrTtlMs: c.QR_TTL_MS,
          reconnectMaxAttempts: c.RECONNECT_MAX_ATTEMPTS,
          reconnectBaseDelayMs: c.RECONNECT_BASE_DELAY_MS,
          reconnectMaxDelayMs: c.RECONNECT_MAX_DELAY_MS,
        },
        logger: this.logger,
        messages,
        messaging: {
          ttlMs: c.MESSAGE_TTL_SECONDS * 1000,
          typingMsPerChar: c.TYPING_MS_PER_CHAR,
          typingMinMs: c.TYPING_MIN_MS,
          typingMaxMs: c.TYPING_MAX_MS,
        },
        afterNetworkAck: c.GATEWAY_FAULT === 'crash-after-send' ? crashNow : undefined,
      },
      this.logger,
    );
    this.registry = new GatewayRegistry(this.redis, keys, { id: c.GATEWAY_ID, capacity: c.GATEWAY_CAPACITY, engine: engine.name, version: VERSION }, c.GATEWAY_TTL_MS);

    this.worker = new CommandServer(
      { redisUrl: c.REDIS_URL, gatewayId: c.GATEWAY_ID, concurrency: c.GATEWAY_COMMAND_CONCURRENCY },
      keys,
      this.host,
      this.logger,
      (name, outcome) => commands.inc({ name, outcome }),
    );
    await this.worker.start();
    await this.registry.heartbeat(0);
    this.heartbeatTimer = setInterval(() => {
      void this.beat().then(() => sessionsGauge.set(this.host.sessionCount));
    }, c.GATEWAY_HEARTBEAT_MS);

    this.signalRedis = createRedis(c.REDIS_URL);
    this.unlisten = await new SendSignal(keys).listen(this.signalRedis, c.GATEWAY_ID, (sessionId) => this.host.signal(sessionId));
    this.sweepTimer = setInterval(() => {
      this.host.sweepQueued().catch((err) => this.logger.warn({ err: String(err) }, 'sweeping queued messages failed'));
    }, c.MESSAGE_SWEEP_MS);

    const resumed = await this.host.resume();
    await this.beat();
    this.ops = await startOpsServer({ port: c.GATEWAY_HEALTH_PORT, registry: this.metrics, ready: () => this.ready() });
    this.logger.info({ gatewayId: c.GATEWAY_ID, engine: engine.name, resumed, healthPort: this.ops.port }, 'gateway started');
  }

  /** Heartbeat and lease renewal share one tick: a node that cannot renew must not keep sockets open. */
  private async beat(): Promise<void> {
    try {
      await this.registry.heartbeat(this.host.sessionCount);
      const lost = await this.leases.renew(this.host.leasedSessionIds());
      if (lost.length > 0) await this.host.leaseLost(lost);
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'heartbeat failed');
    }
  }

  private async ready(): Promise<boolean> {
    return Object.values(await checkDependencies(this.db, this.redis)).every(Boolean);
  }

  /** Stops taking commands, closes sockets without logging out, releases leases, leaves the registry. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
      if (this.sweepTimer) clearInterval(this.sweepTimer);
      await this.unlisten?.();
      await this.signalRedis?.quit().catch(() => this.signalRedis?.disconnect());
      await this.worker?.close().catch((err) => this.logger.warn({ err: String(err) }, 'closing the command worker failed'));
      await this.host?.shutdown();
      await this.registry?.deregister().catch(() => undefined);
      await this.ops?.close();
      await this.redis?.quit().catch(() => this.redis.disconnect());
      if (this.db?.isInitialized) await this.db.destroy();
      this.logger.info('gateway stopped');
    })();
    return this.stopping;
  }
}

/** GATEWAY_FAULT=crash-after-send: die like a killed pod, with no chance to record what the network already took. */
function crashNow(): void {
  process.kill(process.pid, 'SIGKILL');
}
