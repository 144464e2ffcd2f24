import type { EventEnvelope, EventPayloads, EventType, SessionStatus } from '@app/contracts';
import type { PublishInput } from '@app/events';
import { LeadershipLostError } from '@app/database';
import type { GatewayEntry } from '@app/fleet';
import { DeathWatch, VERDICT_MARGIN_MS } from './death-watch';
import { FleetSupervisor, FleetSupervisorPorts, FleetSupervisorSettings } from './fleet-supervisor';
import { SessionMovedPayload, SessionMover, SessionMoverPorts } from './session-mover';

interface Row {
  id: string;
  organizationId: string;
  gatewayId: string;
  status: SessionStatus;
  desiredState: 'running' | 'stopped';
  lastConnectedAt: Date | null;
}

type SessionTable = FleetSupervisorPorts['sessions'] & Pick<SessionMoverPorts['sessions'], 'moveManyToGateway'>;

const NOT_RESUMED: SessionStatus[] = ['stopped', 'failed', 'logged_out'];

/** The sessions table as the supervisor sees it. */
class FakeSessions implements SessionTable {
  readonly rows = new Map<string, Row>();
  /** a move another mover wins first */
  stolen = new Set<string>();

  add(id: string, gatewayId: string, status: SessionStatus = 'working', desiredState: 'running' | 'stopped' = 'running'): void {
    this.rows.set(id, { id, organizationId: 'org_1', gatewayId, status, desiredState, lastConnectedAt: null });
  }

  on(gatewayId: string): string[] {
    return [...this.rows.values()].filter((r) => r.gatewayId === gatewayId).map((r) => r.id);
  }

  private movable(r: Row): boolean {
    return r.desiredState === 'running' && !NOT_RESUMED.includes(r.status);
  }

  async resumableCountsByGateway(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const r of this.rows.values()) if (this.movable(r)) counts.set(r.gatewayId, (counts.get(r.gatewayId) ?? 0) + 1);
    return counts;
  }

  async movableOn(gatewayId: string, limit = 100000) {
    return [...this.rows.values()]
      .filter((r) => r.gatewayId === gatewayId && this.movable(r))
      .sort((a, b) => a.id.localeCompare(b.id))
      .slice(0, limit)
      .map((r) => ({ id: r.id, organizationId: r.organizationId, status: r.status }));
  }

  async moveToGateway(id: string, from: string | null, to: string): Promise<boolean> {
    const row = this.rows.get(id);
    if (this.stolen.has(id) && row) row.gatewayId = 'gw-thief';
    if (!row || row.gatewayId !== from) return false;
    row.gatewayId = to;
    return true;
  }

  /** one statement in PostgreSQL: each row moves only if it is still on `from` */
  async moveManyToGateway(from: string, moves: ReadonlyArray<{ id: string; to: string }>): Promise<string[]> {
    this.statements += 1;
    const moved: string[] = [];
    for (const { id, to } of moves) if (await this.moveToGateway(id, from, to)) moved.push(id);
    return moved;
  }

  /** move statements run */
  statements = 0;

  async placedCountsOn(gatewayIds: string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const r of this.rows.values()) {
      if (r.desiredState === 'running' && gatewayIds.includes(r.gatewayId)) counts.set(r.gatewayId, (counts.get(r.gatewayId) ?? 0) + 1);
    }
    return counts;
  }

  async connectedSince(ids: string[], since: Date): Promise<Map<string, Date>> {
    const found = new Map<string, Date>();
    for (const id of ids) {
      const r = this.rows.get(id);
      if (r?.status === 'working' && r.lastConnectedAt && r.lastConnectedAt >= since) found.set(id, r.lastConnectedAt);
    }
    return found;
  }
}

const gateway = (id: string, alive: boolean, lastHeartbeatAt: number, extra: Partial<GatewayEntry> = {}): GatewayEntry => ({
  id,
  alive,
  capacity: 100,
  sessionCount: 0,
  startedAt: 0,
  lastHeartbeatAt,
  engine: 'sim',
  version: 'test',
  draining: false,
  ...extra,
});

