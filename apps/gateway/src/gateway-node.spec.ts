import pino from 'pino';
import { DomainError } from '@app/contracts';
import { DRAIN_CONCURRENCY, GatewayNode, GatewayNodeParts } from './gateway-node';
import type { NodeKeeper } from './lease-keeper';
import type { KeeperReport } from './lease-keeper-loop';
import { LeaseWatchdog } from './lease-watchdog';

/** A keeper whose epoch and reports the test sets by hand. */
class FakeKeeper implements Pick<NodeKeeper, 'start' | 'stop' | 'unackedEpoch' | 'ack' | 'epochStartedAt' | 'rotate' | 'sessionCount' | 'waWebVersion' | 'startDraining' | 'onReport'> {
  epoch = 1;
  acked = 1;
  report: (report: KeeperReport) => void = () => undefined;
  constructor(private readonly calls: string[]) {}
  start = async () => void this.calls.push('start keeper');
  stop = async () => void this.calls.push('stop keeper');
  unackedEpoch = () => (this.epoch !== this.acked ? this.epoch : null);
  ack = (epoch: number) => void (this.calls.push(`ack ${epoch}`), (this.acked = epoch));
  epochStartedAt = () => 0;
  rotate = () => void this.calls.push('rotate');
  sessionCount = () => undefined;
  waWebVersion = () => undefined;
  startDraining = () => void this.calls.push('keeper draining');
  onReport = (handler: (report: KeeperReport) => void) => void (this.report = handler);
}

/** Fakes of every part, recording the calls that matter to the lifecycle in one list. */
function fakeNode(over: { resume?: () => Promise<number>; held?: string[]; moveFails?: boolean | Error; lost?: string[]; watchdog?: LeaseWatchdog } = {}) {
  const calls: string[] = [];
  const warnings: string[] = [];
  const held = new Set(over.held ?? []);
  const parts: GatewayNodeParts = {
    host: {
      get sessionCount() {
        return held.size;
      },
      leasedSessionIds: () => [...held],
      activeSessionIds: () => [...held],
      converge: async () => (calls.push('converge'), { started: 0, handedOff: 0 }),
      handOff: async (id) => void (calls.push(`hand off ${id}`), held.delete(id)),
      closeAllUnfenced: async () => void calls.push('close all unfenced'),
      leaseLost: async (ids) => void calls.push(`lease lost ${ids.join(',')}`),
      signal: (id) => calls.push(`signal ${id}`),
      sweepQueued: async () => undefined,
      resume: over.resume ?? (async () => (calls.push('resume sessions'), 2)),
      shutdown: async () => void (calls.push('shut down sessions'), held.clear()),
    },
    registry: {
      deregister: async () => void calls.push('deregister'),
      startDraining: async () => void calls.push('announce draining'),
      drainRequested: async () => false,
    },
    watchdog: over.watchdog ?? new LeaseWatchdog({ budgetMs: 60_000, tickMs: 60_000 }),
    mover: {
      move: async (id) => {
        if (over.moveFails) throw over.moveFails instanceof Error ? over.moveFails : new Error('every gateway is at capacity');
        calls.push(`move ${id}`);
        return 'gw-other';
      },
    },
    leader: { stepDown: async () => void calls.push('step down') },
    sleep: async () => undefined,
    leases: { reclaim: async (ids, epoch) => (calls.push(`reclaim ${ids.join(',')} @${epoch}`), over.lost ?? []) },
    keeper: new FakeKeeper(calls),
    commands: {
      start: async () => void calls.push('start commands'),
      close: async () => void calls.push('close commands'),
    },
    signals: {
      listen: async (handlers) => {
        calls.push('listen');
        handlers.send('ses_1');
        // before the node has resumed, an adopt signal does nothing: the resume pass reads the table itself
        handlers.adopt();
        return async () => void calls.push('unlisten');
      },
    },
    opsServer: async () => (calls.push('open ops'), { port: 1234, close: async () => void calls.push('close ops') }),
    metrics: { sessions: { set: () => undefined }, leaseLapses: { inc: () => void calls.push('lapse counted') } },
    logger: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) }),
  };
  let now = 0;
  parts.clock = () => (now += 100);
  const node = new GatewayNode({ gatewayId: 'gw', engine: 'sim', heartbeatMs: 60_000, sweepMs: 60_000, adoptMs: 60_000, drainGraceMs: 10_000 }, parts);
  return { node, calls, warnings, parts };
}

