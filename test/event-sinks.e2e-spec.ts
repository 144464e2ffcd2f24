import { isolateFleet } from './support/fleet-harness';

// a database and Redis namespace of this file's own: the reconciler fans out every outbox event of its database, and
// the run's shared outbox holds the other files' events
const isolated = isolateFleet('event-sinks');

import type { NestExpressApplication } from '@nestjs/platform-express';
import IORedis, { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import type { EventEnvelope } from '@app/contracts';
import { EventPublisher } from '@app/events';
import { startApi } from './support/api-app';
import { jetStreamTap, natsServerBinary, PrivateNats, PrivateRabbit, RABBITMQ, rabbitmqBinDir, rabbitTap } from './support/brokers';
import { PrivateRedis } from './support/private-services';
import { pairSession } from './support/engine';
import { AppProcess, assertRunning, startSimGateway, waitFor } from './support/processes';
import { createWebhookRow, deliveriesOf, Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource, testDb } from './support/seed';
import { buildOpaque, opaqueEvent } from './support/opaque-event';
import { TcpOutage } from './support/tcp-outage';
import { createServer, type AddressInfo } from 'node:net';
import { newId } from '@app/database';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the API
type Json = any;

/**
 * CONTRACT 15 against the real brokers: a private RabbitMQ node this file stops and starts through its service control
 * (`rabbitmqctl stop_app / start_app`; when RabbitMQ is not installed here, the shared 5672 behind a TCP relay the file
 * cuts, since the shared broker may not be stopped), a private nats-server it kills and restarts (the shared 4222
 * without the kill when the binary is missing), and a private Redis it restarts empty. Exchange, queue and stream names
 * are unique per run and deleted.
 */
describe('event sinks: RabbitMQ and NATS JetStream beside webhooks', () => {
  const run = `sinks-${process.pid}-${Date.now().toString(36)}`;
  const streamName = run.replace(/[^A-Za-z0-9]/g, '_').toUpperCase();
  let db: DataSource;
  let redis: Redis;
  let publisher: EventPublisher;
  let app: NestExpressApplication;
  let http: () => ReturnType<Awaited<ReturnType<typeof startApi>>['http']>;
  let sim: AppProcess;
  let simUrl: string;
  let gateway: AppProcess;
  let dispatcher: Awaited<ReturnType<typeof startDispatcherProcess>>;
  let receiver: Receiver;
  let relay: TcpOutage | null = null;
  let privateRabbit: PrivateRabbit | null = null;
  let privateRedis: PrivateRedis;
  /** where the sinks reach RabbitMQ: the private node, or the relay in front of the shared one */
  let sinkPort: number;
  /** a RabbitMQ the dispatcher reaches directly: the private node, or the shared one */
  let brokerPort: number;
  let nats: PrivateNats | null = null;
  let natsUrl = '127.0.0.1:4222';
  let rabbit: Awaited<ReturnType<typeof rabbitTap>>;
  let js: Awaited<ReturnType<typeof jetStreamTap>>;
  let org: SeededOrg;
  let other: SeededOrg;
  let sessionId: string;
  const sink: Record<string, string> = {};
  let hookId: string;
  const api = (method: 'get' | 'post' | 'patch' | 'delete', path: string, token = org.adminKey) => http()[method](`/api/v1${path}`).set(bearer(token));

  /** The envelopes a destination got, by event id (at-least-once: a redelivery carries the same id). */
  const rabbitIds = () => new Set(rabbit.messages.map((m) => String(m.properties.messageId)));
  const hookIds = () => new Set(receiver.at('/hook').map((r) => String(r.headers['x-webhook-request-id'])));
  /** each of `ids` is in `got` (one set per probe: the full-size run checks thousands of ids many times a second) */
  const allIn = (ids: string[], got: Set<string>) => ids.every((id) => got.has(id));
  const countIn = (ids: string[], got: Set<string>) => ids.filter((id) => got.has(id)).length;

  beforeAll(async () => {
    // every process of this file (API, gateway, dispatcher) on a Redis of its own, which the outage case restarts empty
    privateRedis = await PrivateRedis.create();
    process.env.REDIS_URL = privateRedis.url;
    await isolated.create();
    db = await testDataSource();
    redis = new IORedis(process.env.REDIS_URL);
    redis.on('error', () => undefined);
    publisher = new EventPublisher(await testDb(), redis, process.env.REDIS_KEY_PREFIX!);
    const binDir = rabbitmqBinDir();
    if (binDir) privateRabbit = new PrivateRabbit(binDir);
    else {
      relay = new TcpOutage(() => ({ host: RABBITMQ.host, port: RABBITMQ.port }));
      await relay.start();
    }
    const binary = natsServerBinary();
    if (binary) {
      nats = new PrivateNats(binary);
      await nats.start();
      natsUrl = nats.url;
    }
    let api: Awaited<ReturnType<typeof startApi>>;
    [api, rabbit, js, receiver, { sim, simUrl, gateway }] = await Promise.all([
      startApi(),
      (async () => {
        await privateRabbit?.start();
        return rabbitTap(run, privateRabbit?.port ?? RABBITMQ.port);
      })(),
      jetStreamTap(natsUrl, streamName, run),
      startReceiver(),
      startSimGateway(`gw-${run}`, { engine: 'sim' }),
    ]);
    app = api.app;
    http = api.http;
    org = await seedOrganization('Sinks');
    other = await seedOrganization('Sinks Other');
    sinkPort = privateRabbit?.port ?? relay!.port;
    brokerPort = privateRabbit?.port ?? RABBITMQ.port;
    const quick = { policy: 'constant' as const, delaySeconds: 1, attempts: 30 };
    // a sink's retries back off (1, 2, 4, 8, 16 s …): a 20 s outage costs each delivery a handful of attempts
    const backoff = { policy: 'exponential' as const, delaySeconds: 1, attempts: 15 };
    hookId = await createWebhookRow(db, null, { organizationId: org.id, url: `${receiver.url}/hook`, retryPolicy: quick });
    const amqp = await api.http().post('/api/v1/event-sinks').set(bearer(org.adminKey)).send({
      kind: 'amqp', url: `amqp://guest:guest@127.0.0.1:${sinkPort}/`, exchange: rabbit.exchange, routingKey: 'wa.{event}', retryPolicy: backoff,
    });
    expect(amqp.status).toBe(201);
    sink.amqp = amqp.body.id;
    const jsSink = await api.http().post('/api/v1/event-sinks').set(bearer(org.adminKey)).send({
      kind: 'nats', url: `nats://${natsUrl}`, subject: `${run}.{organizationId}.{event}`, retryPolicy: backoff,
    });
    expect(jsSink.status).toBe(201);
    sink.nats = jsSink.body.id;
    // the breaker as shipped: while a broker is down its sink's attempts are handed back after a few failures and
    // probed, which is what keeps the rest of the organization's deliveries at their pace
    dispatcher = await startDispatcherProcess();
    const created = await api.http().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'sinks' });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    await pairSession({ api: api.http, token: org.adminKey, simUrl, sessionId });
  }, 240_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all([gateway?.stop(), receiver?.close(), rabbit?.drop(), js?.drop()]);
    await sim?.stop();
    await relay?.cut();
    await privateRabbit?.stop();
    await nats?.stop();
    await app?.close();
    await redis?.quit();
    await closeTestDataSource();
    await isolated.drop();
    await privateRedis?.stop();
  });

  it('publishes an inbound message to both brokers with exactly the envelope the webhook receives', async () => {
    const text = `hello ${run}`;
    const res = await fetch(`${simUrl}/sim/sessions/${sessionId}/inbound`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: '15557770001@s.whatsapp.net', text }),
    });
    expect(res.status).toBe(200);
    const hooked = await waitFor(() => receiver.at('/hook').find((r) => r.rawBody.toString().includes(text)), 20000, 'the webhook delivery');
    const eventId = String(hooked.headers['x-webhook-request-id']);
    const fromRabbit = await waitFor(() => rabbit.messages.find((m) => m.properties.messageId === eventId), 20000, 'the RabbitMQ message');
    expect(fromRabbit.content.equals(hooked.rawBody)).toBe(true);
    expect(fromRabbit.properties.contentType).toBe('application/json');
    expect(fromRabbit.properties.deliveryMode).toBe(2);
    expect(fromRabbit.fields.routingKey).toBe('wa.message.received');
    const envelope = JSON.parse(hooked.rawBody.toString()) as EventEnvelope;
    expect(envelope).toMatchObject({ id: eventId, event: 'message.received', organizationId: org.id, sessionId });
    const fromNats = await waitFor(async () => (await js.bodies()).find((b) => b.id === eventId), 20000, 'the JetStream message');
    expect(fromNats.body).toBe(hooked.rawBody.toString());
    expect(fromNats.subject).toBe(`${run}.${org.id}.message.received`);
  }, 60_000);

  it('keeps the URL password encrypted at rest and masked in every answer; the other tenant gets 404', async () => {
    const [row] = await db.query(`SELECT url, secret_encrypted, kind, target FROM webhooks WHERE id = $1`, [sink.amqp]);
    expect(row.url).toBe(`amqp://guest@127.0.0.1:${sinkPort}/`);
    expect(row.secret_encrypted).toBeTruthy();
    expect(row.secret_encrypted).not.toContain('guest');
    const got = await api('get', `/event-sinks/${sink.amqp}`);
    expect(got.status).toBe(200);
    expect(got.body.url).toBe(`amqp://guest:***@127.0.0.1:${sinkPort}/`);
    const listed = await api('get', '/event-sinks');
    expect(listed.body.data.map((s: Json) => s.id).sort()).toEqual([sink.amqp, sink.nats].sort());
    expect(JSON.stringify(listed.body)).not.toContain('guest:guest');
    // sinks and webhooks are apart: neither list shows the other, nor does an id cross over
    expect((await api('get', '/webhooks')).body.data.map((w: Json) => w.id)).toEqual([hookId]);
    expect((await api('get', `/webhooks/${sink.amqp}`)).status).toBe(404);
    expect((await api('get', `/event-sinks/${hookId}`)).status).toBe(404);
    // the masked URL sent back keeps the password; the sink still publishes (below)
    const patched = await api('patch', `/event-sinks/${sink.amqp}`).send({ url: got.body.url, routingKey: 'wa.{event}' });
    expect(patched.status).toBe(200);
    const [after] = await db.query(`SELECT secret_encrypted FROM webhooks WHERE id = $1`, [sink.amqp]);
    expect(after.secret_encrypted).toBe(row.secret_encrypted);
    for (const [method, path] of [
      ['get', `/event-sinks/${sink.amqp}`],
      ['patch', `/event-sinks/${sink.amqp}`],
      ['post', `/event-sinks/${sink.amqp}:test`],
      ['get', `/event-sinks/${sink.amqp}/deliveries`],
      ['delete', `/event-sinks/${sink.nats}`],
    ] as const) {
      const res = await api(method, path, other.adminKey).send(method === 'patch' ? { active: false } : undefined);
      expect([method, path, res.status]).toEqual([method, path, 404]);
      expect(res.body.error.code).toBe('not_found');
    }
    // a field of the other kind is refused, and a wrong scheme
    expect((await api('post', '/event-sinks').send({ kind: 'nats', url: 'nats://127.0.0.1:4222', exchange: 'x' })).status).toBe(422);
    expect((await api('post', '/event-sinks').send({ kind: 'amqp', url: 'nats://127.0.0.1:4222', exchange: 'x' })).status).toBe(422);
    expect((await api('post', '/event-sinks').send({ kind: 'amqp', url: 'amqp://127.0.0.1' })).status).toBe(422);
  });

  it('refuses a private broker address unless private targets are allowed', async () => {
    const strict = await startApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      for (const url of ['amqp://guest:guest@127.0.0.1:5672/', 'nats://10.0.0.5:4222', 'amqp://169.254.169.254/']) {
        const res = await strict.http().post('/api/v1/event-sinks').set(bearer(org.adminKey)).send({ kind: url.startsWith('nats') ? 'nats' : 'amqp', url, exchange: url.startsWith('nats') ? undefined : 'x' });
        expect([url, res.status]).toEqual([url, 422]);
        expect(JSON.stringify(res.body)).not.toContain('guest:guest');
      }
    } finally {
      await strict.app.close();
    }
  });

  it('logs sink deliveries, replays one with the same message id, and test-publishes to one sink', async () => {
    const page = await waitFor(async () => {
      const res = await api('get', `/event-sinks/${sink.amqp}/deliveries?status=delivered`);
      return res.body.data?.length ? res.body : null;
    }, 10000, 'a delivered sink delivery');
    const delivery = page.data[0];
    const before = rabbit.messages.filter((m) => m.properties.messageId === delivery.eventId).length;
    const replayed = await api('post', `/event-sinks/${sink.amqp}/deliveries/${delivery.id}:replay`);
    expect(replayed.status).toBe(202);
    await waitFor(() => rabbit.messages.filter((m) => m.properties.messageId === delivery.eventId).length > before, 15000, 'the replayed message');
    const detail = await waitFor(async () => {
      const res = await api('get', `/event-sinks/${sink.amqp}/deliveries/${delivery.id}`);
      return res.body.status === 'delivered' && res.body.attemptList.length >= 2 ? res.body : null;
    }, 10000, 'the replay recorded');
    expect(detail.attemptList.every((a: Json) => a.error === null)).toBe(true);
    const tested = await api('post', `/event-sinks/${sink.nats}:test`);
    expect(tested.status).toBe(202);
    const testBody = await waitFor(async () => (await js.bodies()).find((b) => b.id === tested.body.eventId), 15000, 'the test event on JetStream');
    expect(JSON.parse(testBody.body)).toMatchObject({ event: 'webhook.test', payload: { webhookId: sink.nats } });
    // to that sink only
    expect(rabbitIds().has(tested.body.eventId)).toBe(false);
    expect(hookIds().has(tested.body.eventId)).toBe(false);
  }, 60_000);

  it('loses nothing when the brokers stop and restart during a burst, the dispatcher is SIGKILLed and Redis restarts empty; the webhook keeps flowing', async () => {
    // `npm run bench:sinks-chaos` runs this case at the size (5,000 events, a 20 s outage)
    const COUNT = Number(process.env.SINKS_CHAOS_EVENTS ?? 300);
    const third = Math.floor(COUNT / 3);
    const OUTAGE_MS = Number(process.env.SINKS_OUTAGE_MS ?? 0);
    const envelopes = Array.from({ length: COUNT }, (_, i) => buildOpaque(publisher, { event: 'presence.update', organizationId: org.id, sessionId: null, payload: { i } }));
    const ids = envelopes.map((e) => e.id);
    const publish = async (from: number, to: number) => {
      for (let i = from; i < to; i += 50) await publisher.publishEnvelopes(envelopes.slice(i, Math.min(to, i + 50)));
    };
    /** publishes [from, to) and waits until the webhook has every one of them: its deliveries per second */
    const hookRate = async (from: number, to: number, what: string) => {
      const started = Date.now();
      await publish(from, to);
      await waitFor(() => allIn(ids.slice(from, to), hookIds()), Math.max(60_000, (to - from) * 60), what);
      return (to - from) / ((Date.now() - started) / 1000);
    };
    const hookBefore = await hookRate(0, third, 'the webhook before the outage');
    await waitFor(() => countIn(ids.slice(0, third), rabbitIds()) > 0, 20000, 'the burst under way at the sinks');
    // the outage: RabbitMQ stopped through its service control (or its relay cut), the private nats-server killed
    const outageStarted = Date.now();
    await (privateRabbit ? privateRabbit.stopApp() : relay!.cut());
    await nats?.kill();
    // while both brokers are down the webhook of the same organization still gets the new events, at its pace
    const hookDuring = await hookRate(third, 2 * third, 'the webhook during the outage');
    // sink attempts are failing and being retried meanwhile
    await waitFor(async () => {
      const [r] = await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND status = 'pending' AND attempts >= 1 AND last_error IS NOT NULL`, [sink.amqp]);
      return r.n > 0;
    }, 30000, 'failed sink attempts waiting for a retry');
    // a fault's length, not a wait for an event: the full-size run holds the brokers down this long
    if (Date.now() - outageStarted < OUTAGE_MS) await new Promise((r) => setTimeout(r, OUTAGE_MS - (Date.now() - outageStarted)));
    const outageSeconds = (Date.now() - outageStarted) / 1000;
    if (privateRabbit) {
      await privateRabbit.startApp();
      // the consuming side reconnects too; the queue is durable, what it held is still there
      await rabbit.reopen();
    } else await relay!.start();
    await nats?.start();
    // the rest of the burst, and the dispatcher killed mid-publish
    const rest = publish(2 * third, COUNT);
    await waitFor(() => countIn(ids.slice(third), rabbitIds()) >= 10, 60000, 'publishes after the outage');
    await dispatcher.kill();
    await rest;
    // Redis restarted empty while no dispatcher runs: the event stream, its consumer group and every retry job are
    // gone; what is left to do is found in PostgreSQL (the reconciler)
    await privateRedis.restart();
    dispatcher = await startDispatcherProcess();

    const settle = Math.max(120_000, COUNT * 60);
    await waitFor(() => allIn(ids, rabbitIds()), settle, 'every event confirmed by RabbitMQ');
    await waitFor(async () => {
      const got = new Set(await js.ids());
      return ids.every((id) => got.has(id));
    }, settle, 'every event stored by JetStream');
    await waitFor(() => allIn(ids, hookIds()), settle, 'every event at the webhook');
    // 0 lost; JetStream stored each id once (its duplicate window dropped redeliveries); RabbitMQ's duplicates, if any,
    // carry the same message id
    const mine = new Set(ids);
    const stored = (await js.ids()).filter((id) => mine.has(id));
    expect(stored.length).toBe(COUNT);
    expect(new Set(stored).size).toBe(COUNT);
    const rabbitMine = rabbit.messages.map((m) => String(m.properties.messageId)).filter((id) => mine.has(id));
    const confirmed = rabbitIds();
    const rabbitLost = ids.filter((id) => !confirmed.has(id)).length;
    const hookMine = receiver.at('/hook').map((r) => String(r.headers['x-webhook-request-id'])).filter((id) => mine.has(id));
    const [retries] = await db.query(`SELECT w.kind, sum(d.attempts - 1)::int AS retries FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.event_id = ANY($1) GROUP BY w.kind ORDER BY w.kind`, [ids]).then((r: Json[]) => [r]);
    console.log(
      `event sinks outage: ${COUNT} events; RabbitMQ ${privateRabbit ? 'stopped (rabbitmqctl stop_app/start_app)' : 'cut (relay)'} and nats-server ${nats ? 'killed' : 'not killed'} for ${outageSeconds.toFixed(1)} s, ` +
        `dispatcher SIGKILLed, Redis restarted empty\n` +
        `  RabbitMQ: lost ${rabbitLost}, messages ${rabbitMine.length}, duplicates ${rabbitMine.length - new Set(rabbitMine).size} (same message id)\n` +
        `  JetStream: lost ${COUNT - new Set(stored).size}, stored ${stored.length} (once each)\n` +
        `  webhook: lost ${COUNT - new Set(hookMine).size}, duplicates ${hookMine.length - new Set(hookMine).size}; ${hookBefore.toFixed(0)}/s before the outage, ${hookDuring.toFixed(0)}/s during it (${(hookDuring / hookBefore).toFixed(2)}x)\n` +
        `  retries by kind ${JSON.stringify(retries)}`,
    );
    expect(rabbitLost).toBe(0);
    // retries are visible in the delivery log, and every sink delivery ends delivered
    for (const id of [sink.amqp, ...(nats ? [sink.nats] : [])]) {
      await waitFor(async () => {
        const rows = (await deliveriesOf(db, id)).filter((d) => mine.has(d.event_id));
        return rows.length === COUNT && rows.every((d) => d.status === 'delivered');
      }, settle, `every delivery of ${id} recorded delivered`);
      const [retried] = await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND event_id = ANY($2) AND attempts >= 2`, [id, ids]);
      expect(retried.n).toBeGreaterThan(0);
    }
  }, Math.max(300_000, Number(process.env.SINKS_CHAOS_EVENTS ?? 0) * 150 + Number(process.env.SINKS_OUTAGE_MS ?? 0)));

  it('survives connection errors: bad credentials, a vhost that does not exist, TLS to a plain port', async () => {
    const once = { policy: 'constant' as const, delaySeconds: 1, attempts: 1 };
    const badPassword = `pw-${run}`;
    const bad: Record<string, string> = {};
    for (const [name, body] of Object.entries({
      credentials: { kind: 'amqp', url: `amqp://guest:${badPassword}@127.0.0.1:${brokerPort}/`, exchange: rabbit.exchange },
      vhost: { kind: 'amqp', url: `amqp://guest:guest@127.0.0.1:${brokerPort}/no-such-vhost-${run}`, exchange: rabbit.exchange },
      tls: { kind: 'amqp', url: `amqps://guest:guest@127.0.0.1:${brokerPort}/`, exchange: rabbit.exchange },
      exchange: { kind: 'amqp', url: `amqp://guest:guest@127.0.0.1:${brokerPort}/`, exchange: `${run}-missing` },
      natsTls: { kind: 'nats', url: `tls://${natsUrl}`, subject: `${run}.x` },
      noStream: { kind: 'nats', url: `nats://${natsUrl}`, subject: `${run}-nostream.x` },
    })) {
      const res = await api('post', '/event-sinks').send({ ...body, events: ['call.incoming'], retryPolicy: once });
      expect(res.status).toBe(201);
      bad[name] = res.body.id;
    }
    await publisher.publish(opaqueEvent({ event: 'call.incoming', organizationId: org.id, sessionId: null, payload: { bad: true } }));
    for (const [name, id] of Object.entries(bad)) {
      const [d] = await waitFor(async () => {
        const rows = await deliveriesOf(db, id);
        return rows[0]?.status === 'dead' ? rows : undefined;
      }, 30000, `the ${name} delivery to fail`);
      expect([name, typeof d.last_error]).toEqual([name, 'string']);
      // the password is in no log line the delivery keeps
      expect(d.last_error).not.toContain(badPassword);
    }
    assertRunning(dispatcher);
    // and it still delivers
    const ok = await publisher.publish(opaqueEvent({ event: 'presence.update', organizationId: org.id, sessionId: null, payload: { after: true } }));
    await waitFor(() => rabbitIds().has(ok.id), 20000, 'a delivery after the errors');
  }, 90_000);

  it('checks the broker address again when it connects: a sink aimed at loopback behind the API opens no connection', async () => {
    let connections = 0;
    const listener = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    // as if saved when its name resolved elsewhere, or written past the API: only the dispatcher's own check is left
    const once = JSON.stringify({ policy: 'constant', delaySeconds: 1, attempts: 1 });
    const rows: Record<string, string> = { amqp: newId('snk'), nats: newId('snk') };
    for (const [kind, target] of [['amqp', { exchange: 'x' }], ['nats', { subject: 'x.y' }]] as const) {
      await db.query(
        `INSERT INTO webhooks (id, organization_id, url, events, active, custom_headers, retry_policy, kind, target)
         VALUES ($1, $2, $3, '{call.incoming}', true, '{}'::jsonb, $4::jsonb, $5, $6::jsonb)`,
        [rows[kind], org.id, `${kind}://127.0.0.1:${port}`, once, kind, JSON.stringify(target)],
      );
    }
    await dispatcher.kill();
    const strict = await startDispatcherProcess({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      await publisher.publish(opaqueEvent({ event: 'call.incoming', organizationId: org.id, sessionId: null, payload: { inward: true } }));
      for (const [kind, id] of Object.entries(rows)) {
        const [d] = await waitFor(async () => {
          const found = await deliveriesOf(db, id);
          return found[0]?.status === 'dead' ? found : undefined;
        }, 30000, `the ${kind} delivery to loopback refused`);
        expect([kind, d.status]).toEqual([kind, 'dead']);
      }
      expect(connections).toBe(0);
    } finally {
      await strict.kill();
      dispatcher = await startDispatcherProcess();
      await new Promise((resolve) => listener.close(resolve));
    }
  }, 90_000);
});
