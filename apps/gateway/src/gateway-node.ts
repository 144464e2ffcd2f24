import { BeforeApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { DomainError } from '@app/contracts';
import type { CommandServer, GatewayRegistry, RedisSessionLeases } from '@app/fleet';
import type { NodeKeeper } from './lease-keeper';
import type { KeeperReport } from './lease-keeper-loop';
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
  registry: Pick<GatewayRegistry, 'deregister' | 'startDraining' | 'drainRequested'>;
  /** re-stamps the leases held after the node's epoch changed (the keeper renews them all at once otherwise) */
  leases: Pick<RedisSessionLeases, 'reclaim'>;
  /** the lease keeper thread: renews the node's registry entry and lease epoch whatever the main thread is doing */
  keeper: Pick<NodeKeeper, 'start' | 'stop' | 'unackedEpoch' | 'ack' | 'epochStartedAt' | 'rotate' | 'sessionCount' | 'waWebVersion' | 'startDraining' | 'onReport'>;
  /** the engine's WhatsApp Web version, for the registry entry the keeper writes */
  waWebVersion?: () => string | null;
  /** self-fencing: closes every socket once renewals lapse; the runners ask it before acting */
  watchdog: Pick<LeaseWatchdog, 'onLapse' | 'start' | 'stop' | 'renewed' | 'trusted' | 'check' | 'closingNow'>;
  commands: Pick<CommandServer, 'start' | 'close'>;
  /** the send and adopt signals, heard on the node's one subscriber connection (GatewaySignals) */
  signals: NodeSignalListener;
  opsServer: OpsServerStarter;
  /** moves a session held here to another gateway (drain) */
  mover: Pick<SessionMover, 'move'>;
  /** the fleet supervisor, when this node runs one: a draining leader gives up leadership first */
  leader?: { stepDown(): Promise<void> };
  /** the sessions gauge and the lease lapse counter of GatewayMetrics */
  metrics: { sessions: { set(value: number): void }; leaseLapses: { inc(): void } };
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
  /** how often the node converges on the sessions table without a signal (the safety sweep behind the adopt signal) */
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
  /** re-stamping the leases held with a new epoch; one at a time */
  private reclaiming: Promise<void> | null = null;
  /** a lapse closed everything: once the leases are trusted again, a converge pass takes back what is placed here */
  private convergeAfterLapse = false;
  private lastWaWebVersion: string | null = null;
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
      parts.metrics.leaseLapses.inc();
      await parts.host.closeAllUnfenced();
      // the leases of the old epoch die now, even those whose node key had not expired: no lease outlives its runner
      parts.keeper.rotate();
      this.convergeAfterLapse = true;
    });
    parts.keeper.onReport((report) => this.keeperSaid(report));
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
    await this.parts.keeper.start();
    // the first epoch acknowledged before the first look at the watchdog: starting the thread is no lapse
    await this.reclaim();
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

  /**
   * The main thread's share of the heartbeat (the keeper thread renews): what the keeper reports (sessions held, the
   * WhatsApp Web version), re-stamping the leases after an epoch change, a drain request, and, after a lapse, the
   * converge pass that takes back what is placed here.
   */
  private async beat(): Promise<void> {
    const { host, registry, keeper, logger } = this.parts;
    // after a pause, the lapse is acted on before anything could re-stamp leases that expired meanwhile
    await this.watchdog.check();
    keeper.sessionCount(host.sessionCount);
    const version = this.parts.waWebVersion?.() ?? null;
    if (version !== this.lastWaWebVersion) keeper.waWebVersion((this.lastWaWebVersion = version));
    try {
      await this.reclaim();
      if (this.draining === null && this.stopping === null && (await registry.drainRequested())) {
        logger.info({ gatewayId: this.settings.gatewayId }, 'drain requested');
        this.onDrainRequested();
      }
    } catch (err) {
      logger.warn({ err: String(err) }, 'heartbeat failed');
    }
    if (this.convergeAfterLapse && this.adopting && this.watchdog.trusted()) {
      this.convergeAfterLapse = false;
      this.convergeSoon();
    }
  }

  /**
   * The keeper wrote a new epoch (the old one's node key had expired, Redis lost it, or a lapse asked for one): the
   * leases still held are re-stamped with it, and the keeper's renewals count again once they are. Never while a lapse
   * is closing the sockets: a lease re-stamped for a runner being closed would outlive it.
   */
  private reclaim(): Promise<void> {
    this.reclaiming ??= (async () => {
      const { host, keeper, leases } = this.parts;
      const epoch = keeper.unackedEpoch();
      if (epoch === null || this.watchdog.closingNow) return;
      const lost = await leases.reclaim(host.leasedSessionIds(), epoch);
      keeper.ack(epoch);
      // what is held now carries the epoch, whose node key was written (with the whole TTL) when it started
      this.watchdog.renewed(keeper.epochStartedAt());
      if (lost.length === 0) return;
      await host.leaseLost(lost);
      // a lease Redis lost with a restart is free: those still placed here are taken again now, not at the next sweep
      if (this.adopting) this.convergeSoon();
    })().finally(() => (this.reclaiming = null));
    return this.reclaiming;
  }

  private keeperSaid(report: KeeperReport): void {
    const { logger } = this.parts;
    if (report.kind === 'epoch') void this.reclaim().catch((err) => logger.warn({ err: String(err) }, 're-stamping the leases with a new epoch failed'));
    else if (report.kind === 'main-stalled') logger.error({ silentMs: report.sinceMs }, 'lease keeper: the main thread stopped answering; renewals stopped');
    else if (report.kind === 'failed') logger.warn({ err: report.err }, 'lease renewal failed');
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
      this.parts.keeper.startDraining();
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
      // the keeper first: a renewal after the deregistration would list the node again
      await this.parts.keeper.stop();
      await registry.deregister().catch(() => undefined);
      await this.ops?.close();
    })();
    return this.stopping;
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }
}
