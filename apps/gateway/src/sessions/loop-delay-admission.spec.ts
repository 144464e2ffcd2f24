import { LoopDelayAdmission } from './loop-delay-admission';

/** An admission over a delay the test sets, whose sleeps only pass when the test lets them. */
function setup(maxConcurrent = 4) {
  let delay = 0;
  const sleeps: Array<() => void> = [];
  const admission = new LoopDelayAdmission({ maxConcurrent, maxDelayMs: 50 }, () => delay, () => new Promise<void>((resolve) => sleeps.push(resolve)));
  const admitted: number[] = [];
  const start = (n: number) => admission.admit().then((release) => (admitted.push(n), release));
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { admission, admitted, start, settle, sleeps, setDelay: (ms: number) => (delay = ms) };
}

describe('LoopDelayAdmission', () => {
  it('lets up to the ceiling in at once while the loop keeps up', async () => {
    const t = setup(4);
    const releases = await Promise.all([1, 2, 3, 4].map(t.start));
    void t.start(5);
    await t.settle();
    expect(t.admitted).toEqual([1, 2, 3, 4]);
    releases[0]();
    await t.settle();
    expect(t.admitted).toEqual([1, 2, 3, 4, 5]);
  });

  it('starts nothing more while the loop is late, and goes on once it catches up', async () => {
    const t = setup(4);
    const first = await t.start(1);
    t.setDelay(400);
    void t.start(2);
    await t.settle();
    expect(t.admitted).toEqual([1]);
    expect(t.sleeps).toHaveLength(1);
    t.setDelay(0);
    t.sleeps.shift()!();
    await t.settle();
    expect(t.admitted).toEqual([1, 2]);
    first();
  });

  it('always lets one in, however late the loop (nothing else would ever start)', async () => {
    const t = setup(4);
    t.setDelay(10_000);
    await t.start(1);
    expect(t.admitted).toEqual([1]);
  });

  it('halves when one finishes on a late loop, and after a lapse ramps up from one, one more per admission finished', async () => {
    const t = setup(8);
    t.admission.restart();
    expect(t.admission.currentLimit).toBe(1);
    const a = await t.start(1);
    const b = t.start(2);
    await t.settle();
    expect(t.admitted).toEqual([1]);
    a();
    await t.settle();
    expect(t.admission.currentLimit).toBe(2);
    expect(t.admitted).toEqual([1, 2]);
    t.setDelay(400);
    (await b)();
    expect(t.admission.currentLimit).toBe(1);
  });

  it('a login waits no later than its deadline', async () => {
    let now = 0;
    const admission = new LoopDelayAdmission({ maxConcurrent: 1, maxDelayMs: 50 }, () => 0, undefined, () => now);
    await admission.admit();
    const late = admission.admit(now + 20);
    now = 25;
    await expect(late).resolves.toEqual(expect.any(Function));
  });
});
