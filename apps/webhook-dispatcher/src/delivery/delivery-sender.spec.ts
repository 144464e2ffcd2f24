import { createHmac } from 'node:crypto';
import pino from 'pino';
import type { AttemptRecord } from '@app/database';
import { MetricsRegistry } from '@app/infra';
import { DispatcherMetrics } from '../metrics';
import { FairScheduler } from '../scheduling/fair-scheduler';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import { AttemptStore, DeliverySender, HeldAttempt, RetryJobs } from './delivery-sender';
import { Destination, Destinations, HttpDestination, Poster } from './destinations';
import { DeliveryLog, DeliveryStore } from './delivery-store';
import { LogHealth } from './log-health';
import type { PostResult } from './webhook-client';

const log = pino({ level: 'silent' });
const metrics = new DispatcherMetrics(new MetricsRegistry(), { queueDepth: async () => ({}), deadCount: async () => 0 });

const webhook: WebhookTarget = {
  id: 'whk_1',
  organizationId: 'org_1',
  url: 'https://receiver.example/hook',
  events: ['*'],
  sessionId: null,
  active: true,
  customHeaders: {},
  retryPolicy: { policy: 'constant', delaySeconds: 5, attempts: 3 },
  rateLimitPerSecond: null,
  failingSince: null,
  disabledAt: null,
  kind: 'http',
  target: {},
  secret: 's3cret',
};

/** The HTTP destination over a fake client; the broker kinds are not reached by these tests. */
function viaHttp(poster: Poster): Destinations {
  const unused: Destination = { deliver: () => Promise.reject(new Error('not an http destination')), close: async () => undefined };
  return { http: new HttpDestination(poster), amqp: unused, nats: unused, chatwoot: unused };
}

const ok: PostResult = { statusCode: 200, retryAfter: null, snippet: null, error: null, refused: false, durationMs: 1 };
const failed: PostResult = { statusCode: 500, retryAfter: null, snippet: 'boom', error: 'receiver answered 500', refused: false, durationMs: 1 };

function attempt(n: number, over: Partial<HeldAttempt> = {}): HeldAttempt {
  return {
    deliveryId: `dlv_${n}`,
    attemptNo: 1,
    attemptBase: 0,
    webhook,
    eventId: `evt_${n}`,
    eventType: 'message.received',
    sessionId: null,
    eventTimestamp: 0,
    body: Buffer.from(`{"n":${n}}`),
    leaseUntil: Date.now() + 60_000,
    ...over,
  };
}

/** A receiver whose answers the test releases one by one. */
class GatedPoster implements Poster {
  calls: { url: string; headers: Record<string, string>; body: Buffer; answer: (r: PostResult) => void }[] = [];
  post(url: string, headers: Record<string, string>, body: Buffer): Promise<PostResult> {
    return new Promise((answer) => this.calls.push({ url, headers, body, answer }));
  }
}

function fakeStore() {
  const records: AttemptRecord[] = [];
  const renewals: { deliveryId: string; attemptNo: number }[][] = [];
  const mock = {
    flushSoon: jest.fn(),
    record: jest.fn(async (r: AttemptRecord) => {
      records.push(r);
    }),
    renewLeases: jest.fn(async (items: { deliveryId: string; attemptNo: number }[]) => {
      renewals.push(items);
      return new Set(items.map((i) => i.deliveryId));
    }),
    postpone: jest.fn(async (_deliveryId: string, _attemptNo: number, _dueAt: number | null) => true),
  };
  const store: AttemptStore = mock;
  return { store, records, renewals, mock };
}

/** The delivery queue's retry side: records the jobs added. */
function fakeJobs() {
  const add = jest.fn(async (_deliveryId: string, _attemptNo: number, _delayMs?: number) => undefined);
  const queue: RetryJobs = { add };
  return { queue, add };
}

