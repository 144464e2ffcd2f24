import { IntervalTimers, LeaseWatchdog } from './lease-watchdog';

class ManualIntervals implements IntervalTimers {
  private readonly ticks = new Map<number, () => void>();
  private seq = 0;
  setInterval(fn: () => void): number {
    this.ticks.set(++this.seq, fn);
    return this.seq;
  }
  clearInterval(handle: unknown): void {
    this.ticks.delete(handle as number);
  }
  tick(): void {
    for (const fn of this.ticks.values()) fn();
  }
  get running(): number {
    return this.ticks.size;
  }
}

function setup() {
  let now = 10_000;
  const intervals = new ManualIntervals();
  const closed: number[] = [];
  const watchdog = new LeaseWatchdog({ budgetMs: 4_500, tickMs: 250 }, () => now, intervals);
  watchdog.onLapse(async () => void closed.push(now));
  watchdog.start();
  return { watchdog, intervals, closed, advance: (ms: number) => (now += ms), now: () => now };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('LeaseWatchdog', () => {
  it('closes nothing while renewals keep succeeding within the budget', async () => {
    const t = setup();
    for (let i = 0; i < 10; i++) {
      t.advance(2_000);
      t.watchdog.renewed(t.now());
      t.intervals.tick();
    }
    await flush();
    expect(t.closed).toEqual([]);
    expect(t.watchdog.trusted()).toBe(true);
  });

  it('closes every socket once, as soon as the budget since the last renewal start is spent', async () => {
    const t = setup();
    t.watchdog.renewed(t.now());
    t.advance(4_500);
    t.intervals.tick();
    await flush();
    expect(t.closed).toEqual([]);
    t.advance(1);
    t.intervals.tick();
    t.intervals.tick();
    await flush();
    expect(t.closed).toEqual([14_501]);
  });

  it('after a pause, distrusts the leases before its own tick has run, and stays closed until a later renewal succeeds', async () => {
    const t = setup();
    t.watchdog.renewed(t.now());
    // SIGSTOP past the TTL: no tick ran meanwhile
    t.advance(9_000);
    expect(t.watchdog.trusted()).toBe(false);
    await t.watchdog.check();
    expect(t.closed).toHaveLength(1);
    // a renewal that was in flight across the lapse proves nothing
    t.watchdog.renewed(t.now() - 1);
    expect(t.watchdog.trusted()).toBe(false);
    t.advance(100);
    t.watchdog.renewed(t.now());
    expect(t.watchdog.trusted()).toBe(true);
    t.intervals.tick();
    await flush();
    expect(t.closed).toHaveLength(1);
  });

  it('stops ticking when stopped', () => {
    const t = setup();
    expect(t.intervals.running).toBe(1);
    t.watchdog.stop();
    expect(t.intervals.running).toBe(0);
  });
});