describe('GatewayNode', () => {
  it('re-stamps the leases it holds with a new epoch, then acknowledges it; a lease lost meanwhile closes and is sought again', async () => {
    const { node, calls, parts } = fakeNode({ held: ['ses_a', 'ses_b'], lost: ['ses_b'] });
    await node.start();
    calls.length = 0;
    const keeper = parts.keeper as FakeKeeper;
    keeper.epoch = 2;
    keeper.report({ kind: 'epoch', epoch: 2 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(['reclaim ses_a,ses_b @2', 'ack 2', 'lease lost ses_b', 'converge']);
    await node.stop();
  });

  it('a lapse is counted, closes every socket, kills the epoch, and re-stamps nothing while the sockets close', async () => {
    let now = 0;
    const watchdog = new LeaseWatchdog({ budgetMs: 1000, tickMs: 60_000 }, () => now);
    const { node, calls, parts } = fakeNode({ held: ['ses_a'], watchdog });
    let closed: () => void = () => undefined;
    parts.host.closeAllUnfenced = () => new Promise<void>((resolve) => (calls.push('close all unfenced'), (closed = resolve)));
    await node.start();
    calls.length = 0;
    now = 5000;
    const lapse = watchdog.check();
    const keeper = parts.keeper as FakeKeeper;
    keeper.epoch = 3;
    keeper.report({ kind: 'epoch', epoch: 3 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(['lapse counted', 'close all unfenced']);
    closed();
    await lapse;
    expect(calls).toEqual(['lapse counted', 'close all unfenced', 'rotate']);
    await node.stop();
  });

  it('takes commands and registers before resuming sessions, and serves health last', async () => {
    const { node, calls } = fakeNode();
    await node.start();
    expect(calls).toEqual(['start commands', 'start keeper', 'listen', 'signal ses_1', 'resume sessions', 'open ops']);
    await node.stop();
  });

  it('converges at once on an adopt signal, and once more after a pass that signals arrived during', async () => {
    const { node, parts } = fakeNode();
    const passes: Array<() => void> = [];
    parts.host.converge = () => new Promise((resolve) => passes.push(() => resolve({ started: 0, handedOff: 0 })));
    let signal: () => void = () => undefined;
    parts.signals = { listen: async (handlers) => ((signal = handlers.adopt), async () => undefined) };
    await node.start();
    const settle = () => new Promise((r) => setImmediate(r));

    signal();
    expect(passes).toHaveLength(1);
    // the table may have changed after the running pass read it: these make exactly one more pass, after it
    signal();
    signal();
    expect(passes).toHaveLength(1);
    passes[0]();
    await settle();
    expect(passes).toHaveLength(2);
    passes[1]();
    await settle();
    expect(passes).toHaveLength(2);
    // the next signal starts a pass of its own
    signal();
    expect(passes).toHaveLength(3);
    passes[2]();
    await node.stop();
  });

  it('stops taking commands first, then closes sessions, leaves the registry and closes the ops server', async () => {
    const { node, calls } = fakeNode();
    await node.start();
    calls.length = 0;
    await node.beforeApplicationShutdown();
    expect(calls).toEqual(['unlisten', 'close commands', 'shut down sessions', 'stop keeper', 'deregister', 'close ops']);
  });

  it('stops once however often it is asked (a signal during the context close)', async () => {
    const { node, calls } = fakeNode();
    await node.start();
    calls.length = 0;
    await Promise.all([node.stop(), node.beforeApplicationShutdown(), node.stop()]);
    expect(calls.filter((c) => c === 'deregister')).toHaveLength(1);
  });

  it('a start that fails half-way still stops cleanly', async () => {
    const { node, calls } = fakeNode({
      resume: async () => {
        throw new Error('database gone');
      },
    });
    await expect(node.start()).rejects.toThrow('database gone');
    calls.length = 0;
    await node.stop();
    expect(calls).toEqual(['unlisten', 'close commands', 'shut down sessions', 'stop keeper', 'deregister']);
  });

  it('drains by giving up leadership, leaving placement, then moving and handing off each session (move before its hand-off)', async () => {
    const { node, calls } = fakeNode({ held: ['ses_a', 'ses_b'] });
    await node.start();
    calls.length = 0;
    expect(node.accepting).toBe(true);
    await node.drain();
    expect(node.accepting).toBe(false);
    expect(calls.slice(0, 3)).toEqual(['step down', 'keeper draining', 'announce draining']);
    expect(calls[calls.length - 1]).toBe('shut down sessions');
    for (const id of ['ses_a', 'ses_b']) expect(calls.indexOf(`move ${id}`)).toBeLessThan(calls.indexOf(`hand off ${id}`));
    expect(calls.filter((c) => c.startsWith('hand off')).sort()).toEqual(['hand off ses_a', 'hand off ses_b']);
    await node.stop();
  });

  it(`moves sessions in parallel, at most ${DRAIN_CONCURRENCY} at a time: a slow hand-off does not hold up the others`, async () => {
    const held = Array.from({ length: 20 }, (_, i) => `ses_${i}`);
    const { node, parts } = fakeNode({ held });
    let inFlight = 0;
    let most = 0;
    const release: Array<() => void> = [];
    const handOff = parts.host.handOff;
    parts.host.handOff = async (id) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      // every hand-off waits until the test lets the whole first wave go
      await new Promise<void>((resolve) => release.push(resolve));
      inFlight -= 1;
      await handOff(id);
    };
    await node.start();
    let pump: NodeJS.Timeout | undefined;
    try {
      const drained = node.drain();
      // let the drain start as many hand-offs as it will before any finishes
      for (let i = 0; i < 100 && release.length < held.length; i++) await new Promise((r) => setImmediate(r));
      const firstWave = inFlight;
      pump = setInterval(() => release.splice(0).forEach((go) => go()), 1);
      await drained;
      expect(firstWave).toBe(DRAIN_CONCURRENCY);
      expect(most).toBe(DRAIN_CONCURRENCY);
      expect(parts.host.sessionCount).toBe(0);
    } finally {
      clearInterval(pump);
      await node.stop();
    }
  });

  it('a drain that can move nothing closes what it holds before the grace period ends, for failover to place', async () => {
    const { node, calls } = fakeNode({ held: ['ses_a'], moveFails: true });
    await node.start();
    calls.length = 0;
    await node.drain();
    expect(calls).toContain('shut down sessions');
    expect(calls.filter((c) => c.startsWith('hand off'))).toEqual([]);
    await node.stop();
  });

  it('with no other gateway up, says so once and keeps waiting quietly until the grace period ends', async () => {
    const unavailable = new DomainError('gateway_unavailable', 'no gateway is available to host the session');
    const { node, calls, warnings } = fakeNode({ held: ['ses_a', 'ses_b'], moveFails: unavailable });
    await node.start();
    await node.drain();
    expect(calls).toContain('shut down sessions');
    // ~48 passes fit the grace period here; one line says why none moved
    expect(warnings).toEqual(['draining: no other gateway can take the sessions yet; waiting for one until the grace period ends']);
    await node.stop();
  });
});