/** A fan-out's insert of a row, which the test commits (true: created; false: the pair had a row) or fails. */
function insertion() {
  let commit!: (created: boolean) => void;
  let fail!: (err: Error) => void;
  const inserted = new Promise<boolean>((resolve, reject) => {
    commit = resolve;
    fail = reject;
  });
  return { inserted, commit, fail };
}

const flush = () => new Promise((r) => setImmediate(r));

/** A sender whose slots come from a fair scheduler with `concurrency` slots, every webhook allowed all of them. */
function newSender(
  concurrency: number,
  store: AttemptStore,
  queue: RetryJobs,
  poster: Poster,
  clock: () => number = Date.now,
  signals = { writable: () => true, disabled: (_id: string) => false },
  scheduler = new FairScheduler(
    { concurrency, perWebhook: concurrency, parkAfterMs: 2000, breaker: { failures: 1000, cooldownMs: 1000, maxCooldownMs: 1000 } },
    signals,
    clock,
  ),
) {
  return new DeliverySender({ timeoutMs: 1000, leaseMs: 3000 }, store, queue, viaHttp(poster), metrics, log, { scheduler, health: { observe: () => undefined }, failingSince: () => null }, clock);
}


/** A scheduler whose breaker opens after one failure and stays open 1 s, on the given clock. */
const breakerScheduler = (clock: () => number) =>
  new FairScheduler(
    { concurrency: 4, perWebhook: 4, parkAfterMs: 2000, breaker: { failures: 1, cooldownMs: 1000, maxCooldownMs: 1000 } },
    { writable: () => true, disabled: () => false },
    clock,
    () => 0,
  );
