import IORedis, { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import type { EventEnvelope, EventType } from '@app/contracts';
import { EventPublisher } from '@app/events';
import { startApi } from './support/api-app';
import { AppProcess, waitFor } from './support/processes';
import { createWebhookRow, deliveriesOf, Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, testDataSource, testDb } from './support/seed';
import { buildOpaque } from './support/opaque-event';
import { PrivateServices, startPrivateServices } from './support/private-services';

/**
 * Issue 23: no receiver and no organization slows another's deliveries (fair scheduler, per-webhook share),
 * a webhook that keeps failing is slowed by its breaker and then disabled with a `webhook.disabled` event, and
 * re-enabling it resumes what was pending. Real dispatcher processes, real HTTP receivers, PostgreSQL, Redis.
 */
describe('webhook delivery fairness, breaker and disable', () => {
  // latencies are measured on a PostgreSQL and a Redis of this file's own: the run's shared stream and database carry
  // what every earlier suite left (events, due retries at receivers long closed), which is not what these cases measure
  let services: PrivateServices;
  let db: DataSource;
  let redis: Redis;
  let publisher: EventPublisher;
  const receivers: Receiver[] = [];
  const dispatchers: AppProcess[] = [];
  let api: Awaited<ReturnType<typeof startApi>> | null = null;

  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };
  const dispatcher = async (env: Record<string, string>) => {
    const d = await startDispatcherProcess(env);
    dispatchers.push(d);
    return d;
  };
  const stopDispatchers = async () => {
    for (const d of dispatchers.splice(0)) await d.stop();
  };

  /** First arrival of each request id under `path`: what a deduping receiver acts on. */
  const firstArrivals = (r: Receiver, path: string) => {
    const at = new Map<string, number>();
    for (const req of r.at(path)) {
      const id = String(req.headers['x-webhook-request-id']);
      if (!at.has(id)) at.set(id, req.receivedAt);
    }
    return at;
  };

  /** Event-to-receiver latencies (ms) of these events at `path`, sorted. */
  const latencies = (r: Receiver, path: string, events: EventEnvelope[]) => {
    const at = firstArrivals(r, path);
    return events.map((e) => at.get(e.id)! - e.timestamp).sort((a, b) => a - b);
  };
  const p99 = (sorted: number[]) => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];

  /** Publishes `count` events one by one, `everyMs` apart: a steady stream, as producers make it. */
  const stream = async (organizationId: string, event: EventType, count: number, everyMs: number): Promise<EventEnvelope[]> => {
    const sent: EventEnvelope[] = [];
    for (let i = 0; i < count; i++) {
      const envelope = buildOpaque(publisher, { event, organizationId, sessionId: null, payload: { i } });
      await publisher.publishEnvelopes([envelope]);
      sent.push(envelope);
      await new Promise((r) => setTimeout(r, everyMs));
    }
    return sent;
  };

  const arrived = (r: Receiver, path: string, events: EventEnvelope[]) => {
    const ids = r.distinctIds(path);
    return events.every((e) => ids.has(e.id));
  };

  beforeAll(async () => {
    services = await startPrivateServices('gw_webhook_fairness');
    db = await testDataSource();
    redis = new IORedis(process.env.REDIS_URL!);
    publisher = new EventPublisher(await testDb(), redis, process.env.REDIS_KEY_PREFIX!);
  }, 120_000);

  afterEach(async () => {
    // receivers first: a hung POST ends when its connection closes, so the dispatcher stops at once
    for (const r of receivers.splice(0)) await r.close();
    await stopDispatchers();
  });

  afterAll(async () => {
    for (const r of receivers.splice(0)) await r.close();
    await stopDispatchers();
    await api?.app.close();
    await redis?.quit();
    await closeTestDataSource();
    await services?.stopAll();
  });

  it('keeps a healthy webhook\'s first attempts within 2 s of its baseline p99 while another receiver accepts and never answers', async () => {
    const org = await seedOrganization('Fair hung');
    const healthy = await receiver();
    const hung = await receiver();
    let hanging = false;
    hung.respondWith(() => (hanging ? new Promise(() => undefined) : { status: 200 }));
    const policy = { policy: 'constant' as const, delaySeconds: 1, attempts: 30 };
    const healthyHook = await createWebhookRow(db, null, { organizationId: org.id, url: `${healthy.url}/healthy`, events: ['message.received'], retryPolicy: policy });
    await createWebhookRow(db, null, { organizationId: org.id, url: `${hung.url}/hung`, events: ['message.received'], retryPolicy: policy });
    // 8 POST slots: without a per-webhook share, 8 hung requests hold all of them for the whole (20 s) timeout
    await dispatcher({ DISPATCHER_CONCURRENCY: '8', WEBHOOK_TIMEOUT_MS: '20000' });

    // baseline: both receivers answer
    const before = await stream(org.id, 'message.received', 60, 50);
    await waitFor(() => arrived(healthy, '/healthy', before), 20000, 'baseline events at the healthy receiver');
    const baseline = p99(latencies(healthy, '/healthy', before));

    // the other receiver now accepts every connection and never answers
    hanging = true;
    const during = await stream(org.id, 'message.received', 120, 50);
    await waitFor(() => arrived(healthy, '/healthy', during), 30000, 'events at the healthy receiver while the other hangs');
    const hungP99 = p99(latencies(healthy, '/healthy', during));
    expect(hungP99).toBeLessThanOrEqual(baseline + 2000);
    // the hung receiver got requests (it is not simply skipped), and every healthy delivery is recorded
    expect(hung.at('/hung').length).toBeGreaterThan(60);
    await waitFor(async () => (await deliveriesOf(db, healthyHook)).filter((d) => d.status === 'delivered').length === 180, 20000, 'healthy deliveries recorded');
  }, 120_000);

  it('delivers another organization\'s fresh events within 2 s while one organization has 2,000 retries due at a slow receiver', async () => {
    const busy = await seedOrganization('Fair backlog');
    const quiet = await seedOrganization('Fair quiet');
    const slow = await receiver();
    const fast = await receiver();
    let slowMode = false;
    // first attempts fail at once; the retries meet a receiver that takes 4 s to fail
    slow.respondWith(async () => {
      if (slowMode) await new Promise((r) => setTimeout(r, 4000));
      return { status: 500 };
    });
    const backlogHook = await createWebhookRow(db, null, {
      organizationId: busy.id, url: `${slow.url}/backlog`, events: ['message.ack'], retryPolicy: { policy: 'constant', delaySeconds: 3, attempts: 30 },
    });
    await createWebhookRow(db, null, { organizationId: quiet.id, url: `${fast.url}/fresh`, events: ['message.received'] });
    // the breaker is not what this test is about: it stays closed
    await dispatcher({ DISPATCHER_CONCURRENCY: '8', WEBHOOK_TIMEOUT_MS: '10000', WEBHOOK_BREAKER_FAILURES: '100000' });

    const backlog = Array.from({ length: 2000 }, (_, i) => buildOpaque(publisher, { event: 'message.ack', organizationId: busy.id, sessionId: null, payload: { i } }));
    for (let i = 0; i < backlog.length; i += 500) await publisher.publishEnvelopes(backlog.slice(i, i + 500));
    // every first attempt failed and its retry is scheduled
    await waitFor(async () => {
      const [row] = await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND status = 'pending'`, [backlogHook]);
      return row.n === 2000;
    }, 60000, '2,000 retries scheduled');
    slowMode = true;
    // the retries are due: the slow receiver holds every POST it gets for 4 s
    await waitFor(async () => {
      const [row] = await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND status = 'pending' AND next_attempt_at < now()`, [backlogHook]);
      return row.n >= 1000;
    }, 20000, 'retries due');
    await waitFor(() => slow.at('/backlog').length > 2000, 20000, 'retries under way');

    const fresh = await stream(quiet.id, 'message.received', 40, 50);
    await waitFor(() => arrived(fast, '/fresh', fresh), 30000, 'the quiet organization\'s events');
    const took = latencies(fast, '/fresh', fresh);
    expect(took[took.length - 1]).toBeLessThanOrEqual(2000);
    // the backlog is still being worked through, not dropped: nothing of it is dead or lost
    const rows = await deliveriesOf(db, backlogHook);
    expect(rows).toHaveLength(2000);
    expect(rows.filter((r) => r.status === 'dead')).toHaveLength(0);
  }, 180_000);

  it('reads past one organization\'s backlog at slow and hung receivers: another organization\'s events all arrive while that backlog still waits', async () => {
    // issue 37: the consumer read the one shared stream in order and stopped once its read-ahead was full, so a
    // backlog that does not drain (a receiver taking 1 s per answer, another never answering) held every event
    // behind it, whatever its organization
    const busy = await seedOrganization('Backlog busy');
    const quiet = await seedOrganization('Backlog quiet');
    const slow = await receiver();
    const hung = await receiver();
    const fast = await receiver();
    // answers take 0.3–1.3 s, so its POSTs end spread out: busy and answering (its attempts are kept, never handed
    // back as a hung receiver's are)
    slow.respondWith(async () => {
      await new Promise((r) => setTimeout(r, 300 + Math.random() * 1000));
      return { status: 200 };
    });
    hung.respondWith(() => new Promise(() => undefined));
    const slowHook = await createWebhookRow(db, null, { organizationId: busy.id, url: `${slow.url}/slow`, events: ['message.ack'] });
    const hungHook = await createWebhookRow(db, null, { organizationId: busy.id, url: `${hung.url}/hung`, events: ['message.ack'] });
    const quietHook = await createWebhookRow(db, null, { organizationId: quiet.id, url: `${fast.url}/fast`, events: ['message.received'] });
    // no hung POST times out during the test; the read-ahead is the default (8 × 500 attempts). The reconciler is
    // off: it fans out from the outbox whatever the stream has not delivered within 10 s, which would carry the
    // quiet organization's events past a stalled consumer (the path under test) as well
    await dispatcher({ DISPATCHER_CONCURRENCY: '16', WEBHOOK_TIMEOUT_MS: '60000', RECONCILE_INTERVAL_MS: '600000' });

    // the backlog, through the real path (outbox insert + XADD): two attempts per event, far past the read-ahead
    const BACKLOG = 6000;
    const backlog = Array.from({ length: BACKLOG }, (_, i) => buildOpaque(publisher, { event: 'message.ack', organizationId: busy.id, sessionId: null, payload: { i } }));
    for (let i = 0; i < BACKLOG; i += 1000) await publisher.publishEnvelopes(backlog.slice(i, i + 1000));
    await waitFor(() => slow.at('/slow').length > 0 && hung.at('/hung').length > 0, 30000, 'the backlog under way');

    // the other organization publishes ~10 events a second
    const fresh = await stream(quiet.id, 'message.received', 20, 100);
    await waitFor(() => arrived(fast, '/fast', fresh), 40000, 'the quiet organization\'s events past the backlog');
    // they did not wait for the backlog to drain: nearly all of it is still undelivered at the slow receiver
    // (8 POST slots at ~0.8 s each)
    const delivered = slow.distinctIds('/slow').size;
    expect(BACKLOG - delivered).toBeGreaterThanOrEqual(BACKLOG - 1000);
    expect(fast.distinctIds('/fast')).toEqual(new Set(fresh.map((e) => e.id)));
    await waitFor(async () => (await deliveriesOf(db, quietHook)).filter((d) => d.status === 'delivered').length === fresh.length, 20000, 'quiet deliveries recorded');

    // nothing of the backlog is lost: every event has its delivery row at both of its webhooks (the part read past
    // is due in PostgreSQL, not held in memory), none of them dead
    const rowsOf = async (hook: string) => {
      const [row] = await db.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'dead')::int AS dead FROM deliveries WHERE webhook_id = $1`, [hook]);
      return row as { n: number; dead: number };
    };
    await waitFor(async () => (await rowsOf(slowHook)).n === BACKLOG && (await rowsOf(hungHook)).n === BACKLOG, 30000, 'a delivery row for every backlog event');
    expect((await rowsOf(slowHook)).dead + (await rowsOf(hungHook)).dead).toBe(0);
  }, 150_000);

  it('reads past one organization\'s backlog without writing its rows (the reader parks it in Redis, not PostgreSQL), and delivers another organization\'s events once rows can be written', async () => {
    // issue 37: the reader wrote the rows of every entry it read past (a PostgreSQL statement per batch on its path)
    // before it could reach the next organization's entries, so another organization waited for the whole backlog's
    // rows. Here no delivery row can be written at all while the backlog and the other organization's events are read
    // (a table lock): the reader must still get past both, writing no row of the backlog; and since every call waits
    // for its row (decision 86), the other organization's events are sent once the lock is gone, not before.
    const busy = await seedOrganization('Parked busy');
    const quiet = await seedOrganization('Parked quiet');
    const hung = await receiver();
    const fast = await receiver();
    hung.respondWith(() => new Promise(() => undefined));
    const hungHook = await createWebhookRow(db, null, { organizationId: busy.id, url: `${hung.url}/hung`, events: ['message.ack'] });
    const quietHook = await createWebhookRow(db, null, { organizationId: quiet.id, url: `${fast.url}/fast`, events: ['message.received'] });
    // the reconciler is off: it would fan out from the outbox what the stream has not delivered within 10 s
    await dispatcher({ DISPATCHER_CONCURRENCY: '16', WEBHOOK_TIMEOUT_MS: '60000', RECONCILE_INTERVAL_MS: '600000' });
    const build = (organizationId: string, event: EventType, i: number) => buildOpaque(publisher, { event, organizationId, sessionId: null, payload: { i } });

    // the busy organization stalls first: its receiver holds every POST, and its waiting attempts are handed back
    const first = Array.from({ length: 100 }, (_, i) => build(busy.id, 'message.ack', i));
    await publisher.publishEnvelopes(first);
    await waitFor(async () => (await deliveriesOf(db, hungHook)).some((d) => d.status === 'pending'), 30000, 'the busy organization\'s attempts handed back');

    // from here no delivery row can be written until the lock is released
    const lock = db.createQueryRunner();
    await lock.connect();
    await lock.startTransaction();
    await lock.query('LOCK TABLE deliveries IN SHARE MODE');
    let backlog: EventEnvelope[] = [];
    let fresh: EventEnvelope[] = [];
    try {
      const BACKLOG = 3000;
      backlog = Array.from({ length: BACKLOG }, (_, i) => build(busy.id, 'message.ack', 100 + i));
      for (let i = 0; i < BACKLOG; i += 1000) await publisher.publishEnvelopes(backlog.slice(i, i + 1000));
      // the reader gets past the whole backlog (the old reader waited for the rows of the part it read past)
      const key = `${process.env.REDIS_KEY_PREFIX}:events`;
      const lag = async () => {
        const groups = (await redis.xinfo('GROUPS', key)) as unknown[][];
        const g = groups.map((f) => Object.fromEntries(f.flatMap((v, i) => (i % 2 ? [] : [[v, f[i + 1]]])))).find((x) => x.name === 'webhook-dispatcher');
        return Number(g?.lag ?? -1);
      };
      await waitFor(async () => (await lag()) === 0, 60000, 'the reader past the backlog while no row can be written');
      fresh = await stream(quiet.id, 'message.received', 20, 50);
      await waitFor(async () => (await lag()) === 0, 60000, 'the quiet organization\'s events read while no row can be written');
      // not one row of the backlog was written on the reader's way, and no call was made without its row
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1`, [hungHook]);
      expect(n).toBeLessThanOrEqual(first.length);
      expect(fast.at('/fast')).toHaveLength(0);
    } finally {
      await lock.commitTransaction();
      await lock.release();
    }
    await waitFor(() => arrived(fast, '/fast', fresh), 60000, 'the quiet organization\'s events once rows can be written');

    // counting: nothing lost once PostgreSQL writes again, nothing duplicated at the quiet receiver
    const rowsOf = async (hook: string) => {
      const [row] = await db.query(`SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS events FROM deliveries WHERE webhook_id = $1`, [hook]);
      return row as { n: number; events: number };
    };
    await waitFor(async () => (await rowsOf(hungHook)).events === first.length + backlog.length, 60000, 'a delivery row for every backlog event');
    expect((await rowsOf(hungHook)).n).toBe(first.length + backlog.length);
    await waitFor(async () => (await deliveriesOf(db, quietHook)).filter((d) => d.status === 'delivered').length === fresh.length, 30000, 'quiet deliveries recorded');
    expect(fast.at('/fast').map((r) => String(r.headers['x-webhook-request-id'])).sort()).toEqual(fresh.map((e) => e.id).sort());
    // the backlog streams are gone once drained
    await waitFor(async () => (await redis.keys(`${process.env.REDIS_KEY_PREFIX}:events:backlog*`)).length === 0, 30000, 'the backlog streams removed once drained');
  }, 180_000);

  it('keeps a down webhook\'s backlog parked while its breaker is open (a few attempts per cooldown, not the backlog each time) and sends it once a probe succeeds', async () => {
    const org: SeededOrg = await seedOrganization('Open park');
    const down = await receiver();
    let failing = true;
    down.respondWith(() => (failing ? { status: 503, body: 'down' } : { status: 200 }));
    const hook = await createWebhookRow(db, null, { organizationId: org.id, url: `${down.url}/down`, retryPolicy: { policy: 'constant', delaySeconds: 20, attempts: 100 } });
    await dispatcher({ WEBHOOK_BREAKER_FAILURES: '3', WEBHOOK_BREAKER_COOLDOWN_MS: '500' });
    const COUNT = 400;
    const events = Array.from({ length: COUNT }, (_, i) => buildOpaque(publisher, { event: 'presence.update', organizationId: org.id, sessionId: null, payload: { i } }));
    await publisher.publishEnvelopes(events);
    // the breaker opened and the backlog was turned away behind it: every delivery has its row, none in flight
    await waitFor(async () => {
      const rows = await deliveriesOf(db, hook);
      return rows.length === COUNT && rows.every((r) => r.status === 'pending');
    }, 60000, 'the backlog handed back by the open breaker');
    const probes = () => down.at('/down').length;
    let posts = probes();
    await waitFor(() => probes() > posts, 60000, 'a probe');
    // from here, over six more probes (each an open period, at least a cooldown, after the one before): which rows of
    // the backlog were taken and handed back again (a claim and a hand-back each write the row)
    const [{ t0 }] = await db.query(`SELECT now() AS t0`);
    posts = probes();
    await waitFor(() => probes() >= posts + 6, 60000, 'six more probes');
    const [{ n: touched }] = await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND updated_at > $2`, [hook, t0]);
    console.log(`open breaker, ${COUNT} deliveries behind it: ${touched} of them taken again over ${probes() - posts} probes`);
    // the backlog waits in BullMQ's delayed set: not taken, claimed and handed back again every cooldown
    expect(touched).toBeLessThan(COUNT / 2);

    // the receiver answers again: the next probe closes the breaker and every delivery goes out
    failing = false;
    await waitFor(async () => {
      const rows = await deliveriesOf(db, hook);
      return rows.length === COUNT && rows.every((r) => r.status === 'delivered');
    }, 90000, 'every delivery delivered after the receiver answered again');
    expect(new Set(down.at('/down').map((r) => String(r.headers['x-webhook-request-id'])))).toEqual(new Set(events.map((e) => e.id)));
  }, 240_000);

  it('opens the breaker of a failing webhook, disables it with a webhook.disabled event, and resumes its pending deliveries when re-enabled', async () => {
    api = await startApi();
    const org: SeededOrg = await seedOrganization('Breaker');
    const down = await receiver();
    const watch = await receiver();
    let failing = true;
    down.respondWith(() => (failing ? { status: 503, body: 'maintenance' } : { status: 200 }));
    const create = async (body: object) => {
      const res = await api!.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).send(body);
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const downHook = await create({ url: `${down.url}/down`, events: ['presence.update'], retryPolicy: { policy: 'constant', delaySeconds: 1, attempts: 30 } });
    await create({ url: `${watch.url}/watch`, events: ['webhook.disabled'] });
    const d = await dispatcher({ WEBHOOK_BREAKER_FAILURES: '3', WEBHOOK_BREAKER_COOLDOWN_MS: '500', WEBHOOK_DISABLE_AFTER_MS: '3000' });

    const events = Array.from({ length: 20 }, (_, i) => buildOpaque(publisher, { event: 'presence.update', organizationId: org.id, sessionId: null, payload: { i } }));
    await publisher.publishEnvelopes(events);

    // the organization's other webhook hears of it
    const [notice] = await waitFor(() => (watch.at('/watch').length ? watch.at('/watch') : undefined), 30000, 'webhook.disabled event');
    const envelope = JSON.parse(notice.rawBody.toString());
    expect(envelope).toMatchObject({
      event: 'webhook.disabled',
      organizationId: org.id,
      sessionId: null,
      payload: { webhookId: downHook, url: `${down.url}/down`, reason: expect.stringMatching(/^failing continuously since .* \(last: receiver answered 503\)$/) },
    });
    expect(envelope.payload.disabledAt - envelope.payload.failingSince).toBeGreaterThanOrEqual(3000);

    // the API shows it
    const view = await api.http().get(`/api/v1/webhooks/${downHook}`).set(bearer(org.adminKey));
    expect(view.body).toMatchObject({ active: false, disabledAt: envelope.payload.disabledAt, disabledReason: envelope.payload.reason });

    // while it failed, the breaker handed attempts back rather than POSTing them on the retry policy's schedule
    const metrics = await (await fetch(`${d.opsUrl}/metrics`)).text();
    expect(Number(/webhook_deliveries_total\{[^}]*outcome="postponed"[^}]*\} (\d+)/.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);

    // nothing is dead and nothing is in flight: every undelivered delivery is parked, pending
    const parked = await waitFor(async () => {
      const rows = await deliveriesOf(db, downHook);
      return rows.length === 20 && rows.every((r) => r.status === 'pending') && rows;
    }, 20000, 'deliveries parked');
    expect(parked).toHaveLength(20);
    // every POST made has its attempt row, and no attempt row lacks its POST
    const [attempts] = await db.query(`SELECT count(*)::int AS n FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1`, [downHook]);
    expect(attempts.n).toBe(down.at('/down').length);

    // re-enabled, with the receiver back: every pending delivery goes out
    failing = false;
    const res = await api.http().patch(`/api/v1/webhooks/${downHook}`).set(bearer(org.adminKey)).send({ active: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ active: true, disabledAt: null, disabledReason: null });
    await waitFor(async () => (await deliveriesOf(db, downHook)).every((r) => r.status === 'delivered'), 30000, 'pending deliveries delivered after re-enabling');
    expect(down.distinctIds('/down')).toEqual(new Set(events.map((e) => e.id)));
  }, 120_000);
});
