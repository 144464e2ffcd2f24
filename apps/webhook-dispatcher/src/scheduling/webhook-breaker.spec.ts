import { BreakerSettings, failureRatioLowerBound, WebhookBreaker } from './webhook-breaker';

const settings: BreakerSettings = { failures: 10, cooldownMs: 1000, maxCooldownMs: 2000 };

/** Feeds outcomes ('F' failure, 'S' success) `everyMs` apart from t = 0; returns the time the breaker first opened. */
function feed(breaker: WebhookBreaker, outcomes: string, everyMs: number): number | null {
  for (let i = 0; i < outcomes.length; i++) {
    const now = i * everyMs;
    breaker.canStart(now);
    if (outcomes[i] === 'F') breaker.failed(now);
    else breaker.succeeded(now);
    if (breaker.state.kind === 'open') return now;
  }
  return null;
}

/** A deterministic pseudo-random sequence (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('WebhookBreaker: when it opens', () => {
  const F = (n: number) => 'F'.repeat(n);
  it.each([
    ['a receiver failing every time: at the 10th failure', F(12), 10, 9 * 10],
    ['nine failures are below the minimum volume', F(9), 10, null],
    ['one success among ten failures: not sure enough yet', `${F(5)}S${F(5)}`, 10, null],
    ['alternating success and failure (50 %) over 40 outcomes: not sure enough to open', `${'FS'.repeat(20)}`, 10, null],
    ['90 % failing over 40 outcomes', `${'FFFFFFFFFS'.repeat(4)}`, 10, expect.any(Number)],
    ['60 % failing at 60 a second (600 in the window)', `${'FFFSSFFSFS'.repeat(120)}`, 1000 / 60, expect.any(Number)],
    ['a success does not wipe the failures before it: 9 failures, 1 success, then failures open it', `${F(9)}S${F(20)}`, 10, expect.any(Number)],
  ])('%s', (_name, outcomes, everyMs, openedAt) => {
    expect(feed(new WebhookBreaker(settings), outcomes as string, everyMs as number)).toEqual(openedAt);
  });

  it('forgets failures outside the window: 9 failures, 11 s of nothing, 9 more stay closed', () => {
    const b = new WebhookBreaker(settings);
    for (let i = 0; i < 9; i++) b.failed(i);
    for (let i = 0; i < 9; i++) b.failed(11_000 + i);
    expect(b.state).toEqual({ kind: 'closed', failures: 9 });
    b.failed(11_010);
    expect(b.state.kind).toBe('open');
  });

  it('never opens at a random 35 % failure rate, at 60, 3, 2 or 1 attempts a second for 10 minutes (five seeds)', () => {
    for (const [seed, perSecond] of [[1, 60], [2, 60], [3, 3], [4, 2], [5, 1]] as const) {
      const random = seeded(seed);
      const b = new WebhookBreaker(settings);
      const n = 600 * perSecond;
      let openedAt: number | null = null;
      for (let i = 0; i < n && openedAt === null; i++) {
        const now = Math.floor((i * 1000) / perSecond);
        if (random() < 0.35) b.failed(now);
        else b.succeeded(now);
        if (b.state.kind !== 'closed') openedAt = now;
      }
      expect({ seed, perSecond, openedAt }).toEqual({ seed, perSecond, openedAt: null });
    }
  });

  it('the Wilson lower bound (99.9 %): a few failures are not enough to be sure, most of many are', () => {
    expect(failureRatioLowerBound(0, 0)).toBe(0);
    expect(failureRatioLowerBound(8, 10)).toBeLessThan(0.5);
    expect(failureRatioLowerBound(14, 20)).toBeLessThan(0.5);
    expect(failureRatioLowerBound(19, 20)).toBeGreaterThan(0.5);
    expect(failureRatioLowerBound(360, 600)).toBeGreaterThan(0.5);
    expect(failureRatioLowerBound(210, 600)).toBeLessThan(0.4);
  });
});

describe('WebhookBreaker: open, probe, close', () => {
  it.each([
    // [step, expected state after it]
    [
      'a failed probe doubles the open period, up to the maximum; a successful one closes it with an empty window',
      [
        ['fail×10', 0, { kind: 'open', until: 1000, cooldownMs: 1000 }],
        ['start', 1000, { kind: 'probing', cooldownMs: 1000 }],
        ['fail', 3000, { kind: 'open', until: 5000, cooldownMs: 2000 }],
        ['start', 5000, { kind: 'probing', cooldownMs: 2000 }],
        ['fail', 7000, { kind: 'open', until: 9000, cooldownMs: 2000 }],
        ['start', 9000, { kind: 'probing', cooldownMs: 2000 }],
        ['succeed', 9050, { kind: 'closed', failures: 0 }],
        ['fail', 9060, { kind: 'closed', failures: 1 }],
      ],
    ],
    [
      'a success of an attempt made before it opened closes it at once',
      [
        ['fail×10', 0, { kind: 'open', until: 1000, cooldownMs: 1000 }],
        ['succeed', 500, { kind: 'closed', failures: 0 }],
      ],
    ],
    [
      'failures of attempts made before it opened change nothing while it is open',
      [
        ['fail×10', 0, { kind: 'open', until: 1000, cooldownMs: 1000 }],
        ['fail', 500, { kind: 'open', until: 1000, cooldownMs: 1000 }],
      ],
    ],
  ] as const)('%s', (_name, steps) => {
    const b = new WebhookBreaker(settings);
    for (const [step, now, expected] of steps) {
      b.canStart(now);
      if (step === 'fail×10') for (let i = 0; i < 10; i++) b.failed(now);
      else if (step === 'fail') b.failed(now);
      else if (step === 'succeed') b.succeeded(now);
      else {
        expect(b.canStart(now)).toBe(true);
        b.started();
        expect(b.probing).toBe(true);
        expect(b.canStart(now)).toBe(false);
      }
      expect(b.state).toEqual(expected);
    }
  });

  it('sends attempts turned away back after the open period, spread over one cooldown', () => {
    const b = new WebhookBreaker(settings);
    for (let i = 0; i < 10; i++) b.failed(0);
    expect(b.comeBackAt(200, 0)).toBe(1000);
    expect(b.comeBackAt(200, 0.5)).toBe(1500);
  });
});
