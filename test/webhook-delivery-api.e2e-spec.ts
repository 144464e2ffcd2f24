import { createHmac } from 'node:crypto';
import { startApi } from './support/api-app';
import { waitFor } from './support/processes';
import { Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg } from './support/seed';

/** CONTRACT 4: the delivery log, replay and test sends, through the API, with a real dispatcher. */
describe('webhook deliveries API', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let dispatcher: Awaited<ReturnType<typeof startDispatcherProcess>>;
  let receiver: Receiver;
  let acme: SeededOrg;
  let globex: SeededOrg;
  let flaky: string;
  let bystander: string;
  let failNext = true;

  beforeAll(async () => {
    api = await startApi();
    acme = await seedOrganization('Acme');
    globex = await seedOrganization('Globex');
    receiver = await startReceiver();
    receiver.respondWith((req) => {
      if (req.path === '/flaky' && failNext) return { status: 500, body: 'down for maintenance' };
      return { status: 204 };
    });
    const create = async (body: object) => {
      const res = await api.http().post('/api/v1/webhooks').set(bearer(acme.adminKey)).send(body);
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    flaky = await create({ url: `${receiver.url}/flaky`, events: [], secret: 'shh', retryPolicy: { policy: 'constant', delaySeconds: 1, attempts: 1 } });
    bystander = await create({ url: `${receiver.url}/bystander`, events: ['*'] });
    dispatcher = await startDispatcherProcess();
  });

  afterAll(async () => {
    await dispatcher?.stop();
    await receiver?.close();
    await api?.app.close();
    await closeTestDataSource();
  });

  const http = () => api.http();
  const adminOf = (org: SeededOrg) => bearer(org.adminKey);
  let deadDeliveryId: string;
  let testEventId: string;

  it('POST :test sends a webhook.test event to that webhook only, even with an empty events list', async () => {
    const res = await http().post(`/api/v1/webhooks/${flaky}:test`).set(adminOf(acme));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ eventId: expect.stringMatching(/^evt_/), deliveryId: expect.stringMatching(/^dlv_/) });
    testEventId = res.body.eventId;
    deadDeliveryId = res.body.deliveryId;
    const [req] = await waitFor(() => (receiver.at('/flaky').length ? receiver.at('/flaky') : undefined), 10000, 'test delivery');
    expect(req.headers['x-webhook-request-id']).toBe(testEventId);
    expect(JSON.parse(req.rawBody.toString())).toMatchObject({ event: 'webhook.test', organizationId: acme.id, payload: { webhookId: flaky } });
    // it failed once and the policy allows one attempt: dead
    const detail = await waitFor(async () => {
      const r = await http().get(`/api/v1/webhooks/${flaky}/deliveries/${deadDeliveryId}`).set(adminOf(acme));
      return r.body.status === 'dead' && r.body;
    }, 10000, 'dead delivery');
    expect(detail).toMatchObject({
      id: deadDeliveryId,
      webhookId: flaky,
      eventId: testEventId,
      event: 'webhook.test',
      status: 'dead',
      attempts: 1,
      lastStatusCode: 500,
      lastError: 'receiver answered 500',
      deliveredAt: null,
      nextAttemptAt: null,
    });
    expect(detail.attemptList).toEqual([
      { attemptNo: 1, statusCode: 500, durationMs: expect.any(Number), error: 'receiver answered 500', responseSnippet: 'down for maintenance', startedAt: expect.any(Number) },
    ]);
    const marker = await http().post(`/api/v1/webhooks/${bystander}:test`).set(adminOf(acme));
    await waitFor(() => receiver.distinctIds('/bystander').has(marker.body.eventId), 10000, 'bystander test');
    // the other webhook of the organization, selecting every type, never saw the first test event
    expect(receiver.distinctIds('/bystander').has(testEventId)).toBe(false);
  });

  it('replays a dead delivery with the same request id, a fresh timestamp and signature, and a fresh budget', async () => {
    failNext = false;
    const [first] = receiver.at('/flaky');
    await new Promise((r) => setTimeout(r, 5)); // a different millisecond for the fresh timestamp
    const res = await http().post(`/api/v1/webhooks/${flaky}/deliveries/${deadDeliveryId}:replay`).set(adminOf(acme));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: deadDeliveryId, status: 'pending', attempts: 1 });
    const again = await waitFor(() => (receiver.at('/flaky').length >= 2 ? receiver.at('/flaky')[1] : undefined), 10000, 'replayed POST');
    expect(again.headers['x-webhook-request-id']).toBe(testEventId);
    expect(Number(again.headers['x-webhook-timestamp'])).toBeGreaterThan(Number(first.headers['x-webhook-timestamp']));
    expect(again.headers['x-webhook-hmac']).toBe(createHmac('sha512', 'shh').update(again.rawBody).digest('hex'));
    const detail = await waitFor(async () => {
      const r = await http().get(`/api/v1/webhooks/${flaky}/deliveries/${deadDeliveryId}`).set(adminOf(acme));
      return r.body.status === 'delivered' && r.body;
    }, 10000, 'delivered after replay');
    expect(detail).toMatchObject({ attempts: 2, lastStatusCode: 204, lastError: null, deliveredAt: expect.any(Number) });
    expect(detail.attemptList.map((a: { attemptNo: number; statusCode: number }) => [a.attemptNo, a.statusCode])).toEqual([
      [1, 500],
      [2, 204],
    ]);
  });

  it('lists deliveries newest first, paginated, filtered by status', async () => {
    for (let i = 0; i < 2; i++) await http().post(`/api/v1/webhooks/${flaky}:test`).set(adminOf(acme)).expect(202);
    await waitFor(async () => {
      const r = await http().get(`/api/v1/webhooks/${flaky}/deliveries?status=delivered`).set(adminOf(acme));
      return r.body.data?.length === 3;
    }, 10000, 'three delivered');
    const page1 = await http().get(`/api/v1/webhooks/${flaky}/deliveries?limit=2`).set(adminOf(acme));
    expect(page1.status).toBe(200);
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.nextCursor).toBe(page1.body.data[1].id);
    const page2 = await http().get(`/api/v1/webhooks/${flaky}/deliveries?limit=2&cursor=${page1.body.nextCursor}`).set(adminOf(acme));
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: deadDeliveryId })], nextCursor: null });
    const ids = [...page1.body.data, ...page2.body.data].map((d: { id: string }) => d.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(Object.keys(page1.body.data[0]).sort()).toEqual(
      ['attempts', 'createdAt', 'deliveredAt', 'event', 'eventId', 'id', 'lastError', 'lastStatusCode', 'nextAttemptAt', 'status', 'updatedAt', 'webhookId'].sort(),
    );
    const dead = await http().get(`/api/v1/webhooks/${flaky}/deliveries?status=dead`).set(adminOf(acme));
    expect(dead.body).toEqual({ data: [], nextCursor: null });
    const bad = await http().get(`/api/v1/webhooks/${flaky}/deliveries?status=lost`).set(adminOf(acme));
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('validation_error');
  });

  it('refuses to replay a delivery still in progress', async () => {
    failNext = true;
    // a receiver that is down and a long retry delay keep the delivery pending
    const slow = await http()
      .post('/api/v1/webhooks')
      .set(adminOf(acme))
      .send({ url: `${receiver.url}/flaky`, events: [], retryPolicy: { policy: 'constant', delaySeconds: 60, attempts: 2 } });
    const t = await http().post(`/api/v1/webhooks/${slow.body.id}:test`).set(adminOf(acme)).expect(202);
    await waitFor(async () => {
      const r = await http().get(`/api/v1/webhooks/${slow.body.id}/deliveries/${t.body.deliveryId}`).set(adminOf(acme));
      return r.body.attempts === 1 && r.body.status === 'pending' && r.body;
    }, 10000, 'pending retry');
    const replay = await http().post(`/api/v1/webhooks/${slow.body.id}/deliveries/${t.body.deliveryId}:replay`).set(adminOf(acme));
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('conflict');
  });

  it('scopes everything to the caller organization and requires webhooks:manage', async () => {
    const paths = [
      ['get', `/api/v1/webhooks/${flaky}/deliveries`],
      ['get', `/api/v1/webhooks/${flaky}/deliveries/${deadDeliveryId}`],
      ['post', `/api/v1/webhooks/${flaky}/deliveries/${deadDeliveryId}:replay`],
      ['post', `/api/v1/webhooks/${flaky}:test`],
    ] as const;
    const member = acme.users.member.token;
    for (const [method, path] of paths) {
      const foreign = await http()[method](path).set(adminOf(globex));
      expect([path, foreign.status, foreign.body.error?.code]).toEqual([path, 404, 'not_found']);
      const forbidden = await http()[method](path).set(bearer(member));
      expect([path, forbidden.status, forbidden.body.error?.code]).toEqual([path, 403, 'forbidden']);
      const anonymous = await http()[method](path);
      expect([path, anonymous.status]).toEqual([path, 401]);
    }
    const unknown = await http().get(`/api/v1/webhooks/${flaky}/deliveries/dlv_unknown`).set(adminOf(acme));
    expect(unknown.status).toBe(404);
  });
});
