import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { LeadershipLostError, SessionsRepository } from '@app/database';
import { GatewayEntry, SessionPlacement } from '@app/fleet';
import { DeathWatch, DeadGateway } from './death-watch';
import type { MoveFence, SessionMover } from './session-mover';

/**
 * The leader election (`PgLeaderLease`): `hold` keeps or takes the lease, `release` gives it up, `fenced` runs a
 * leader's write only while its term holds (LeadershipLostError otherwise, nothing written).
 */
export interface LeaderElection {
  hold(): Promise<boolean>;
  release(): Promise<void>;
  fenced: MoveFence;
}

/** What the supervisor counts (GatewayMetrics); the moves themselves are counted by the mover. */
export interface FleetSupervisorMetrics {
  observeFailover(seconds: number): void;
  setLeader(leading: boolean): void;
}

/** pino's (fields, message) order */
export interface SupervisorLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface FleetSupervisorPorts {
  election: LeaderElection;
  directory: { list(): Promise<GatewayEntry[]> };
  sessions: Pick<SessionsRepository, 'resumableCountsByGateway' | 'movableOn' | 'placedCountsOn' | 'connectedSince'>;
  /** every move is the mover's: the conditional update, the event, the count and the adopt signal */
  mover: Pick<SessionMover, 'moveAll'>;
  metrics: FleetSupervisorMetrics;
  logger: SupervisorLogger;
  clock?: () => number;
}

export interface FleetSupervisorSettings {
  enabled: boolean;
  gatewayId: string;
  intervalMs: number;
  ttlMs: number;
  /** how long an expired gateway must stay missing before the leader moves its sessions */
  confirmMs: number;
  /** rebalance moves per minute at most (0: never) */
  rebalancePerMin: number;
  /** points of load (% of capacity) between the fullest and the emptiest gateway above which the leader rebalances */
  rebalanceThresholdPct: number;
}

/** A moved session that has not connected by then is no longer waited for (its failover time is not recorded). */
const FAILOVER_WATCH_MS = 120_000;

interface LandingWatch {
  ids: Set<string>;
  diedAt: number;
  movedAt: number;
}

/** A gateway is draining when its registry entry says so (older entries have no such field). */
const isDraining = (g: GatewayEntry): boolean => g.draining === true;

/**
 * Heals the fleet from the sessions table: one leader among the gateways (a PostgreSQL lease with an expiry and a
 * term, so a stopped or cut-off leader loses it and a Redis restart elects nobody new) watches the registry, moves every session of a dead gateway onto live ones by free
 * capacity all at once (failover), and moves sessions one at a time from the fullest gateway to the emptiest while the
 * spread is above the threshold, no faster than REBALANCE_MOVES_PER_MIN (rebalance). Each move is the SessionMover's
 * (the conditional row update, the event with the reason, the adopt signal); the gateways converge on the table themselves.
 */
