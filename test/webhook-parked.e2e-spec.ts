import IORedis, { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import type { EventEnvelope } from '@app/contracts';
import { EventPublisher } from '@app/events';
import { startApi } from './support/api-app';
import { AppProcess, waitFor } from './support/processes';
import { deliveriesOf, Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, testDataSource, testDb } from './support/seed';
import { buildOpaque } from './support/opaque-event';

/**
 * Issue 37.3: events published while a webhook is switched off (by its user, or by the dispatchers after it failed
 * continuously) are recorded as parked deliveries and sent once it is re-enabled, each exactly once; re-enabling makes
 * every pending delivery due at once, including retries waiting for a far due time. Real dispatcher process, API,
 * HTTP receiver, PostgreSQL and Redis.
 */
describe('webhook deliveries parked while the webhook is switched off', () => {
  let db: DataSource;
  let redis: Redis;
  let publisher: EventPublisher;
  let api: Awaited<ReturnType<typeof startApi>>;
  let receiver: Receiver;
  let dispatcher: AppProcess | null = null;

  beforeAll(async () => {
    db = await testDataSource();
    redis = new IORedis(process.env.REDIS_URL!);
    publisher = new EventPublisher(await testDb(), redis, process.env.REDIS_KEY_PREFIX!);
    api = await startApi();
    receiver = await startReceiver();
  }, 120_000);

  afterEach(async () => {
    await dispatcher?.stop();
    dispatcher = null;
  });

  afterAll(async () => {
    await receiver?.close();
    await api?.app.close();
    await redis?.quit();
    await closeTestDataSource();
  });

  const createHook = async (org: SeededOrg, path: string, body: object = {}) => {
    const res = await api.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).send({ url: `${receiver.url}${path}`, events: ['presence.update'], ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const patch = async (org: SeededOrg, id: string, body: object) => {
    const res = await api.http().patch(`/api/v1/webhooks/${id}`).set(bearer(org.adminKey)).send(body);
    expect(res.status).toBe(200);
    return res.body as { active: boolean; disabledAt: number | null };
  };
  const publish = async (org: SeededOrg, count: number): Promise<EventEnvelope[]> => {
    const events = Array.from({ length: count }, (_, i) => buildOpaque(publisher, { event: 'presence.update', organizationId: org.id, sessionId: null, payload: { i } }));
    await publisher.publishEnvelopes(events);
    return events;
  };
  /** The API's delivery log of a webhook, every page. */
  const log = async (org: SeededOrg, id: string) => {
    const all: { eventId: string; status: string; attempts: number; nextAttemptAt: number | null; lastError: string | null }[] = [];
    let cursor: string | undefined;
    do {
      const res = await api.http().get(`/api/v1/webhooks/${id}/deliveries`).query({ limit: 100, ...(cursor ? { cursor } : {}) }).set(bearer(org.adminKey));
      expect(res.status).toBe(200);
      all.push(...res.body.data);
      cursor = res.body.nextCursor ?? undefined;
    } while (cursor);
    return all;
  };
  /** POSTs per request id at `path`. */
  const postsPerEvent = (path: string) => {
    const n = new Map<string, number>();
    for (const req of receiver.at(path)) {
      const id = String(req.headers['x-webhook-request-id']);
      n.set(id, (n.get(id) ?? 0) + 1);
    }
    return n;
  };
  /** Waits until every one of these events has a parked row in the log, and checks their shape there. */
  const expectParked = async (org: SeededOrg, id: string, events: EventEnvelope[]) => {
    const ids = new Set(events.map((e) => e.id));
    const parked = await waitFor(async () => {
      const rows = (await log(org, id)).filter((d) => ids.has(d.eventId));
      return rows.length === events.length ? rows : undefined;
    }, 30000, 'parked deliveries');
    for (const row of parked) {
      expect(row).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: null, lastError: expect.stringContaining('parked') });
    }
  };

  it('records 60 events published while a user switched the webhook off, and delivers each exactly once after PATCH active:true', async () => {
    const org = await seedOrganization('Parked by hand');
    const hook = await createHook(org, '/paused');
    dispatcher = await startDispatcherProcess();
    const before = await publish(org, 1);
    await waitFor(() => receiver.distinctIds('/paused').has(before[0].id), 20000, 'delivery while active');

    await patch(org, hook, { active: false });
    const during = await publish(org, 60);
    await expectParked(org, hook, during);
    // a marker to another, active webhook of the organization, published after them: the fan-out is past the 60
    await createHook(org, '/marker');
    const [marker] = await publish(org, 1);
    await waitFor(() => receiver.distinctIds('/marker').has(marker.id), 20000, 'marker delivered');
    expect(receiver.at('/paused')).toHaveLength(1);

    await patch(org, hook, { active: true });
    await waitFor(() => during.every((e) => receiver.distinctIds('/paused').has(e.id)), 30000, 'parked deliveries sent after re-enabling');
    await waitFor(async () => (await deliveriesOf(db, hook)).every((d) => d.status === 'delivered'), 20000, 'parked deliveries recorded delivered');
    const posts = postsPerEvent('/paused');
    // 0 lost, 0 duplicated
    expect(during.filter((e) => posts.get(e.id) !== 1)).toEqual([]);
    // the one before, the 60 and the marker
    expect(await deliveriesOf(db, hook)).toHaveLength(62);
  }, 120_000);

  it('parks the events of a webhook the dispatchers disabled, and on re-enabling sends them and its retries waiting for a far due time at once', async () => {
    const org = await seedOrganization('Parked by breaker');
    let failing = true;
    receiver.respondWith((req) => (req.path.startsWith('/down') && failing ? { status: 503, body: 'maintenance' } : { status: 200 }));
    // a retry waits 10 minutes: only re-enabling can make the failed ones go within this test
    const hook = await createHook(org, '/down', { retryPolicy: { policy: 'constant', delaySeconds: 600, attempts: 5 } });
    dispatcher = await startDispatcherProcess({ WEBHOOK_BREAKER_FAILURES: '3', WEBHOOK_BREAKER_COOLDOWN_MS: '500', WEBHOOK_DISABLE_AFTER_MS: '2000' });

    // a trickle of events fails until the dispatchers switch the webhook off
    const failed: EventEnvelope[] = [];
    await waitFor(async () => {
      failed.push(...(await publish(org, 1)));
      const view = await api.http().get(`/api/v1/webhooks/${hook}`).set(bearer(org.adminKey));
      return view.body.active === false && view.body.disabledAt !== null;
    }, 60000, 'webhook disabled by the dispatchers');
    failing = false;

    const during = await publish(org, 60);
    await expectParked(org, hook, during);
    const postedWhileDisabled = receiver.at('/down').filter((r) => during.some((e) => e.id === r.headers['x-webhook-request-id']));
    expect(postedWhileDisabled).toHaveLength(0);

    const view = await patch(org, hook, { active: true });
    expect(view).toMatchObject({ active: true, disabledAt: null });
    // every pending delivery is due now (the API shows it), then goes out
    const pending = (await log(org, hook)).filter((d) => d.status === 'pending');
    expect(pending.filter((d) => d.nextAttemptAt === null || d.nextAttemptAt > Date.now())).toEqual([]);
    const all = [...failed, ...during];
    await waitFor(async () => (await deliveriesOf(db, hook)).every((d) => d.status === 'delivered'), 60000, 'every delivery delivered after re-enabling');
    expect(await deliveriesOf(db, hook)).toHaveLength(all.length);
    const posts = postsPerEvent('/down');
    expect(all.filter((e) => !posts.has(e.id))).toEqual([]);
    // the 60 published while it was off: exactly one POST each
    expect(during.filter((e) => posts.get(e.id) !== 1)).toEqual([]);
  }, 180_000);
});