function fleet(settings: Partial<FleetSupervisorSettings> = {}) {
  let now = 100_000;
  const sessions = new FakeSessions();
  let registry: GatewayEntry[] = [];
  let leader = true;
  /** the term `hold` answered for is still PostgreSQL's (false: it ended since, a pause or a takeover) */
  let termHeld = true;
  const gauge: boolean[] = [];
  const published: EventEnvelope<SessionMovedPayload>[] = [];
  const signalled: string[] = [];
  const moves: Array<[string, string, string]> = [];
  const failovers: number[] = [];
  let released = 0;
  const supervisor = new FleetSupervisor(
    { enabled: true, gatewayId: 'gw-a', intervalMs: 500, ttlMs: 6000, confirmMs: 2000, rebalancePerMin: 0, rebalanceThresholdPct: 10, ...settings },
    {
      election: {
        hold: async () => leader,
        release: async () => void (released += 1),
        fenced: async (move) => {
          if (!termHeld) throw new LeadershipLostError('fleet', 1);
          return move();
        },
      },
      directory: { list: async () => registry },
      sessions,
      // the real mover over the same fakes: what a move does is part of what is checked here
      mover: new SessionMover({
        placement: { choose: async () => ({ gatewayId: 'unused', fleetCapacity: 0 }) },
        sessions: { moveManyToGateway: (from, moves) => sessions.moveManyToGateway(from, moves), findRuntime: async () => null },
        signal: async (g) => void signalled.push(g),
        events: {
          build: <T extends EventType>(input: PublishInput<T>) => ({ id: `evt_${now}`, timestamp: now, ...input }) as EventEnvelope<EventPayloads[T]>,
          publishEnvelopes: async (envelopes: EventEnvelope<object>[]) => void published.push(...(envelopes as EventEnvelope<SessionMovedPayload>[])),
        },
        metrics: { recordMove: (reason, from, to) => void moves.push([reason, from, to]) },
        logger: { info: () => undefined, debug: () => undefined },
      }),
      metrics: {
        observeFailover: (s) => void failovers.push(s),
        setLeader: (v) => void gauge.push(v),
      },
      logger: { info: () => undefined, warn: () => undefined },
      clock: () => now,
    },
  );
  return {
    supervisor,
    sessions,
    published,
    signalled,
    moves,
    failovers,
    get released() {
      return released;
    },
    setRegistry: (r: GatewayEntry[]) => void (registry = r),
    setLeader: (v: boolean) => void (leader = v),
    endTerm: () => void (termHeld = false),
    gauge,
    advance: (ms: number) => void (now += ms),
    get now() {
      return now;
    },
  };
}

describe('DeathWatch', () => {
  const watch = () => new DeathWatch({ ttlMs: 6000, confirmMs: 2000 });

  it('declares a gateway whose heartbeat expired dead once the leader has seen it missing for confirmMs', () => {
    const w = watch();
    const entry = gateway('gw-b', false, 0);
    expect(w.observe([entry], ['gw-b'], 6500)).toEqual([]);
    expect(w.observe([entry], ['gw-b'], 8000)).toEqual([]);
    expect(w.observe([entry], ['gw-b'], 8500)).toEqual([{ id: 'gw-b', diedAt: 0 }]);
  });

  it('declares a gateway it watched stop beating dead as soon as its heartbeat is a TTL old (its leases expired with it)', () => {
    const w = watch();
    expect(w.observe([gateway('gw-b', true, 0)], ['gw-b'], 500)).toEqual([]);
    const silent = gateway('gw-b', false, 0);
    expect(w.observe([silent], ['gw-b'], 5999)).toEqual([]);
    expect(w.observe([silent], ['gw-b'], 6000)).toEqual([{ id: 'gw-b', diedAt: 0 }]);
  });

  it('once its view was interrupted (a Redis restart), the leader confirms a silent gateway for a heartbeat again', () => {
    const w = watch();
    w.observe([gateway('gw-b', true, 0)], ['gw-b'], 500);
    w.forget();
    const silent = gateway('gw-b', false, 0);
    expect(w.observe([silent], ['gw-b'], 6500)).toEqual([]);
    expect(w.observe([silent], ['gw-b'], 8000)).toEqual([]);
    expect(w.observe([silent], ['gw-b'], 8500)).toEqual([{ id: 'gw-b', diedAt: 0 }]);
  });

  it('after Redis came back empty, gateways that re-register within a heartbeat are never dead', () => {
    const w = watch();
    // the registry is empty; sessions still name both gateways
    for (let t = 0; t <= 2000; t += 500) expect(w.observe([], ['gw-a', 'gw-b'], t)).toEqual([]);
    const back = [gateway('gw-a', true, 2500), gateway('gw-b', true, 2500)];
    expect(w.observe(back, ['gw-a', 'gw-b'], 2500)).toEqual([]);
    expect(w.observe(back, ['gw-a', 'gw-b'], 20000)).toEqual([]);
  });

  it('a gateway gone from the registry with sessions left is dead after a whole TTL of watching', () => {
    const w = watch();
    expect(w.observe([], ['gw-gone'], 1000)).toEqual([]);
    expect(w.observe([], ['gw-gone'], 6999)).toEqual([]);
    expect(w.observe([], ['gw-gone'], 7000)).toEqual([{ id: 'gw-gone', diedAt: 1000 }]);
  });

  it('names the next moment a watched heartbeat reaches its TTL, only ahead of now and only for gateways seen beating', () => {
    const w = watch();
    const fleetNow = [gateway('gw-b', true, 1000), gateway('gw-c', true, 2000), gateway('gw-d', false, 0)];
    // nothing seen beating yet
    expect(w.nextVerdictAt(fleetNow, 3000)).toBeNull();
    w.observe(fleetNow, ['gw-b', 'gw-c', 'gw-d'], 3000);
    expect(w.nextVerdictAt(fleetNow, 3000)).toBe(1000 + 6000 + VERDICT_MARGIN_MS);
    // past gw-b's moment (its key not expired yet): gw-c's is next; past both, none
    expect(w.nextVerdictAt(fleetNow, 7100)).toBe(2000 + 6000 + VERDICT_MARGIN_MS);
    expect(w.nextVerdictAt(fleetNow, 9000)).toBeNull();
  });

  it('an interrupted view starts over', () => {
    const w = watch();
    w.observe([], ['gw-gone'], 0);
    w.forget();
    expect(w.observe([], ['gw-gone'], 6000)).toEqual([]);
  });
});

