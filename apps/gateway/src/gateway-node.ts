import { BeforeApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { DomainError } from '@app/contracts';
import type { CommandServer, GatewayRegistry, RedisSessionLeases } from '@app/fleet';
import { IntervalTimers, LeaseWatchdog, realIntervals } from './lease-watchdog';
import type { SessionHost } from './sessions/session-host';
import type { SessionMover } from './fleet/session-mover';

/**
 * What a GatewayNode drives. Each has one production implementation, provided by GatewayModule, and can be
 * replaced by a fake where a test wants to watch the lifecycle.
 */
export interface GatewayNodeParts {
  host: Pick<
    SessionHost,
    'sessionCount' | 'leasedSessionIds' | 'activeSessionIds' | 'leaseLost' | 'signal' | 'sweepQueued' | 'resume' | 'converge' | 'handOff' | 'closeAllUnfenced' | 'shutdown'
  >;
  registry: Pick<GatewayRegistry, 'heartbeat' | 'deregister' | 'startDraining' | 'drainRequested'>;
  leases: Pick<RedisSessionLeases, 'renew'>;
  /** self-fencing: closes every socket once renewals lapse; the runners ask it before acting */
  watchdog: Pick<LeaseWatchdog, 'onLapse' | 'start' | 'stop' | 'renewed' | 'trusted' | 'check'>;
  commands: Pick<CommandServer, 'start' | 'close'>;
  /** the send and adopt signals, heard on the node's one subscriber connection (GatewaySignals) */
  signals: NodeSignalListener;
  opsServer: OpsServerStarter;
  /** moves a session held here to another gateway (drain) */
  mover: Pick<SessionMover, 'move'>;
  /** the fleet supervisor, when this node runs one: a draining leader gives up leadership first */
  leader?: { stepDown(): Promise<void> };
  /** the sessions gauge of GatewayMetrics */
  metrics: { sessions: { set(value: number): void } };
  logger: Logger;
  clock?: () => number;
  intervals?: IntervalTimers;
  sleep?: (ms: number) => Promise<void>;
}

/** What a node hears: the API queued messages for a session (SendSignal), the table assigns it sessions (AdoptSignal). */
export interface NodeSignalHandlers {
  send(sessionId: string): void;
  adopt(): void;
}

/**
 * Subscribes to this node's signals, all on one subscriber connection; the returned function unsubscribes and closes
 * what it opened.
 */
export interface NodeSignalListener {
  listen(handlers: NodeSignalHandlers): Promise<() => Promise<void>>;
}

/** Starts the health/readiness/metrics server; readiness also asks `accepting` (false while draining). */
export type OpsServerStarter = (accepting: () => boolean) => Promise<{ port: number; close: () => Promise<void> }>;

export interface GatewayNodeSettings {
  gatewayId: string;
  engine: string;
  heartbeatMs: number;
  sweepMs: number;
  /** how often the node converges on the sessions table (adopt + hand off) */
  adoptMs: number;
  /** longest a drain may take (k8s terminationGracePeriodSeconds); the rest is closed just before it ends */
  drainGraceMs: number;
}

/** Kept of the drain grace for closing what could not be moved, deregistering and exiting. */
const DRAIN_CLOSE_RESERVE_MS = 3000;
/** Pause between drain passes when a pass could move nothing (no other gateway has room). */
const DRAIN_RETRY_MS = 500;
/**
 * Sessions moved at once by a drain. Each hand-off waits for its in-flight event (commit + ack) and its socket's close,
 * so one at a time a loaded machine missed the grace period; a few at a time it does not, and the network still sees a
 * bounded number of reconnects at once (the same bound as the mover's conditional updates).
 */
export const DRAIN_CONCURRENCY = 8;

/**
 * One gateway node's lifecycle: registry entry + heartbeat, session leases and their watchdog, the command worker, the
 * converge loop over the sessions placed here, the send signal and its sweep, drain, and the ops server (health,
 * readiness, metrics). `start` is called once the application context is built; `stop` runs before the context closes
 * the shared connections (Redis, PostgreSQL).
 */
export class GatewayNode implements BeforeApplicationShutdown {
  private unlisten: (() => Promise<void>) | null = null;
  /** adopt signals act once the node has resumed what the table placed on it (that pass reads the table itself) */
  private adopting = false;
  /** the converge passes run by the interval and the adopt signal, one after another */
  private converging: Promise<void> | null = null;
  /** a signal came during a pass: the table may have changed after that pass read it, so one more follows */
  private convergeAgain = false;
  private sweepTimer: unknown = null;
  private heartbeatTimer: unknown = null;
  private adoptTimer: unknown = null;
  private ops: { close: () => Promise<void>; port: number } | null = null;
  private stopping: Promise<void> | null = null;
  private draining: Promise<void> | null = null;
  private onDrainRequested: () => void = () => undefined;
  private readonly clock: () => number;
  private readonly intervals: IntervalTimers;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly settings: GatewayNodeSettings,
    private readonly parts: GatewayNodeParts,
  ) {
    this.clock = parts.clock ?? Date.now;
    this.intervals = parts.intervals ?? realIntervals;
    this.sleep = parts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    parts.watchdog.onLapse(async () => {
      parts.logger.error({ gatewayId: settings.gatewayId }, 'lease renewals lapsed: closing every socket before the leases expire');
      await parts.host.closeAllUnfenced();
    });
  }

  private get watchdog() {
    return this.parts.watchdog;
  }

  /** Whether the node takes sessions (readiness): not while draining or stopping. */
  get accepting(): boolean {
    return this.draining === null && this.stopping === null;
  }

  /** What to do when an operator asks this node to drain (`gateway:drain`); main.ts drains and exits as on SIGTERM. */
  whenDrainRequested(handler: () => void): void {
    this.onDrainRequested = handler;
  }

  async start(): Promise<void> {
    const { host, commands, metrics, logger } = this.parts;
    await commands.start();
    await this.beat();
    this.watchdog.start();
    this.heartbeatTimer = this.intervals.setInterval(() => {
      void this.beat().then(() => metrics.sessions.set(host.sessionCount));
    }, this.settings.heartbeatMs);

    this.unlisten = await this.parts.signals.listen({
      send: (sessionId) => host.signal(sessionId),
      adopt: () => {
        if (this.adopting) this.convergeSoon();
      },
    });
    this.sweepTimer = this.intervals.setInterval(() => {
      host.sweepQueued().catch((err) => logger.warn({ err: String(err) }, 'sweeping queued messages failed'));
    }, this.settings.sweepMs);

    const resumed = await host.resume();
    this.adoptTimer = this.intervals.setInterval(() => {
      if (this.converging === null) this.convergeSoon();
    }, this.settings.adoptMs);
    this.adopting = true;
    await this.beat();
    this.ops = await this.parts.opsServer(() => this.accepting);
    logger.info({ gatewayId: this.settings.gatewayId, engine: this.settings.engine, resumed, healthPort: this.ops.port }, 'gateway started');
  }

  /** Heartbeat and lease renewal share one tick: a node that cannot renew must not keep sockets open. */
  private async beat(): Promise<void> {
    const { host, registry, leases, logger } = this.parts;
    // after a pause, the lapse is acted on before this beat could take back leases that expired meanwhile
    await this.watchdog.check();
    const startedAt = this.clock();
    try {
      await registry.heartbeat(host.sessionCount);
      const lost = await leases.renew(host.leasedSessionIds());
      this.watchdog.renewed(startedAt);
      if (lost.length > 0) await host.leaseLost(lost);
      if (this.draining === null && this.stopping === null && (await registry.drainRequested())) {
        logger.info({ gatewayId: this.settings.gatewayId }, 'drain requested');
        this.onDrainRequested();
      }
    } catch (err) {
      logger.warn({ err: String(err) }, 'heartbeat failed');
    }
  }

  /**
   * A converge pass now, or, when one is running, one more right after it: a signal says the table changed, and the
   * running pass may have read it before. Any number of signals during a pass make one more pass.
   */
  private convergeSoon(): void {
    if (this.converging !== null) {
      this.convergeAgain = true;
      return;
    }
    this.converging = (async () => {
      do {
        this.convergeAgain = false;
        await this.converge();
      } while (this.convergeAgain && this.accepting);
    })().finally(() => (this.converging = null));
  }

  /** One adopt/hand-off pass; skipped while the leases are not trusted (the watchdog closed everything). */
  private async converge(): Promise<void> {
    if (!this.watchdog.trusted() || this.draining || this.stopping) return;
    try {
      await this.parts.host.converge();
    } catch (err) {
      this.parts.logger.warn({ err: String(err) }, 'converging on the sessions table failed');
    }
  }

  /**
   * Hands every session held here to other gateways, DRAIN_CONCURRENCY at a time (placement + move + signal + hand off),
   * so the drain fits its grace period on a loaded machine and the network still sees a bounded number of reconnects at
   * once, never a storm. Each hand-off stops reading the old socket first, finishes or gives back (un-acked) what is in
   * flight, and only then releases the lease (SessionRunner.shutdown). Placement skips this node from the first step
   * (its registry entry says `draining`). What cannot be moved before the grace period is nearly over is closed
   * cleanly, its lease released, for failover to place. Resolves when this node holds nothing; `stop` does the rest.
   */
  drain(): Promise<void> {
    const { host, registry, logger } = this.parts;
    this.draining ??= (async () => {
      const deadline = this.clock() + Math.max(0, this.settings.drainGraceMs - DRAIN_CLOSE_RESERVE_MS);
      logger.info({ gatewayId: this.settings.gatewayId, sessions: host.sessionCount }, 'draining');
      if (this.adoptTimer !== null) this.intervals.clearInterval(this.adoptTimer);
      await this.parts.leader?.stepDown().catch((err) => logger.warn({ err: String(err) }, 'stepping down as leader failed'));
      await registry.startDraining(host.sessionCount).catch((err) => logger.warn({ err: String(err) }, 'announcing the drain failed'));
      let moved = 0;
      // with no other gateway up (a single node restarting, a rollout whose new pod is still starting) every pass
      // fails the same way: said once, then retried quietly until one appears or the grace period runs out
      let waitingSaid = false;
      while (this.clock() < deadline) {
        const held = host.activeSessionIds();
        if (held.length === 0) break;
        const pass = await this.drainPass(held, deadline);
        moved += pass.moved;
        if (pass.noTarget && !waitingSaid) {
          logger.warn({ sessions: held.length }, 'draining: no other gateway can take the sessions yet; waiting for one until the grace period ends');
          waitingSaid = true;
        }
        if (!pass.progressed) await this.sleep(DRAIN_RETRY_MS);
      }
      const left = host.sessionCount;
      await host.shutdown();
      logger.info({ gatewayId: this.settings.gatewayId, moved, leftForFailover: left }, 'drained');
    })();
    return this.draining;
  }

  /** One pass over the sessions held: DRAIN_CONCURRENCY workers, stopping early when no gateway can take them. */
  private async drainPass(held: string[], deadline: number): Promise<{ moved: number; progressed: boolean; noTarget: boolean }> {
    const { host, mover, logger } = this.parts;
    const queue = [...held];
    const pass = { moved: 0, progressed: false, noTarget: false };
    const worker = async () => {
      for (let sessionId = queue.shift(); sessionId !== undefined; sessionId = queue.shift()) {
        if (pass.noTarget || this.clock() >= deadline) return;
        try {
          // null: the row is no longer ours (another mover won); let go of it all the same
          if ((await mover.move(sessionId, this.settings.gatewayId, 'drain')) !== null) pass.moved += 1;
          await host.handOff(sessionId);
          pass.progressed = true;
        } catch (err) {
          if (err instanceof DomainError && err.code === 'gateway_unavailable') pass.noTarget = true;
          else logger.warn({ sessionId, err: String(err) }, 'moving a session off the draining gateway failed');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(DRAIN_CONCURRENCY, queue.length) }, worker));
    return pass;
  }

  /**
   * Stops taking commands, closes sockets without logging out, releases leases, leaves the registry. The shared
   * Redis client and the data source close after this, when the application context shuts down.
   */
  stop(): Promise<void> {
    const { host, registry, commands, logger } = this.parts;
    this.stopping ??= (async () => {
      for (const timer of [this.heartbeatTimer, this.sweepTimer, this.adoptTimer]) if (timer !== null) this.intervals.clearInterval(timer);
      this.watchdog.stop();
      this.adopting = false;
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
