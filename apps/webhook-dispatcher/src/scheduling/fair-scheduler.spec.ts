import { Admission, FairScheduler, SchedulerOptions, SchedulerSignals, Ticket } from './fair-scheduler';
import { WebhookBreaker } from './webhook-breaker';

const options = (over: Partial<SchedulerOptions> = {}): SchedulerOptions => ({
  concurrency: 2,
  perWebhook: 2,
  parkAfterMs: 2000,
  breaker: { failures: 3, cooldownMs: 1000, maxCooldownMs: 4000 },
  ...over,
});

const ticket = (webhookId: string, organizationId: string, over: Partial<Ticket> = {}): Ticket => ({
  webhookId,
  organizationId,
  rateLimitPerSecond: null,
  heldByJob: false,
  ...over,
});

/** Admits tickets and records, in order, which webhook got each slot and what was handed back. */
function harness(opts: SchedulerOptions, signals: SchedulerSignals = { writable: () => true, disabled: (_id: string) => false }) {
  let now = 1_000_000;
  const scheduler = new FairScheduler(opts, signals, () => now, () => 0.5);
  const started: string[] = [];
  const parked: { webhookId: string; until: number | null }[] = [];
  const admit = (t: Ticket) =>
    scheduler.admit(t).then((a: Admission) => {
      if (a.kind === 'go') started.push(t.webhookId);
      else parked.push({ webhookId: t.webhookId, until: a.until });
    });
  return { scheduler, started, parked, admit, advance: (ms: number) => (now += ms), now: () => now };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('FairScheduler', () => {
  it('serves organizations in turn: one with a backlog does not hold back another\'s new attempt', async () => {
    const h = harness(options({ concurrency: 1, perWebhook: 1 }));
    for (let i = 0; i < 50; i++) void h.admit(ticket('whk_a', 'org_a'));
    void h.admit(ticket('whk_b', 'org_b'));
    await settle();
    expect(h.started).toEqual(['whk_a']);
    h.scheduler.done('whk_a', 'success');
    await settle();
    // org_b's attempt is next, not the 49 of org_a ahead of it
    expect(h.started).toEqual(['whk_a', 'whk_b']);
    h.scheduler.done('whk_b', 'success');
    await settle();
    expect(h.started).toEqual(['whk_a', 'whk_b', 'whk_a']);
  });

  it('serves an organization\'s webhooks in turn', async () => {
    const h = harness(options({ concurrency: 1, perWebhook: 1 }));
    for (let i = 0; i < 3; i++) void h.admit(ticket('whk_1', 'org_a'));
    for (let i = 0; i < 3; i++) void h.admit(ticket('whk_2', 'org_a'));
    for (let i = 0; i < 4; i++) {
      await settle();
      h.scheduler.done(h.started[h.started.length - 1], 'success');
    }
    await settle();
    expect(h.started.slice(0, 4)).toEqual(['whk_1', 'whk_2', 'whk_1', 'whk_2']);
  });

  it('gives one webhook at most its share of the slots: a hung receiver leaves the others theirs', async () => {
    const h = harness(options({ concurrency: 4, perWebhook: 2 }));
    for (let i = 0; i < 10; i++) void h.admit(ticket('whk_hung', 'org_a'));
    await settle();
    expect(h.started).toEqual(['whk_hung', 'whk_hung']);
    void h.admit(ticket('whk_ok', 'org_a'));
    void h.admit(ticket('whk_ok', 'org_a'));
    await settle();
    expect(h.started.filter((w) => w === 'whk_ok')).toHaveLength(2);
    // the hung webhook's waiting attempts are handed back once they waited parkAfterMs at a full share
    h.scheduler.sweep();
    expect(h.parked).toHaveLength(0);
    h.advance(2000);
    h.scheduler.sweep();
    await settle();
    expect(h.parked).toHaveLength(8);
    expect(h.parked.every((p) => p.webhookId === 'whk_hung' && p.until === h.now() + 3000)).toBe(true);
  });

  it('keeps the queue of a webhook that is busy but answering, and lets only the retry jobs waiting in it go', async () => {
    const h = harness(options({ concurrency: 2, perWebhook: 2 }));
    for (let i = 0; i < 4; i++) void h.admit(ticket('whk_1', 'org_a'));
    void h.admit(ticket('whk_1', 'org_a', { heldByJob: true }));
    await settle();
    h.advance(2500);
    // one POST ended just now: the webhook makes progress, it is not stuck
    h.scheduler.done('whk_1', 'success');
    h.scheduler.sweep();
    await settle();
    expect(h.parked).toEqual([{ webhookId: 'whk_1', until: h.now() + 3000 }]);
    expect(h.started).toHaveLength(3);
  });

  it('opens a webhook\'s breaker after consecutive failures, hands its waiting attempts back spread after the open period, then lets one probe through', async () => {
    const h = harness(options({ concurrency: 3, perWebhook: 3 }));
    for (let i = 0; i < 6; i++) void h.admit(ticket('whk_1', 'org_a'));
    await settle();
    expect(h.started).toHaveLength(3);
    // each failure frees a slot for a waiting attempt, until the third opens the breaker
    for (let i = 0; i < 3; i++) h.scheduler.done('whk_1', 'failure');
    await settle();
    expect(h.started).toHaveLength(5);
    // open for 1 s: the attempt still waiting goes back, due after the open period plus half a cooldown (random 0.5)
    expect(h.parked).toEqual([{ webhookId: 'whk_1', until: h.now() + 1000 + 500 }]);
    h.scheduler.done('whk_1', 'failure');
    h.scheduler.done('whk_1', 'failure');
    // one that comes while it is open goes back at once
    void h.admit(ticket('whk_1', 'org_a'));
    await settle();
    expect(h.started).toHaveLength(5);
    expect(h.parked).toHaveLength(2);
    h.advance(1000);
    void h.admit(ticket('whk_1', 'org_a'));
    await settle();
    // the probe: one attempt, nothing else while it runs
    expect(h.started).toHaveLength(6);
    void h.admit(ticket('whk_1', 'org_a'));
    await settle();
    expect(h.started).toHaveLength(6);
    expect(h.parked).toHaveLength(3);
    h.scheduler.done('whk_1', 'success');
    void h.admit(ticket('whk_1', 'org_a'));
    await settle();
    expect(h.started).toHaveLength(7);
    expect(h.scheduler.breakerOf('whk_1')!.state).toEqual({ kind: 'closed', failures: 0 });
  });

  it('while a breaker is open, sends a few attempts per cooldown back for the probe and parks the rest until it closes', async () => {
    const closed: string[] = [];
    const h = harness(options({ concurrency: 2, perWebhook: 2, probeSpares: 2, openParkMs: 30_000 }), {
      writable: () => true,
      disabled: () => false,
      breakerClosed: (id: string) => void closed.push(id),
    });
    for (let i = 0; i < 2; i++) void h.admit(ticket('whk_sink', 'org_a'));
    await settle();
    h.scheduler.done('whk_sink', 'failure');
    h.scheduler.done('whk_sink', 'failure');
    void h.admit(ticket('whk_sink', 'org_a'));
    await settle();
    h.scheduler.done('whk_sink', 'failure');
    expect(h.scheduler.breakerOf('whk_sink')!.state.kind).toBe('open');
    const openedAt = h.now();
    // a backlog of 100 comes while it is open (retry jobs, spilled first attempts)
    for (let i = 0; i < 100; i++) void h.admit(ticket('whk_sink', 'org_a'));
    await settle();
    expect(h.parked).toHaveLength(100);
    const forProbe = h.parked.filter((p) => p.until! < openedAt + 30_000);
    // two come back for the probe (after the open period, spread), the other 98 wait the open park
    expect(forProbe).toEqual([
      { webhookId: 'whk_sink', until: openedAt + 1000 + 500 },
      { webhookId: 'whk_sink', until: openedAt + 1000 + 500 },
    ]);
    expect(h.parked.filter((p) => p.until! >= openedAt + 30_000)).toHaveLength(98);
    // the next cooldown's hand-backs get two spares again
    h.advance(1500);
    void h.admit(ticket('whk_sink', 'org_a'));
    await settle();
    // that one was the probe; the next goes back while it runs
    expect(h.started).toHaveLength(4);
    for (let i = 0; i < 3; i++) void h.admit(ticket('whk_sink', 'org_a'));
    await settle();
    expect(h.parked.slice(100).map((p) => p.until! < h.now() + 30_000)).toEqual([true, true, false]);
    expect(closed).toEqual([]);
    // the probe succeeds: the breaker closes and what it parked is released, once
    h.scheduler.done('whk_sink', 'success');
    expect(closed).toEqual(['whk_sink']);
    void h.admit(ticket('whk_sink', 'org_a'));
    await settle();
    h.scheduler.done('whk_sink', 'success');
    expect(closed).toEqual(['whk_sink']);
  });

  it('releases what an open breaker parked when a probe\'s late answer closes it', async () => {
    const closed: string[] = [];
    const h = harness(options({ concurrency: 1, perWebhook: 1, probeSpares: 0, breaker: { failures: 1, cooldownMs: 1000, maxCooldownMs: 2000 } }), {
      writable: () => true,
      disabled: () => false,
      breakerClosed: (id: string) => void closed.push(id),
    });
    void h.admit(ticket('whk_sink', 'org_a'));
    await settle();
    h.scheduler.done('whk_sink', 'failure');
    void h.admit(ticket('whk_sink', 'org_a'));
    await settle();
    expect(h.parked).toHaveLength(1);
    expect(h.parked[0].until).toBeGreaterThanOrEqual(h.now() + 30_000);
    h.scheduler.lateSuccess('whk_sink');
    expect(closed).toEqual(['whk_sink']);
    expect(h.scheduler.breakerOf('whk_sink')!.state).toEqual({ kind: 'closed', failures: 0 });
  });

  it('closes the breaker of a webhook re-enabled after being disabled', async () => {
    const h = harness(options({ breaker: { failures: 1, cooldownMs: 60_000, maxCooldownMs: 60_000 } }));
    void h.admit(ticket('whk_1', 'org_a'));
    await settle();
    h.scheduler.done('whk_1', 'failure');
    void h.admit(ticket('whk_1', 'org_a'));
    await settle();
    expect(h.parked).toHaveLength(1);
    h.scheduler.reset('whk_1');
    void h.admit(ticket('whk_1', 'org_a'));
    await settle();
    expect(h.started).toHaveLength(2);
  });

  it('starts nothing while the delivery log cannot be written, and resumes on pump', async () => {
    let writable = false;
    const h = harness(options(), { writable: () => writable, disabled: () => false });
    void h.admit(ticket('whk_1', 'org_a'));
    void h.admit(ticket('whk_2', 'org_b'));
    await settle();
    h.advance(10_000);
    h.scheduler.sweep();
    await settle();
    expect(h.started).toEqual([]);
    expect(h.parked).toEqual([]);
    writable = true;
    h.scheduler.pump();
    await settle();
    expect(h.started.sort()).toEqual(['whk_1', 'whk_2']);
  });

  it('parks the attempts of a disabled webhook with no due time', async () => {
    const disabled = new Set<string>();
    const h = harness(options({ concurrency: 1, perWebhook: 1 }), { writable: () => true, disabled: (id) => disabled.has(id) });
    void h.admit(ticket('whk_1', 'org_a'));
    void h.admit(ticket('whk_1', 'org_a'));
    await settle();
    disabled.add('whk_1');
    h.scheduler.sweep();
    await settle();
    expect(h.parked).toEqual([{ webhookId: 'whk_1', until: null }]);
  });

  it('keeps to a webhook\'s rate limit', async () => {
    jest.useFakeTimers();
    try {
      const h = harness(options({ concurrency: 10, perWebhook: 10 }));
      for (let i = 0; i < 5; i++) void h.admit(ticket('whk_1', 'org_a', { rateLimitPerSecond: 2 }));
      await jest.advanceTimersByTimeAsync(0);
      expect(h.started).toHaveLength(1);
      for (let i = 0; i < 3; i++) h.scheduler.done('whk_1', 'success');
      h.advance(500);
      await jest.advanceTimersByTimeAsync(500);
      expect(h.started).toHaveLength(2);
      h.advance(1000);
      await jest.advanceTimersByTimeAsync(1000);
      expect(h.started).toHaveLength(4);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('WebhookBreaker', () => {
  it('doubles the open period after each failed probe, up to the maximum', () => {
    const b = new WebhookBreaker({ failures: 1, cooldownMs: 1000, maxCooldownMs: 3000 });
    b.failed(0);
    expect(b.state).toEqual({ kind: 'open', until: 1000, cooldownMs: 1000 });
    expect(b.canStart(999)).toBe(false);
    expect(b.canStart(1000)).toBe(true);
    b.started();
    b.failed(1000);
    expect(b.state).toEqual({ kind: 'open', until: 3000, cooldownMs: 2000 });
    b.started();
    b.failed(3000);
    expect(b.state).toEqual({ kind: 'open', until: 6000, cooldownMs: 3000 });
    b.succeeded();
    expect(b.state).toEqual({ kind: 'closed', failures: 0 });
  });

  it('counts each organization\'s attempts held (waiting or POSTing) and says when they stall', async () => {
    const h = harness(options({ concurrency: 4, perWebhook: 2, parkAfterMs: 1000 }));
    for (let i = 0; i < 5; i++) void h.admit(ticket('whk_a', 'org_a'));
    void h.admit(ticket('whk_b', 'org_b'));
    await settle();
    expect(h.scheduler.heldOf('org_a')).toBe(5);
    expect(h.scheduler.heldOf('org_b')).toBe(1);
    // its whole share busy, but only just: not stalled yet
    expect(h.scheduler.stalled('org_a')).toBe(false);
    h.scheduler.done('whk_b', 'success');
    expect(h.scheduler.heldOf('org_b')).toBe(0);
    // no POST of it ended for parkAfterMs with its share full: it hangs
    h.advance(1000);
    expect(h.scheduler.stalled('org_a')).toBe(true);
    expect(h.scheduler.stalled('org_b')).toBe(false);
    h.scheduler.done('whk_a', 'success');
    await settle();
    expect(h.scheduler.heldOf('org_a')).toBe(4);
    expect(h.scheduler.stalled('org_a')).toBe(false);
  });

  it('counts an organization stalled while its webhook\'s breaker is open, and no longer holding what was handed back', async () => {
    const h = harness(options({ concurrency: 4, perWebhook: 4 }));
    for (let i = 0; i < 3; i++) void h.admit(ticket('whk_a', 'org_a'));
    await settle();
    for (let i = 0; i < 3; i++) h.scheduler.done('whk_a', 'failure');
    expect(h.scheduler.heldOf('org_a')).toBe(0);
    expect(h.scheduler.stalled('org_a')).toBe(true);
    void h.admit(ticket('whk_a', 'org_a'));
    await settle();
    // handed back at once: not held
    expect(h.parked).toHaveLength(1);
    expect(h.scheduler.heldOf('org_a')).toBe(0);
  });

  it('does not count an organization stalled while one of its webhooks still moves', async () => {
    const h = harness(options({ concurrency: 4, perWebhook: 2, parkAfterMs: 1000 }));
    for (let i = 0; i < 3; i++) void h.admit(ticket('whk_hung', 'org_a'));
    void h.admit(ticket('whk_ok', 'org_a'));
    await settle();
    h.advance(1000);
    expect(h.scheduler.stalled('org_a')).toBe(false);
    h.scheduler.done('whk_ok', 'success');
    // only the hung one has attempts here now
    expect(h.scheduler.stalled('org_a')).toBe(true);
  });
});
