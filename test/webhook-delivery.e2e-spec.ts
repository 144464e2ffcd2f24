import { createHmac } from 'node:crypto';
import IORedis, { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { EventType } from '@app/contracts';
import { EventPublisher } from '@app/events';
import { freePort, waitFor } from './support/processes';
import {
  attemptsOf,
  createSessionRow,
  createTestCa,
  createWebhookRow,
  deliveriesOf,
  notFannedOut,
  Receiver,
  startDispatcherProcess,
  startReceiver,
} from './support/receivers';
import { closeTestDataSource, seedOrganization, testDataSource, testDb } from './support/seed';
import { opaqueEvent } from './support/opaque-event';

/**
 * Webhook delivery as a receiver sees it (seed 4.7, CONTRACT 7): a real dispatcher process, a real
 * HTTPS receiver trusted through WEBHOOK_CA_FILE, and a plain HTTP one.
 */
describe('webhook delivery', () => {
  let db: DataSource;
  let redis: Redis;
  let publisher: EventPublisher;
  let tlsReceiver: Receiver;
  let plain: Receiver;
  let dispatcher: Awaited<ReturnType<typeof startDispatcherProcess>>;
  let refusedPort: number;
  let lateReceiver: Receiver | null = null;
  const w: Record<string, string> = {};
  let orgId: string;
  let sessionA: string;
  let sessionB: string;

  const publish = (event: EventType, payload: object = { n: 1 }, sessionId: string | null = sessionA) =>
    publisher.publish(opaqueEvent({ event, organizationId: orgId, sessionId, payload }));

  beforeAll(async () => {
    db = await testDataSource();
    redis = new IORedis(process.env.REDIS_URL!);
    publisher = new EventPublisher(await testDb(), redis, process.env.REDIS_KEY_PREFIX!);
    const ca = await createTestCa();
    tlsReceiver = await startReceiver({ key: ca.serverKey, cert: ca.serverCert });
    plain = await startReceiver();
    plain.respondWith((req) => {
      if (req.path.startsWith('/always-500')) return { status: 500, body: 'nope' };
      if (req.path.startsWith('/redirect')) return { status: 302, headers: { location: '/elsewhere' } };
      return { status: 200 };
    });
    refusedPort = await freePort();

    const org = await seedOrganization('Deliveries');
    orgId = org.id;
    sessionA = await createSessionRow(db, orgId);
    sessionB = await createSessionRow(db, orgId);
    const other = await seedOrganization('Elsewhere');
    const quick = { policy: 'constant' as const, delaySeconds: 1, attempts: 3 };

    w.signed = await createWebhookRow(db, null, {
      organizationId: orgId,
      url: `${tlsReceiver.url}/signed`,
      events: ['message.received'],
      secret: 'top-secret-key',
      customHeaders: {
        'X-Tenant': 'acme',
        'content-type': 'text/plain',
        'x-webhook-request-id': 'forged',
        'X-Webhook-Hmac': 'forged',
        'X-WEBHOOK-TIMESTAMP': '1',
      },
    });
    w.unsigned = await createWebhookRow(db, null, { organizationId: orgId, url: `${plain.url}/unsigned`, events: ['*'] });
    w.inactive = await createWebhookRow(db, null, { organizationId: orgId, url: `${plain.url}/inactive`, active: false });
    w.none = await createWebhookRow(db, null, { organizationId: orgId, url: `${plain.url}/none`, events: [] });
    w.scoped = await createWebhookRow(db, null, { organizationId: orgId, url: `${plain.url}/scoped`, sessionId: sessionB });
    w.foreign = await createWebhookRow(db, null, { organizationId: other.id, url: `${plain.url}/foreign` });
    w.exponential = await createWebhookRow(db, null, {
      organizationId: orgId, url: `${plain.url}/always-500/exp`, events: ['poll.vote'], retryPolicy: { policy: 'exponential', delaySeconds: 2, attempts: 4 },
    });
    w.linear = await createWebhookRow(db, null, {
      organizationId: orgId, url: `${plain.url}/always-500/lin`, events: ['poll.vote'], retryPolicy: { policy: 'linear', delaySeconds: 2, attempts: 4 },
    });
    w.constant = await createWebhookRow(db, null, {
      organizationId: orgId, url: `${plain.url}/always-500/con`, events: ['poll.vote'], retryPolicy: { policy: 'constant', delaySeconds: 1, attempts: 4 },
    });
    w.redirect = await createWebhookRow(db, null, { organizationId: orgId, url: `${plain.url}/redirect`, events: ['call.incoming'], retryPolicy: quick });
    w.refused = await createWebhookRow(db, null, {
      organizationId: orgId, url: `http://127.0.0.1:${refusedPort}/late`, events: ['presence.update'], retryPolicy: { policy: 'constant', delaySeconds: 1, attempts: 10 },
    });

    dispatcher = await startDispatcherProcess({ WEBHOOK_CA_FILE: ca.caFile });
  });

  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all([tlsReceiver?.close(), plain?.close(), lateReceiver?.close()]);
    await redis.quit();
    await closeTestDataSource();
  });

  it('POSTs the envelope over HTTPS with the seed 4.7 headers, signed over the exact bytes received', async () => {
    // characters an array literal or JSON must escape: the outbox and the wire keep them as published
    const payload = { from: '4917600000000@s.whatsapp.net', text: 'héllo 👋 "quoted", {braced} back\\slash\nnext line', note: 'NULL' };
    const envelope = await publish('message.received', payload);
    const [outbox] = await db.query(`SELECT envelope FROM events WHERE id = $1`, [envelope.id]);
    expect(outbox.envelope).toEqual(envelope);
    const [req] = await waitFor(() => (tlsReceiver.at('/signed').length ? tlsReceiver.at('/signed') : undefined), 10000, 'signed delivery');
    expect(req.headers['x-webhook-request-id']).toBe(envelope.id);
    expect(Number(req.headers['x-webhook-timestamp'])).toBeGreaterThanOrEqual(envelope.timestamp);
    expect(req.headers['x-webhook-hmac-algorithm']).toBe('sha512');
    expect(req.headers['x-webhook-hmac']).toBe(createHmac('sha512', 'top-secret-key').update(req.rawBody).digest('hex'));
    expect(req.headers['content-type']).toBe('application/json');
    // customHeaders are added but cannot override the protocol headers, whatever their case
    expect(req.headers['x-tenant']).toBe('acme');
    expect(JSON.parse(req.rawBody.toString('utf8'))).toEqual({
      id: envelope.id,
      event: 'message.received',
      organizationId: orgId,
      sessionId: sessionA,
      timestamp: envelope.timestamp,
      payload,
    });
    const [delivery] = await waitFor(async () => {
      const rows = await deliveriesOf(db, w.signed);
      return rows[0]?.status === 'delivered' ? rows : undefined;
    });
    expect(delivery).toMatchObject({ event_id: envelope.id, attempts: 1, last_status_code: 200, last_error: null });
  });

  it('sends no signature without a secret, and only to the webhooks that match', async () => {
    const inA = await publish('session.connected', {}, sessionA);
    const inB = await publish('session.connected', {}, sessionB);
    await waitFor(() => plain.distinctIds('/unsigned').has(inA.id) && plain.distinctIds('/unsigned').has(inB.id), 10000, 'matching deliveries');
    const [unsigned] = plain.at('/unsigned');
    expect(unsigned.headers['x-webhook-hmac']).toBeUndefined();
    expect(unsigned.headers['x-webhook-hmac-algorithm']).toBeUndefined();
    // the sessionId-scoped webhook got its session's event only
    await waitFor(() => plain.distinctIds('/scoped').size, 10000, 'scoped delivery');
    expect([...plain.distinctIds('/scoped')]).toEqual([inB.id]);
    // the signed webhook selects message.received only
    expect(tlsReceiver.distinctIds('/signed').has(inA.id)).toBe(false);
    // a marker event, fanned out after the others, proves nothing else is still on its way
    const marker = await publish('message.ack', {}, sessionA);
    await waitFor(() => plain.distinctIds('/unsigned').has(marker.id), 10000, 'marker');
    await waitFor(async () => (await notFannedOut(db, [marker.id])) === 0);
    expect([...plain.distinctIds('/scoped')]).toEqual([inB.id]);
    expect(plain.at('/inactive')).toHaveLength(0);
    expect(plain.at('/none')).toHaveLength(0);
    expect(plain.at('/foreign')).toHaveLength(0);
    // a switched-off webhook gets no POST; its deliveries are recorded parked, for when it is re-enabled (issue 37)
    const parked = await deliveriesOf(db, w.inactive);
    expect(parked.length).toBeGreaterThan(0);
    expect(parked.filter((d) => d.status !== 'pending' || d.attempts !== 0)).toEqual([]);
    expect(await deliveriesOf(db, w.none)).toHaveLength(0);
    expect(await deliveriesOf(db, w.foreign)).toHaveLength(0);
  });

  it('retries per policy with the same request id, spacing attempts as the policy says, then gives up after exactly `attempts`', async () => {
    const envelope = await publish('poll.vote', { option: 'a' });
    const dead = async (webhookId: string) => {
      const [d] = await deliveriesOf(db, webhookId);
      return d?.status === 'dead' ? d : undefined;
    };
    const [exp, lin, con] = await Promise.all([
      waitFor(() => dead(w.exponential), 40000, 'exponential dead'),
      waitFor(() => dead(w.linear), 40000, 'linear dead'),
      waitFor(() => dead(w.constant), 40000, 'constant dead'),
    ]);
    const gaps = async (deliveryId: string) => {
      const attempts = await attemptsOf(db, deliveryId);
      expect(attempts.map((a) => a.attempt_no)).toEqual([1, 2, 3, 4]);
      expect(attempts.every((a) => a.status_code === 500)).toBe(true);
      const t = attempts.map((a) => a.started_at.getTime());
      return [t[1] - t[0], t[2] - t[1], t[3] - t[2]];
    };
    // each gap between attempt starts lies within the policy's bounds: never earlier than its delay, and later by
    // at most the scheduling slack (delayed job pick-up on a loaded machine). The delays are chosen so that the
    // bounds of two policies never overlap where they differ: exponential 2 4 8 s, linear 2 4 6 s, constant 1 1 1 s
    const SLACK_MS = 1900;
    const within = (gap: number, delayMs: number) => gap >= delayMs - 20 && gap <= delayMs + SLACK_MS;
    const check = async (deliveryId: string, delays: number[]) => {
      const measured = await gaps(deliveryId);
      expect({ measured, within: measured.map((g, i) => within(g, delays[i])) }).toEqual({ measured, within: [true, true, true] });
    };
    await check(exp.id, [2000, 4000, 8000]);
    await check(lin.id, [2000, 4000, 6000]);
    await check(con.id, [1000, 1000, 1000]);
    for (const d of [exp, lin, con]) {
      expect(d).toMatchObject({ attempts: 4, last_status_code: 500, last_error: 'receiver answered 500' });
    }
    const ids = plain.at('/always-500').map((r) => r.headers['x-webhook-request-id']);
    expect(ids).toHaveLength(12);
    expect(new Set(ids)).toEqual(new Set([envelope.id]));
  }, 60000);

  it('treats a redirect as a failure and does not follow it', async () => {
    await publish('call.incoming', { from: 'x' });
    const [d] = await waitFor(async () => {
      const rows = await deliveriesOf(db, w.redirect);
      return rows[0]?.status === 'dead' ? rows : undefined;
    }, 15000, 'redirect dead');
    expect(d).toMatchObject({ attempts: 3, last_status_code: 302 });
    expect(plain.at('/elsewhere')).toHaveLength(0);
  });

  it('retries a refused connection until the receiver comes up', async () => {
    const envelope = await publish('presence.update', { state: 'typing' });
    // waiting for its retry: a row claimed for an attempt is `delivering` with `attempts` already counting it, so
    // `attempts >= 1` alone also matched the first attempt in flight (seen on a loaded machine)
    const [d] = await waitFor(async () => {
      const rows = await deliveriesOf(db, w.refused);
      return rows[0]?.attempts >= 1 && rows[0].status === 'pending' ? rows : undefined;
    }, 10000, 'first refused attempt');
    expect(d.status).toBe('pending');
    expect(d.last_status_code).toBeNull();
    expect(d.last_error).toMatch(/ECONNREFUSED/);
    lateReceiver = await startReceiver(undefined, refusedPort);
    await waitFor(async () => (await deliveriesOf(db, w.refused))[0]?.status === 'delivered', 15000, 'delivered after refusal');
    expect([...lateReceiver.distinctIds('/late')]).toEqual([envelope.id]);
  });

  it('exposes delivery metrics', async () => {
    const text = await (await fetch(`${dispatcher.opsUrl}/metrics`)).text();
    expect(text).toMatch(/gw_webhook_deliveries_total\{[^}]*outcome="delivered"[^}]*\} [1-9]/);
    expect(text).toMatch(/gw_webhook_deliveries_total\{[^}]*outcome="dead"[^}]*\} [1-9]/);
    expect(text).toMatch(/gw_webhook_deliveries_total\{[^}]*outcome="retry"[^}]*\} [1-9]/);
    expect(text).toContain('gw_webhook_attempt_duration_seconds_bucket');
    expect(text).toContain('gw_webhook_event_to_delivery_seconds_bucket');
    expect(text).toMatch(/gw_webhook_delivery_queue_depth\{[^}]*state="delayed"/);
    expect(text).toMatch(/gw_webhook_dead_deliveries\{[^}]*\} \d+/);
  });
});