describe('DeliverySender', () => {
  it('keeps at most `concurrency` POSTs in flight across everything handed to it', async () => {
    const poster = new GatedPoster();
    const { store, records } = fakeStore();
    const sender = newSender(2, store, fakeJobs().queue, poster);
    sender.sendAll([attempt(1), attempt(2), attempt(3), attempt(4), attempt(5)]);
    await flush();
    expect(poster.calls).toHaveLength(2);
    expect(sender.backlog).toBe(5);
    poster.calls[0].answer(ok);
    await flush();
    expect(poster.calls).toHaveLength(3);
    for (let i = 1; i < 5; i++) {
      await flush();
      poster.calls[i].answer(ok);
    }
    await sender.idle();
    expect(records.map((r) => r.deliveryId).sort()).toEqual(['dlv_1', 'dlv_2', 'dlv_3', 'dlv_4', 'dlv_5']);
    expect(records.every((r) => r.status === 'delivered' && r.nextAttemptAt === null)).toBe(true);
    expect(sender.backlog).toBe(0);
  });

  it('signs the shared body per webhook secret and sends it unchanged', async () => {
    const poster = new GatedPoster();
    const { store } = fakeStore();
    const sender = newSender(4, store, fakeJobs().queue, poster);
    const body = Buffer.from('{"id":"evt_1"}');
    sender.sendAll([
      attempt(1, { body, eventId: 'evt_1' }),
      attempt(2, { body, eventId: 'evt_1', webhook: { ...webhook, id: 'whk_2', secret: 'other' } }),
    ]);
    await flush();
    expect(poster.calls.map((c) => c.body)).toEqual([body, body]);
    expect(poster.calls[0].headers['X-Webhook-Hmac']).toBe(createHmac('sha512', 's3cret').update(body).digest('hex'));
    expect(poster.calls[1].headers['X-Webhook-Hmac']).toBe(createHmac('sha512', 'other').update(body).digest('hex'));
    expect(poster.calls.map((c) => c.headers['X-Webhook-Request-Id'])).toEqual(['evt_1', 'evt_1']);
    poster.calls.forEach((c) => c.answer(ok));
    await sender.idle();
  });

  it('records a failure as pending with next_attempt_at before adding the retry job, and a last failure as dead', async () => {
    const poster = new GatedPoster();
    const { store, mock } = fakeStore();
    const order: string[] = [];
    mock.record.mockImplementation(async (r: AttemptRecord) => {
      order.push(`record ${r.deliveryId} ${r.status}`);
    });
    const { queue, add } = fakeJobs();
    add.mockImplementation(async (deliveryId: string) => void order.push(`job ${deliveryId}`));
    const sender = newSender(4, store, queue, poster, () => 1_000_000);
    sender.sendAll([attempt(1), attempt(2, { attemptNo: 3 })]);
    await flush();
    poster.calls.forEach((c) => c.answer(failed));
    await sender.idle();
    expect(order).toEqual(['record dlv_1 pending', 'record dlv_2 dead', 'job dlv_1']);
    expect(mock.record.mock.calls[0][0]).toMatchObject({ attemptNo: 1, statusCode: 500, nextAttemptAt: 1_005_000, snippet: 'boom' });
    // the job of attempt 2, after the policy's 5 s (its id, dlv_1-2, is the DeliveryQueue's)
    expect(add).toHaveBeenCalledWith('dlv_1', 2, 5000);
  });

  it('counts against the read-ahead only attempts waiting for a slot or in flight, not those being recorded', async () => {
    const poster = new GatedPoster();
    const { store, mock } = fakeStore();
    // the log is slow: a record waits until the test lets it through
    const writes: (() => void)[] = [];
    mock.record.mockImplementation(() => new Promise<void>((r) => writes.push(r)));
    const sender = newSender(8, store, fakeJobs().queue, poster);
    sender.sendAll([attempt(1), attempt(2)]);
    await flush();
    expect(sender.queued).toBe(2);
    poster.calls[0].answer(ok);
    poster.calls[1].answer(ok);
    await flush();
    // both POSTs ended, both outcomes wait for the log: the next batch may be read, the attempts are still held
    expect(writes).toHaveLength(2);
    expect(sender.backlog).toBe(2);
    expect(sender.queued).toBe(0);
    expect(sender.completed).toBe(2);
    let room = false;
    void sender.whenBelow(1).then(() => (room = true));
    await flush();
    expect(room).toBe(true);
    for (const write of writes) write();
    await sender.idle();
    expect(sender.backlog).toBe(0);
  });

  it('holds the fan-out back until the attempts in hand drop below the limit', async () => {
    const poster = new GatedPoster();
    const { store } = fakeStore();
    const sender = newSender(8, store, fakeJobs().queue, poster);
    sender.sendAll([attempt(1), attempt(2), attempt(3)]);
    await flush();
    let room = false;
    void sender.whenBelow(2).then(() => (room = true));
    poster.calls[0].answer(ok);
    await flush();
    expect(room).toBe(false);
    poster.calls[1].answer(ok);
    await sender.whenBelow(2);
    expect(room).toBe(true);
    poster.calls[2].answer(ok);
    await sender.idle();
  });

  it('renews the leases of attempts kept waiting', async () => {
    const poster = new GatedPoster();
    const { store, renewals } = fakeStore();
    let now = 1_000_000;
    const sender = newSender(1, store, fakeJobs().queue, poster, () => now);
    sender.sendAll([attempt(1, { leaseUntil: now + 3000 }), attempt(2, { leaseUntil: now + 3000 })]);
    await flush();
    await sender.renewLeases();
    expect(renewals).toHaveLength(0);
    now += 1500; // less than timeout + half the margin left
    await sender.renewLeases();
    expect(renewals).toEqual([[{ deliveryId: 'dlv_1', attemptNo: 1 }, { deliveryId: 'dlv_2', attemptNo: 1 }]]);
    await sender.renewLeases();
    expect(renewals).toHaveLength(1); // extended to now + lease, not due again yet
    poster.calls[0].answer(ok);
    await flush();
    await flush();
    poster.calls[1].answer(ok);
    await sender.idle();
  });

  it('rejects send() when the outcome cannot be written, so a retry job fails and BullMQ retries it', async () => {
    const poster = new GatedPoster();
    const { store, mock } = fakeStore();
    mock.record.mockRejectedValue(new Error('db down'));
    const sender = newSender(1, store, fakeJobs().queue, poster);
    const sent = sender.send(attempt(1));
    await flush();
    poster.calls[0].answer(ok);
    await expect(sent).rejects.toThrow('db down');
    expect(sender.backlog).toBe(0);
  });

  it('starts no attempt while the delivery log cannot be written, and starts them once it can (no send without a record)', async () => {
    const poster = new GatedPoster();
    const { store, records } = fakeStore();
    let writable = false;
    const scheduler = new FairScheduler(
      { concurrency: 4, perWebhook: 4, parkAfterMs: 2000, breaker: { failures: 1000, cooldownMs: 1000, maxCooldownMs: 1000 } },
      { writable: () => writable, disabled: () => false },
    );
    const sender = newSender(4, store, fakeJobs().queue, poster, Date.now, undefined, scheduler);
    sender.sendAll([attempt(1), attempt(2)]);
    await flush();
    expect(poster.calls).toHaveLength(0);
    expect(sender.backlog).toBe(2);
    writable = true;
    scheduler.pump();
    await flush();
    expect(poster.calls).toHaveLength(2);
    poster.calls.forEach((c) => c.answer(ok));
    await sender.idle();
    expect(records).toHaveLength(2);
  });

  it('through a PostgreSQL outage mid-burst: no POST starts once the log is known down, the outcomes of those made are written once it is back, every POST has one record', async () => {
    const poster = new GatedPoster();
    let down = false;
    const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const written: string[] = [];
    const pg = {
      recordAttempts: jest.fn(async (items: AttemptRecord[]) => {
        if (down) throw refused();
        written.push(...items.map((i) => i.deliveryId));
      }),
      ping: async () => {
        if (down) throw refused();
      },
    };
    const health = new LogHealth(pg.ping, 5);
    const store = new DeliveryStore(pg as unknown as DeliveryLog, 3000, health, 10_000);
    const scheduler = new FairScheduler(
      { concurrency: 2, perWebhook: 2, parkAfterMs: 2000, breaker: { failures: 1000, cooldownMs: 1000, maxCooldownMs: 1000 } },
      { writable: () => health.writable, disabled: () => false },
    );
    health.onChange((writable) => writable && scheduler.pump());
    const sender = newSender(2, store, fakeJobs().queue, poster, Date.now, undefined, scheduler);
    sender.sendAll([1, 2, 3, 4, 5, 6].map((n) => attempt(n, { viaJob: true })));
    await flush();
    expect(poster.calls).toHaveLength(2);
    // PostgreSQL goes away while two POSTs are in flight; their answers come
    down = true;
    poster.calls[0].answer(ok);
    poster.calls[1].answer(ok);
    // their slots went to the next attempts before any statement had failed: those POSTs are made too
    await new Promise<void>((resolve) => health.onChange((w) => !w && resolve()));
    const startedBeforeKnown = poster.calls.length;
    for (const c of poster.calls) c.answer(ok);
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
    // once the log is known to be down, nothing new starts and nothing is reported written
    expect(poster.calls).toHaveLength(startedBeforeKnown);
    expect(startedBeforeKnown).toBeLessThan(6);
    expect(written).toEqual([]);
    down = false;
    while (poster.calls.length < 6) {
      await new Promise((r) => setTimeout(r, 5));
      for (const c of poster.calls) c.answer(ok);
    }
    for (const c of poster.calls) c.answer(ok);
    await sender.idle();
    expect(written.sort()).toEqual(['dlv_1', 'dlv_2', 'dlv_3', 'dlv_4', 'dlv_5', 'dlv_6']);
    expect(poster.calls).toHaveLength(6);
  });

  it('hands an attempt back when its webhook\'s breaker is open: pending again, not POSTed, no attempt recorded', async () => {
    const poster = new GatedPoster();
    const { store, mock, records } = fakeStore();
    let now = 1_000_000;
    const scheduler = breakerScheduler(() => now);
    const { queue, add } = fakeJobs();
    const sender = newSender(4, store, queue, poster, () => now, undefined, scheduler);
    const first = sender.send(attempt(1));
    await flush();
    poster.calls[0].answer(failed);
    await first;
    // the breaker is open for 1 s: a retry job's attempt goes back, due when it closes
    const second = await sender.send(attempt(2, { attemptNo: 2, viaJob: true }));
    expect(second).toEqual({ kind: 'postponed', until: now + 1000 });
    expect(mock.postpone).toHaveBeenCalledWith('dlv_2', 2, now + 1000);
    expect(poster.calls).toHaveLength(1);
    expect(records.map((r) => r.deliveryId)).toEqual(['dlv_1']);
    // (its job is moved by the worker holding it; only a fan-out's attempt gets a new job)
    expect(add).toHaveBeenCalledTimes(1);
    now += 1000;
  });

  it('a probe without an answer within the probe timeout reopens the breaker and frees its slot; its late 2xx still closes the breaker', async () => {
    const poster = new GatedPoster();
    const { store, records } = fakeStore();
    let now = 1_000_000;
    const scheduler = new FairScheduler(
      { concurrency: 4, perWebhook: 4, parkAfterMs: 2000, breaker: { failures: 1, cooldownMs: 1000, maxCooldownMs: 2000 } },
      { writable: () => true, disabled: () => false },
      () => now,
      () => 0,
    );
    const sender = new DeliverySender({ timeoutMs: 15_000, leaseMs: 17_000, probeTimeoutMs: 20 }, store, fakeJobs().queue, viaHttp(poster), metrics, log, {
      scheduler,
      health: { observe: () => undefined },
      failingSince: () => null,
    }, () => now);
    const first = sender.send(attempt(1));
    await flush();
    poster.calls[0].answer(failed);
    await first;
    expect(scheduler.breakerOf('whk_1')!.state).toMatchObject({ kind: 'open', until: now + 1000 });
    now += 1000;
    // the probe: POSTed, and no answer comes
    const probe = sender.send(attempt(2, { attemptNo: 2, viaJob: true }));
    await flush();
    expect(poster.calls).toHaveLength(2);
    expect(scheduler.breakerOf('whk_1')!.state.kind).toBe('probing');
    while (scheduler.breakerOf('whk_1')!.state.kind === 'probing') await new Promise((r) => setTimeout(r, 5));
    // counted failed at the probe timeout: open again for twice the cooldown, its slot free, its POST still going
    expect(scheduler.breakerOf('whk_1')!.state).toEqual({ kind: 'open', until: now + 2000, cooldownMs: 2000 });
    expect(scheduler.inFlight).toBe(0);
    // the receiver answers after all: the breaker closes and the attempt is recorded delivered
    poster.calls[1].answer(ok);
    expect(await probe).toEqual({ kind: 'sent' });
    expect(scheduler.breakerOf('whk_1')!.state).toEqual({ kind: 'closed', failures: 0 });
    expect(records.map((r) => [r.deliveryId, r.status])).toEqual([
      ['dlv_1', 'pending'],
      ['dlv_2', 'delivered'],
    ]);
  });

  it('makes no call once the lease ran out while the attempt waited for its slot, and frees the slot', async () => {
    const poster = new GatedPoster();
    const { store, mock } = fakeStore();
    let now = 1_000_000;
    const scheduler = new FairScheduler(
      { concurrency: 1, perWebhook: 1, parkAfterMs: 60_000, breaker: { failures: 1000, cooldownMs: 1000, maxCooldownMs: 1000 } },
      { writable: () => true, disabled: () => false },
      () => now,
    );
    const sender = newSender(1, store, fakeJobs().queue, poster, () => now, undefined, scheduler);
    const first = sender.send(attempt(1));
    // renewal fails meanwhile (the log is down): dlv_2's lease runs out while it waits behind dlv_1
    mock.renewLeases.mockRejectedValue(new Error('db down'));
    const second = sender.send(attempt(2, { leaseUntil: now + 500 }));
    await flush();
    now += 1000;
    await sender.renewLeases();
    poster.calls[0].answer(ok);
    expect(await first).toEqual({ kind: 'sent' });
    expect(await second).toEqual({ kind: 'skipped' });
    expect(poster.calls).toHaveLength(1);
    expect(scheduler.inFlight).toBe(0);
    expect(mock.record).toHaveBeenCalledTimes(1);
    expect(sender.completed).toBe(2);
  });

  describe('first attempts of a fan-out (its row being inserted)', () => {
    it('makes no call before its row is committed, then POSTs and records its outcome like any attempt', async () => {
      const poster = new GatedPoster();
      const { store, records } = fakeStore();
      const sender = newSender(4, store, fakeJobs().queue, poster);
      const row = insertion();
      sender.sendAll([attempt(1, { inserted: row.inserted })]);
      await flush();
      expect(poster.calls).toHaveLength(0);
      // waiting for its row, it counts against the read-ahead
      expect(sender.queued).toBe(1);
      row.commit(true);
      await flush();
      expect(poster.calls).toHaveLength(1);
      poster.calls[0].answer(ok);
      await sender.idle();
      expect(records).toEqual([expect.objectContaining({ deliveryId: 'dlv_1', attemptNo: 1, status: 'delivered', statusCode: 200 })]);
    });

    it('makes no call when the (webhook, event) pair had a row already: that row is someone else\'s', async () => {
      const poster = new GatedPoster();
      const { store, mock } = fakeStore();
      const { queue, add } = fakeJobs();
      const scheduler = new FairScheduler(
        { concurrency: 4, perWebhook: 4, parkAfterMs: 2000, breaker: { failures: 1000, cooldownMs: 1000, maxCooldownMs: 1000 } },
        { writable: () => true, disabled: () => false },
      );
      const sender = newSender(4, store, queue, poster, Date.now, undefined, scheduler);
      const row = insertion();
      const sent = sender.send(attempt(1, { inserted: row.inserted }));
      row.commit(false);
      expect(await sent).toEqual({ kind: 'skipped' });
      expect(poster.calls).toHaveLength(0);
      expect(mock.record).not.toHaveBeenCalled();
      expect(mock.postpone).not.toHaveBeenCalled();
      expect(add).not.toHaveBeenCalled();
      expect(scheduler.inFlight).toBe(0);
      expect(sender.backlog).toBe(0);
    });

    it('makes no call when its row could not be inserted (its event stays pending for a takeover)', async () => {
      const poster = new GatedPoster();
      const { store, mock } = fakeStore();
      const sender = newSender(4, store, fakeJobs().queue, poster);
      const row = insertion();
      const sent = sender.send(attempt(1, { inserted: row.inserted }));
      row.fail(new Error('db down'));
      await expect(sent).rejects.toThrow('db down');
      expect(poster.calls).toHaveLength(0);
      expect(mock.record).not.toHaveBeenCalled();
      expect(sender.backlog).toBe(0);
    });

    it('hands a fan-out\'s attempt back at once when its breaker is open (its row is claimed), with the job of that attempt', async () => {
      const poster = new GatedPoster();
      const { store, mock } = fakeStore();
      const now = 1_000_000;
      const scheduler = breakerScheduler(() => now);
      const { queue, add } = fakeJobs();
      const sender = newSender(4, store, queue, poster, () => now, undefined, scheduler);
      const first = sender.send(attempt(1));
      await flush();
      poster.calls[0].answer(failed);
      await first;
      const row = insertion();
      const second = sender.send(attempt(2, { inserted: row.inserted }));
      row.commit(true);
      expect(await second).toEqual({ kind: 'postponed', until: now + 1000 });
      expect(mock.postpone).toHaveBeenCalledWith('dlv_2', 1, now + 1000);
      expect(add).toHaveBeenCalledWith('dlv_2', 1, 1000);
      expect(poster.calls).toHaveLength(1);
    });
  });
});
