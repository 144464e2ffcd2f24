import { createHmac } from 'node:crypto';
import pino from 'pino';
import type { AttemptRecord, NewDelivery } from '@app/database';
import { MetricsRegistry } from '@app/infra';
import { DispatcherMetrics } from '../metrics';
import { FairScheduler } from '../scheduling/fair-scheduler';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import { AttemptStore, DeliverySender, HeldAttempt, HOLD_AFTER_MS, RetryJobs } from './delivery-sender';
import { Destination, Destinations, HttpDestination, Poster } from './destinations';
import { DeliveryLog, DeliveryStore } from './delivery-store';
import { LogHealth } from './log-health';
import type { EventRows } from './event-rows';
import type { RowClaim } from './first-attempt';
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

/** A claimed row the test commits: its outcome attaches until the test marks its statement started. */
interface FakeHold {
  delivery: NewDelivery;
  outcome: AttemptRecord | null;
  flushing: boolean;
  commit: (created: boolean) => void;
}

function fakeStore() {
  const records: AttemptRecord[] = [];
  const renewals: { deliveryId: string; attemptNo: number }[][] = [];
  /** rows written by writeFirst, and holds still waiting for their statement (the test flushes them) */
  const firsts: { delivery: NewDelivery; outcome: AttemptRecord }[] = [];
  const holds: FakeHold[] = [];
  const mock = {
    flushSoon: jest.fn(),
    writeFirst: jest.fn(async (delivery: NewDelivery, outcome: AttemptRecord, _event: EventRows) => {
      firsts.push({ delivery, outcome });
      return true;
    }),
    hold: jest.fn((delivery: NewDelivery, _event: EventRows): RowClaim => {
      let commit!: (created: boolean) => void;
      const created = new Promise<boolean>((r) => (commit = r));
      const hold: FakeHold = { delivery, outcome: null, flushing: false, commit };
      holds.push(hold);
      return {
        attach: (outcome) => {
          if (hold.flushing) return false;
          hold.outcome = outcome;
          return true;
        },
        created,
      };
    }),
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
  return { store, records, renewals, firsts, holds, mock };
}

/** The delivery queue's retry side: records the jobs added. */
function fakeJobs() {
  const add = jest.fn(async (_deliveryId: string, _attemptNo: number, _delayMs?: number) => undefined);
  const queue: RetryJobs = { add };
  return { queue, add };
}

/** An event of a fresh fan-out: records how it settles. */
function fakeEvent(eventId: string) {
  const settled: boolean[] = [];
  const event: EventRows = { eventId, completedBy: () => false, written: () => void settled.push(true), fail: () => void settled.push(false) };
  return { event, settled };
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

  it('renews the leases of attempts kept waiting, not of fresh ones', async () => {
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
    const scheduler = new FairScheduler(
      { concurrency: 4, perWebhook: 4, parkAfterMs: 2000, breaker: { failures: 1, cooldownMs: 1000, maxCooldownMs: 1000 } },
      { writable: () => true, disabled: () => false },
      () => now,
      () => 0,
    );
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
    // (its job is moved by the worker holding it; only a fresh row gets a new job)
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

  describe('first attempts of a fresh fan-out (no row yet)', () => {
    const fresh = (n: number, event = fakeEvent(`evt_${n}`).event): HeldAttempt =>
      attempt(n, { leaseUntil: Number.POSITIVE_INFINITY, fresh: { event, organizationId: 'org_1', eventType: 'message.received' } });

    it('writes the row once, after the POST, in its final state with its attempt', async () => {
      const poster = new GatedPoster();
      const { store, firsts, mock } = fakeStore();
      const sender = newSender(4, store, fakeJobs().queue, poster);
      sender.sendAll([fresh(1)]);
      await flush();
      expect(mock.writeFirst).not.toHaveBeenCalled();
      poster.calls[0].answer(ok);
      await sender.idle();
      expect(firsts).toEqual([
        {
          delivery: { deliveryId: 'dlv_1', webhookId: 'whk_1', eventId: 'evt_1', organizationId: 'org_1', eventType: 'message.received' },
          outcome: expect.objectContaining({ deliveryId: 'dlv_1', attemptNo: 1, status: 'delivered', statusCode: 200 }),
        },
      ]);
      expect(mock.record).not.toHaveBeenCalled();
    });

    it('adds the retry job only after a pending row is written, and none when the row was someone else\'s', async () => {
      const poster = new GatedPoster();
      const { store, mock } = fakeStore();
      const order: string[] = [];
      mock.writeFirst.mockImplementation(async (d: NewDelivery, o: AttemptRecord) => {
        order.push(`write ${d.deliveryId} ${o.status}`);
        return d.deliveryId === 'dlv_1';
      });
      const { queue, add } = fakeJobs();
      add.mockImplementation(async (deliveryId: string) => void order.push(`job ${deliveryId}`));
      const sender = newSender(4, store, queue, poster, () => 1_000_000);
      sender.sendAll([fresh(1), fresh(2)]);
      await flush();
      poster.calls.forEach((c) => c.answer(failed));
      await sender.idle();
      expect(order).toEqual(['write dlv_1 pending', 'write dlv_2 pending', 'job dlv_1']);
      expect(mock.writeFirst.mock.calls[0][1]).toMatchObject({ nextAttemptAt: 1_005_000 });
    });

    it('claims the row of an attempt kept waiting, and writes the outcome into the claim while it is not yet flushed', async () => {
      const poster = new GatedPoster();
      const { store, holds, mock } = fakeStore();
      let now = 1_000_000;
      const sender = newSender(1, store, fakeJobs().queue, poster, () => now);
      sender.sendAll([fresh(1), fresh(2)]);
      await flush();
      sender.holdSlowRows();
      expect(holds).toHaveLength(0);
      now += HOLD_AFTER_MS + 1;
      sender.holdSlowRows();
      expect(holds.map((h) => h.delivery.deliveryId)).toEqual(['dlv_1', 'dlv_2']);
      poster.calls[0].answer(ok);
      await flush();
      // not flushed yet: the claim becomes the final row, no separate record
      expect(holds[0].outcome).toMatchObject({ status: 'delivered' });
      holds[0].commit(true);
      // dlv_2's claim is flushed and committed before its POST ends: an ordinary leased attempt
      holds[1].flushing = true;
      holds[1].commit(true);
      await flush();
      poster.calls[1].answer(ok);
      await sender.idle();
      expect(holds[1].outcome).toBeNull();
      expect(mock.record).toHaveBeenCalledTimes(1);
      expect(mock.record.mock.calls[0][0]).toMatchObject({ deliveryId: 'dlv_2', status: 'delivered' });
      expect(mock.writeFirst).not.toHaveBeenCalled();
    });

    it('does not POST an attempt whose claim found the row already there', async () => {
      const poster = new GatedPoster();
      const { store, holds, mock } = fakeStore();
      let now = 1_000_000;
      const sender = newSender(1, store, fakeJobs().queue, poster, () => now);
      sender.sendAll([fresh(1), fresh(2)]);
      await flush();
      now += HOLD_AFTER_MS + 1;
      sender.holdSlowRows();
      holds[1].flushing = true;
      holds[1].commit(false);
      await flush();
      expect(sender.backlog).toBe(2);
      poster.calls[0].answer(ok);
      holds[0].commit(true);
      await sender.idle();
      expect(poster.calls).toHaveLength(1);
      expect(mock.record).not.toHaveBeenCalled();
    });

    it('fails the event of a row never handed to the writer, so it is not marked fanned out without it', async () => {
      const failing: Poster = { post: () => Promise.reject(new Error('bug')) };
      const { store, mock } = fakeStore();
      const { event, settled } = fakeEvent('evt_1');
      const sender = newSender(1, store, fakeJobs().queue, failing);
      await expect(sender.send(fresh(1, event))).rejects.toThrow('bug');
      // never handed to the writer
      expect(mock.writeFirst).not.toHaveBeenCalled();
      expect(mock.hold).not.toHaveBeenCalled();
      expect(settled).toEqual([false]);
    });
  });
});