describe('FleetSupervisor', () => {
  it("looks again when a watched gateway's heartbeat reaches its TTL, not a whole interval later, and fails it over then", async () => {
    const f = fleet();
    f.sessions.add('ses_1', 'gw-b');
    // gw-b beat 5.8 s ago: its alive key expires in 0.2 s
    f.setRegistry([gateway('gw-a', true, f.now), gateway('gw-b', true, f.now - 5800)]);
    await f.supervisor.tick();
    expect(f.supervisor.nextLookInMs()).toBe(200 + VERDICT_MARGIN_MS);
    f.advance(200 + VERDICT_MARGIN_MS);
    f.setRegistry([gateway('gw-a', true, f.now), gateway('gw-b', false, f.now - 6000 - VERDICT_MARGIN_MS)]);
    await f.supervisor.tick();
    expect(f.sessions.on('gw-a')).toEqual(['ses_1']);
    // nothing due sooner: the interval
    expect(f.supervisor.nextLookInMs()).toBe(500);
  });

  it('moves every running session of a dead gateway to the live ones by free capacity, announces each move and signals each target once', async () => {
    const f = fleet();
    for (let i = 0; i < 6; i++) f.sessions.add(`s${i}`, 'gw-dead');
    f.sessions.add('s-stopped', 'gw-dead', 'stopped', 'stopped');
    f.sessions.add('s-logged-out', 'gw-dead', 'logged_out', 'stopped');
    f.sessions.add('s-failed', 'gw-dead', 'failed');
    for (let i = 0; i < 4; i++) f.sessions.add(`a${i}`, 'gw-a');
    const diedAt = f.now - 7000;
    f.setRegistry([gateway('gw-a', true, f.now), gateway('gw-b', true, f.now), gateway('gw-dead', false, diedAt)]);

    await f.supervisor.tick();
    expect(f.sessions.on('gw-dead')).toHaveLength(9); // not yet confirmed by this leader
    f.advance(2000);
    await f.supervisor.tick();

    expect(f.sessions.on('gw-dead').sort()).toEqual(['s-failed', 's-logged-out', 's-stopped']);
    // free capacity: gw-b (empty) gets 5 before gw-a (4 placed) gets its first
    expect(f.sessions.on('gw-b')).toHaveLength(5);
    expect(f.sessions.on('gw-a')).toHaveLength(5);
    expect(f.published.map((e) => e.payload.reason)).toEqual(Array(6).fill('failover'));
    for (const e of f.published) {
      expect(e.event).toBe('session.status');
      expect(e.payload).toMatchObject({ status: 'working', previousStatus: 'working', fromGatewayId: 'gw-dead' });
      expect(f.sessions.rows.get(e.sessionId!)!.gatewayId).toBe(e.payload.toGatewayId);
    }
    // one statement for the six moves, and one signal per gateway that got sessions, not one per session
    expect(f.sessions.statements).toBe(1);
    expect(f.signalled.sort()).toEqual(['gw-a', 'gw-b']);
    expect(f.moves.filter(([reason]) => reason === 'failover')).toHaveLength(6);

    // the failover time runs from the dead gateway's last heartbeat to `working` on the new one
    for (const id of f.sessions.on('gw-b')) f.sessions.rows.get(id)!.lastConnectedAt = new Date(diedAt + 9000);
    await f.supervisor.tick();
    expect(f.failovers).toEqual(Array(5).fill(9));
  });

  it('a move another mover won is neither announced nor signalled', async () => {
    const f = fleet();
    f.sessions.add('s1', 'gw-dead');
    f.sessions.add('s2', 'gw-dead');
    f.sessions.stolen.add('s1');
    f.setRegistry([gateway('gw-a', true, f.now), gateway('gw-dead', false, f.now - 7000)]);
    await f.supervisor.tick();
    f.advance(2000);
    await f.supervisor.tick();
    expect(f.published.map((e) => e.sessionId)).toEqual(['s2']);
    expect(f.signalled).toEqual(['gw-a']);
  });

  it('a leader whose term ended after its look (a pause, a takeover) moves nothing and steps down: the gauge goes to 0', async () => {
    const f = fleet();
    f.sessions.add('s1', 'gw-dead');
    f.setRegistry([gateway('gw-a', true, f.now), gateway('gw-dead', false, f.now - 7000)]);
    await f.supervisor.tick();
    expect(f.gauge).toEqual([true]);
    f.advance(2000);
    // `hold` still answers from before the pause; PostgreSQL refuses the move of the old term
    f.endTerm();
    await f.supervisor.tick();
    expect(f.sessions.on('gw-dead')).toEqual(['s1']);
    expect(f.published).toEqual([]);
    expect(f.signalled).toEqual([]);
    expect(f.gauge).toEqual([true, false]);
  });

  it('moves nothing while another gateway leads', async () => {
    const f = fleet();
    f.setLeader(false);
    f.sessions.add('s1', 'gw-dead');
    f.setRegistry([gateway('gw-a', true, f.now), gateway('gw-dead', false, 0)]);
    for (let i = 0; i < 10; i++) {
      await f.supervisor.tick();
      f.advance(1000);
    }
    expect(f.sessions.on('gw-dead')).toEqual(['s1']);
    expect(f.published).toEqual([]);
  });

  it('steps down while its own gateway drains, and never places sessions on a draining gateway', async () => {
    const f = fleet();
    f.sessions.add('s1', 'gw-dead');
    f.setRegistry([gateway('gw-a', true, f.now, { draining: true } as Partial<GatewayEntry>), gateway('gw-dead', false, 0)]);
    await f.supervisor.tick();
    f.advance(3000);
    await f.supervisor.tick();
    expect(f.released).toBe(2);
    expect(f.sessions.on('gw-dead')).toEqual(['s1']);

    const g = fleet({ gatewayId: 'gw-c' });
    g.sessions.add('s1', 'gw-dead');
    g.setRegistry([gateway('gw-a', true, g.now, { draining: true } as Partial<GatewayEntry>), gateway('gw-c', true, g.now), gateway('gw-dead', false, 0)]);
    await g.supervisor.tick();
    g.advance(3000);
    await g.supervisor.tick();
    expect(g.sessions.on('gw-c')).toEqual(['s1']);
  });

  it('rebalances onto an empty gateway no faster than the configured rate, and stops once the spread is within the threshold', async () => {
    const f = fleet({ rebalancePerMin: 6, rebalanceThresholdPct: 10 });
    for (let i = 0; i < 40; i++) f.sessions.add(`s${String(i).padStart(2, '0')}`, i % 2 ? 'gw-a' : 'gw-b');
    f.setRegistry([gateway('gw-a', true, f.now), gateway('gw-b', true, f.now), gateway('gw-new', true, f.now)]);
    const movedAt: number[] = [];
    for (let t = 0; t < 60_000; t += 500) {
      const before = f.published.length;
      await f.supervisor.tick();
      if (f.published.length > before) movedAt.push(f.now);
      f.advance(500);
    }
    expect(movedAt).toHaveLength(6);
    for (let i = 1; i < movedAt.length; i++) expect(movedAt[i] - movedAt[i - 1]).toBeGreaterThanOrEqual(10_000);
    expect(f.published.every((e) => e.payload.reason === 'rebalance' && e.payload.toGatewayId === 'gw-new')).toBe(true);

    // 14/13/13 is within 10 points of capacity 100: no more moves however long it runs
    for (let t = 0; t < 300_000; t += 500) {
      await f.supervisor.tick();
      f.advance(500);
    }
    const counts = [f.sessions.on('gw-a').length, f.sessions.on('gw-b').length, f.sessions.on('gw-new').length];
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(10);
    expect(f.published.length).toBeLessThanOrEqual(6 + 30);
  });
});
