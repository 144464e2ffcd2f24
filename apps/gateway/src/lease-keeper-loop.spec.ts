import { KEEPER_SLOT_COUNT, KEEPER_SLOTS, LeaseKeeperLoop, sharedKeeperState } from './lease-keeper-loop';

/** A keeper loop over real shared slots, a registry and a node key in memory, and a clock the test moves. */
function setup() {
  const state = sharedKeeperState(new SharedArrayBuffer(KEEPER_SLOT_COUNT * 8));
  let now = 1_000;
  let nodeKey: number | null = null;
  const beats: number[] = [];
  const registry = { heartbeat: async (n: number) => (beats.push(n), {} as never) };
  const node = {
    renew: async (epoch: number, next: number) => {
      if (nodeKey === epoch) return true;
      nodeKey = next;
      return false;
    },
  };
  const loop = new LeaseKeeperLoop(state, registry, node, { mainStallMs: 30_000 }, () => now);
  return { state, loop, beats, advance: (ms: number) => (now += ms), expireNodeKey: () => (nodeKey = null), nodeKey: () => nodeKey, now: () => now };
}

describe('LeaseKeeperLoop', () => {
  it('starts a new epoch, and counts renewals only once the main thread has re-stamped its leases with it', async () => {
    const t = setup();
    t.state.store(KEEPER_SLOTS.mainAliveAt, t.now());
    t.state.store(KEEPER_SLOTS.sessionCount, 3);
    const first = await t.loop.tick();
    expect(first).toEqual({ kind: 'epoch', epoch: t.nodeKey() });
    expect(t.beats).toEqual([3]);
    t.advance(500);
    expect(await t.loop.tick()).toEqual({ kind: 'renewed' });
    // not acknowledged yet: the leases still carry no live epoch, so the renewal proves nothing about them
    expect(t.state.load(KEEPER_SLOTS.renewStartedAt)).toBe(0);
    t.state.store(KEEPER_SLOTS.ackedEpoch, t.state.load(KEEPER_SLOTS.epoch));
    t.advance(500);
    await t.loop.tick();
    expect(t.state.load(KEEPER_SLOTS.renewStartedAt)).toBe(t.now());
  });

  it('keeps renewing while the main thread is busy, and stops once it has been silent longer than the bound', async () => {
    const t = setup();
    t.state.store(KEEPER_SLOTS.mainAliveAt, t.now());
    await t.loop.tick();
    t.state.store(KEEPER_SLOTS.ackedEpoch, t.state.load(KEEPER_SLOTS.epoch));
    t.advance(20_000);
    expect(await t.loop.tick()).toEqual({ kind: 'renewed' });
    expect(t.state.load(KEEPER_SLOTS.renewStartedAt)).toBe(t.now());
    t.advance(15_000);
    const renewedAt = t.state.load(KEEPER_SLOTS.renewStartedAt);
    expect(await t.loop.tick()).toEqual({ kind: 'main-stalled', sinceMs: 35_000 });
    expect(await t.loop.tick()).toEqual({ kind: 'failed', err: 'main thread stalled' });
    expect(t.state.load(KEEPER_SLOTS.renewStartedAt)).toBe(renewedAt);
    expect(t.beats).toHaveLength(2);
  });

  it('an expired node key gives a new epoch, not the old one back, and renewals stop counting until it is acknowledged', async () => {
    const t = setup();
    t.state.store(KEEPER_SLOTS.mainAliveAt, t.now());
    await t.loop.tick();
    const old = t.state.load(KEEPER_SLOTS.epoch);
    t.state.store(KEEPER_SLOTS.ackedEpoch, old);
    await t.loop.tick();
    const renewedAt = t.state.load(KEEPER_SLOTS.renewStartedAt);
    t.expireNodeKey();
    t.advance(100);
    const report = await t.loop.tick();
    expect(report.kind).toBe('epoch');
    expect(t.state.load(KEEPER_SLOTS.epoch)).not.toBe(old);
    t.advance(100);
    await t.loop.tick();
    expect(t.state.load(KEEPER_SLOTS.renewStartedAt)).toBe(renewedAt);
  });

  it('a rotation asked by the main thread (after a lapse) replaces a live epoch', async () => {
    const t = setup();
    t.state.store(KEEPER_SLOTS.mainAliveAt, t.now());
    await t.loop.tick();
    const old = t.state.load(KEEPER_SLOTS.epoch);
    t.state.store(KEEPER_SLOTS.ackedEpoch, old);
    t.state.store(KEEPER_SLOTS.rotate, 1);
    expect((await t.loop.tick()).kind).toBe('epoch');
    expect(t.nodeKey()).toBe(t.state.load(KEEPER_SLOTS.epoch));
    expect(t.nodeKey()).not.toBe(old);
    expect(t.state.load(KEEPER_SLOTS.rotate)).toBe(0);
  });
});
