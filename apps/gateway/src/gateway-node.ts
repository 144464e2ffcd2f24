import { BeforeApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import type { CommandServer, GatewayRegistry, RedisSessionLeases } from '@app/fleet';
import type { SessionHost } from './sessions/session-host';

/**
 * What a GatewayNode drives. Each has one production implementation, provided by GatewayModule, and can be
 * replaced by a fake where a test wants to watch the lifecycle.
 */
export interface GatewayNodeParts {
  host: Pick<SessionHost, 'sessionCount' | 'leasedSessionIds' | 'leaseLost' | 'signal' | 'sweepQueued' | 'resume' | 'shutdown'>;
  registry: Pick<GatewayRegistry, 'heartbeat' | 'deregister'>;
  leases: Pick<RedisSessionLeases, 'renew'>;
  commands: Pick<CommandServer, 'start' | 'close'>;
  signals: SendSignalListener;
  opsServer: OpsServerStarter;
  /** the sessions gauge of GatewayMetrics */
  metrics: { sessions: { set(value: number): void } };
  logger: Logger;
}

/** Subscribes to this node's send signals; the returned function unsubscribes and closes what it opened. */
export interface SendSignalListener {
  listen(onSession: (sessionId: string) => void): Promise<() => Promise<void>>;
}

/** Starts the health/readiness/metrics server. */
export type OpsServerStarter = () => Promise<{ port: number; close: () => Promise<void> }>;

export interface GatewayNodeSettings {
  gatewayId: string;
  engine: string;
  heartbeatMs: number;
  sweepMs: number;
}

/**
 * One gateway node's lifecycle: registry entry + heartbeat, session leases, the command worker, the sessions it holds,
 * the send signal and its sweep, and the ops server (health, readiness, metrics). `start` is called once the
 * application context is built; `stop` runs before the context closes the shared connections (Redis, PostgreSQL).
 */
export class GatewayNode implements BeforeApplicationShutdown {
  private unlisten: (() => Promise<void>) | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private ops: { close: () => Promise<void>; port: number } | null = null;
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly settings: GatewayNodeSettings,
    private readonly parts: GatewayNodeParts,
  ) {}

  async start(): Promise<void> {
    const { host, registry, commands, metrics, logger } = this.parts;
    await commands.start();
    await registry.heartbeat(0);
    this.heartbeatTimer = setInterval(() => {
      void this.beat().then(() => metrics.sessions.set(host.sessionCount));
    }, this.settings.heartbeatMs);

    this.unlisten = await this.parts.signals.listen((sessionId) => host.signal(sessionId));
    this.sweepTimer = setInterval(() => {
      host.sweepQueued().catch((err) => logger.warn({ err: String(err) }, 'sweeping queued messages failed'));
    }, this.settings.sweepMs);

    const resumed = await host.resume();
    await this.beat();
    this.ops = await this.parts.opsServer();
    logger.info({ gatewayId: this.settings.gatewayId, engine: this.settings.engine, resumed, healthPort: this.ops.port }, 'gateway started');
  }

  /** Heartbeat and lease renewal share one tick: a node that cannot renew must not keep sockets open. */
  private async beat(): Promise<void> {
    const { host, registry, leases, logger } = this.parts;
    try {
      await registry.heartbeat(host.sessionCount);
      const lost = await leases.renew(host.leasedSessionIds());
      if (lost.length > 0) await host.leaseLost(lost);
    } catch (err) {
      logger.warn({ err: String(err) }, 'heartbeat failed');
    }
  }

  /**
   * Stops taking commands, closes sockets without logging out, releases leases, leaves the registry. The shared
   * Redis client and the data source close after this, when the application context shuts down.
   */
  stop(): Promise<void> {
    const { host, registry, commands, logger } = this.parts;
    this.stopping ??= (async () => {
      if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
      if (this.sweepTimer) clearInterval(this.sweepTimer);
      await this.unlisten?.();
      await commands.close().catch((err) => logger.warn({ err: String(err) }, 'closing the command worker failed'));
      await host.shutdown();
      await registry.deregister().catch(() => undefined);
      await this.ops?.close();
    })();
    return this.stopping;
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }
}