export class FleetSupervisor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly deaths: DeathWatch;
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private stopped = false;
  private leading = false;
  private nextRebalanceAt = 0;
  private readonly landings: LandingWatch[] = [];
  /** when the last look says a watched gateway's heartbeat reaches its TTL (null: none sooner than an interval) */
  private nextVerdictAt: number | null = null;
  /** every move of the leader's runs inside its term */
  private readonly fence: MoveFence = (move) => this.ports.election.fenced(move);

  constructor(
    private readonly settings: FleetSupervisorSettings,
    private readonly ports: FleetSupervisorPorts,
  ) {
    this.deaths = new DeathWatch({ ttlMs: settings.ttlMs, confirmMs: settings.confirmMs });
    this.clock = ports.clock ?? Date.now;
  }

  onApplicationBootstrap(): void {
    if (!this.settings.enabled) return;
    const loop = (delayMs: number) => {
      this.timer = setTimeout(() => {
        this.ticking = this.tick().finally(() => {
          this.ticking = null;
          if (!this.stopped) loop(this.nextLookInMs());
        });
      }, delayMs);
    };
    loop(this.settings.intervalMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    await this.resign();
  }

  /**
   * How long until the next look: SUPERVISOR_INTERVAL_MS, or less when a watched gateway's heartbeat reaches its TTL
   * sooner (DeathWatch.nextVerdictAt). A gateway killed just after a heartbeat used to be noticed at the first tick
   * after its TTL, 0–0.5 s (plus the tick's own time on a loaded box) after its leases had expired.
   */
  nextLookInMs(): number {
    const at = this.nextVerdictAt;
    const wait = at === null ? this.settings.intervalMs : at - this.clock();
    return wait > 0 && wait < this.settings.intervalMs ? wait : this.settings.intervalMs;
  }

  /**
   * One look at the fleet; acts only while this gateway leads. Errors end the tick, never the loop; a move refused
   * because the term ended (a leader resumed after a pause, a lease that lapsed) makes this gateway step down.
   */
  async tick(): Promise<void> {
    this.nextVerdictAt = null;
    try {
      await this.lookAtFleet();
    } catch (err) {
      if (err instanceof LeadershipLostError) return this.lost();
      this.deaths.forget();
      this.ports.logger.warn({ err: String(err) }, 'fleet supervisor tick failed');
    }
  }

  private lost(): void {
    if (this.leading) this.ports.logger.warn({ gatewayId: this.settings.gatewayId }, 'fleet supervisor lost the leadership');
    this.leading = false;
    this.ports.metrics.setLeader(false);
    this.deaths.forget();
  }

  private async lookAtFleet(): Promise<void> {
    const { directory, sessions, logger } = this.ports;
    const registry = await directory.list();
    // a draining gateway is on its way out: another one must lead meanwhile
    if (registry.some((g) => g.id === this.settings.gatewayId && isDraining(g))) return this.resign();
    if (!(await this.ports.election.hold())) return this.lost();
    if (!this.leading) {
      this.leading = true;
      this.ports.metrics.setLeader(true);
      logger.info({ gatewayId: this.settings.gatewayId }, 'fleet supervisor leads');
    }
    const placed = await sessions.resumableCountsByGateway();
    const now = this.clock();
    const dead = this.deaths.observe(registry, placed.keys(), now).filter((g) => (placed.get(g.id) ?? 0) > 0);
    this.nextVerdictAt = this.deaths.nextVerdictAt(registry, now);
    const targets = registry.filter((g) => g.alive && !isDraining(g));
    await this.recordLandings(now);
    if (dead.length > 0) {
      if (targets.length === 0) logger.warn({ dead: dead.map((g) => g.id) }, 'gateways died and none is alive to take their sessions');
      else for (const gateway of dead) await this.failOver(gateway, targets);
      return;
    }
    await this.rebalance(targets, now);
  }

  private async failOver(gateway: DeadGateway, targets: GatewayEntry[]): Promise<void> {
    const orphans = await this.ports.sessions.movableOn(gateway.id);
    const movedAt = this.clock();
    const placement = await PlacementSnapshot.of(targets, this.ports.sessions);
    const moved = await this.ports.mover.moveAll(gateway.id, orphans, 'failover', () => placement.take(), (to) => placement.adjust(to, -1), this.fence);
    this.landings.push({ ids: new Set(moved.map((m) => m.session.id)), diedAt: gateway.diedAt, movedAt });
    this.ports.logger.info(
      { gatewayId: gateway.id, diedAt: gateway.diedAt, orphans: orphans.length, moved: moved.length, to: placement.summary() },
      'failed over the sessions of a dead gateway',
    );
  }

  /** One move when it is due and the spread is above the threshold: from the fullest gateway to the emptiest. */
  private async rebalance(targets: GatewayEntry[], now: number): Promise<void> {
    const { rebalancePerMin, rebalanceThresholdPct } = this.settings;
    if (rebalancePerMin <= 0 || targets.length < 2 || now < this.nextRebalanceAt) return;
    const placed = await this.ports.sessions.placedCountsOn(targets.map((g) => g.id));
    const loads = targets
      .map((g) => ({ id: g.id, placed: placed.get(g.id) ?? 0, pct: (100 * (placed.get(g.id) ?? 0)) / g.capacity }))
      .sort((a, b) => b.pct - a.pct || b.placed - a.placed || a.id.localeCompare(b.id));
    const fullest = loads[0];
    const emptiest = loads[loads.length - 1];
    // a difference of one session would only swap which gateway is the fuller one
    if (fullest.pct - emptiest.pct <= rebalanceThresholdPct || fullest.placed - emptiest.placed < 2) return;
    const [session] = await this.ports.sessions.movableOn(fullest.id, 1);
    if (!session) return;
    await this.ports.mover.moveAll(fullest.id, [session], 'rebalance', async () => emptiest.id, undefined, this.fence);
    // spaced from the move itself (as its event is stamped), not from the start of the tick
    this.nextRebalanceAt = this.clock() + 60_000 / rebalancePerMin;
  }

  /** Failover time per session: from the dead gateway's last heartbeat to `working` on its new gateway. */
  private async recordLandings(now: number): Promise<void> {
    for (const watch of [...this.landings]) {
      const landed = await this.ports.sessions.connectedSince([...watch.ids], new Date(watch.movedAt));
      for (const [id, at] of landed) {
        watch.ids.delete(id);
        this.ports.metrics.observeFailover(Math.max(0, at.getTime() - watch.diedAt) / 1000);
      }
      if (watch.ids.size === 0 || now - watch.movedAt > FAILOVER_WATCH_MS) this.landings.splice(this.landings.indexOf(watch), 1);
    }
  }

  /** A draining node gives up leadership before it starts moving its own sessions. */
  stepDown(): Promise<void> {
    return this.resign();
  }

  private async resign(): Promise<void> {
    this.deaths.forget();
    if (this.leading) this.ports.logger.info({ gatewayId: this.settings.gatewayId }, 'fleet supervisor steps down');
    this.leading = false;
    this.ports.metrics.setLeader(false);
    await this.ports.election.release();
  }
}

/**
 * SessionPlacement over a snapshot taken once per failover, counting each move as it is made: placing thousands of
 * sessions stays one registry read and one count query, and still spreads them by free capacity.
 */
class PlacementSnapshot {
  private readonly placement: SessionPlacement;
  private turn: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly targets: GatewayEntry[],
    private readonly counts: Map<string, number>,
  ) {
    this.placement = new SessionPlacement({ live: async () => this.targets }, { placedCountsOn: async () => this.counts });
  }

  static async of(targets: GatewayEntry[], sessions: Pick<SessionsRepository, 'placedCountsOn'>): Promise<PlacementSnapshot> {
    return new PlacementSnapshot(targets, await sessions.placedCountsOn(targets.map((g) => g.id)));
  }

  /**
   * The next target, counted at once: concurrent movers take turns, so they spread instead of all picking the gateway
   * that was emptiest when they asked. A lost move gives its place back (`adjust(to, -1)`).
   */
  take(): Promise<string> {
    const next = this.turn.then(async () => {
      const { gatewayId: to } = await this.placement.choose();
      this.adjust(to, +1);
      return to;
    });
    this.turn = next.catch(() => undefined);
    return next;
  }

  adjust(gatewayId: string, by: number): void {
    this.counts.set(gatewayId, (this.counts.get(gatewayId) ?? 0) + by);
  }

  summary(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}
