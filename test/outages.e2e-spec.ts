import { startSimGateway } from './support/fleet';
import { AppProcess, assertRunning, freePort, startApp, waitFor } from './support/processes';
import { PrivateServices, startPrivateServices } from './support/private-services';
import { createWebhookRow, Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';
import { simControl } from './support/sim-control';

jest.setTimeout(120_000);

/**
 * Issue 17 item 4: PostgreSQL and Redis outages, on a PostgreSQL and a Redis of this file's own (stopping them leaves
 * the shared ones of the suite alone). The API, a gateway on the simulator and the dispatcher run as real processes:
 * while a store is down the API answers 503 `unavailable` with Retry-After, fast; no process exits; all recover.
 */
describe('Outages: PostgreSQL and Redis stopped and restarted under real processes', () => {
  let services: PrivateServices;
  let sim: AppProcess;
  let simUrl: string;
  let gateway: { proc: AppProcess; readyUrl: string };
  let dispatcher: AppProcess & { opsUrl: string };
  let api: AppProcess;
  let apiUrl: string;
  let receiver: Receiver;
  let org: SeededOrg;
  let sessionId: string;
  const { post: simPost, get: simGet } = simControl(() => simUrl);

  const call = (method: string, path: string, body?: object): Promise<Response> =>
    fetch(apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${org.adminKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      // a request that hangs is a failure of this file, not a test timeout with no answer
      signal: AbortSignal.timeout(20_000),
    });
  const send = (text: string) => call('POST', `/api/v1/sessions/${sessionId}/messages`, { to: '15550009999@s.whatsapp.net', text });
  const processes = () => [api, gateway.proc, dispatcher];
  const status = async (url: string) => (await fetch(url).catch(() => null))?.status ?? 0;

  /** No process exited, and each answers its liveness probe. */
  const expectAllAlive = async () => {
    assertRunning(...processes());
    expect(await status(`${apiUrl}/healthz`)).toBe(200);
    expect(await status(gateway.readyUrl.replace('/readyz', '/healthz'))).toBe(200);
    expect(await status(`${dispatcher.opsUrl}/healthz`)).toBe(200);
  };

  /** Every process ready again: each reaches PostgreSQL and Redis (a process that exited meanwhile is named with its output). */
  const waitAllReady = () =>
    waitFor(
      async () => {
        assertRunning(...processes());
        return (await status(`${apiUrl}/readyz`)) === 200 && (await status(gateway.readyUrl)) === 200 && (await status(`${dispatcher.opsUrl}/readyz`)) === 200;
      },
      30_000,
      'the API, the gateway and the dispatcher ready again',
    );

  /** An inbound message after the outage reaches the webhook: the whole path (gateway, outbox, dispatcher) recovered. */
  const expectInboundDelivered = async (text: string) => {
    const res = await simPost(`/sim/sessions/${sessionId}/inbound`, { from: '15557770000@s.whatsapp.net', text });
    expect(res.status).toBe(200);
    await waitFor(() => receiver.at('/hooks').some((r) => r.rawBody.toString().includes(text)), 30_000, `"${text}" at the webhook`);
  };

  beforeAll(async () => {
    services = await startPrivateServices();
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    const apiPort = await freePort();
    apiUrl = `http://127.0.0.1:${apiPort}`;
    [gateway, dispatcher, api, receiver] = await Promise.all([
      // the supervisor on, as in production: its leader lease lives in PostgreSQL, whose restart interrupts its renewals
      startSimGateway(simUrl, `gw-outages-${process.pid}`, { GATEWAY_HEARTBEAT_MS: '500', GATEWAY_TTL_MS: '5000', SUPERVISOR_ENABLED: 'true' }),
      startDispatcherProcess(),
      startApp('api', { PORT: String(apiPort) }, `${apiUrl}/healthz`),
      startReceiver(),
    ]);
    org = await seedOrganization('Outages Inc');
    await createWebhookRow(await testDataSource(), null, { organizationId: org.id, url: `${receiver.url}/hooks`, events: ['message.received'] });
    const created = await call('POST', '/api/v1/sessions', { label: 'outages', ratePerMin: 10000, ratePerHour: 1000000 });
    expect(created.status).toBe(201);
    sessionId = ((await created.json()) as { id: string }).id;
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).qr, 15_000, 'a QR');
    await simPost(`/sim/sessions/${sessionId}/scan`, { phoneNumber: '15550001111' });
    await waitFor(async () => ((await (await call('GET', `/api/v1/sessions/${sessionId}`)).json()) as { status: string }).status === 'working', 15_000, 'working');
    // the test's own pool must not hold connections across the outages
    await closeTestDataSource();
  }, 90_000);

  afterAll(async () => {
    await closeTestDataSource();
    await Promise.all([api?.stop(), gateway?.proc.stop(), dispatcher?.stop()]);
    await sim?.stop();
    await receiver?.close();
    await services?.stopAll();
  });

  it('while PostgreSQL is stopped the API answers 503 unavailable with Retry-After and /readyz is not ready; 2xx again once it is back', async () => {
    expect((await call('GET', '/api/v1/sessions')).status).toBe(200);
    await services.pg.stop();

    const list = await call('GET', '/api/v1/sessions');
    expect(list.status).toBe(503);
    expect(list.headers.get('retry-after')).toBe('5');
    expect(await list.json()).toEqual({ error: { code: 'unavailable', message: expect.any(String), details: { retryAfterSeconds: 5 } } });
    const sent = await send('while PostgreSQL is down');
    expect(sent.status).toBe(503);
    expect(((await sent.json()) as { error: { code: string } }).error.code).toBe('unavailable');
    const ready = await fetch(`${apiUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not_ready', checks: { postgres: false, redis: true } });

    await services.pg.start();
    await waitFor(async () => (await call('GET', '/api/v1/sessions')).status === 200, 30_000, 'the API to answer 200 again');
    expect((await send('after PostgreSQL is back')).status).toBe(202);
    await waitAllReady();
    await expectAllAlive();
  });

  it('a send while Redis is stopped fails fast with 503 unavailable instead of hanging; the API recovers when Redis is back', async () => {
    await services.redis.stop();

    const started = Date.now();
    const sent = await send('while Redis is down');
    const tookMs = Date.now() - started;
    expect(sent.status).toBe(503);
    expect(sent.headers.get('retry-after')).toBe('5');
    expect(((await sent.json()) as { error: { code: string } }).error.code).toBe('unavailable');
     
    console.log(`send during a Redis outage answered 503 in ${tookMs} ms`);
    // answered while Redis is still down: the request-path client gave up (the old one held the request until Redis
    // came back, here never: the fetch's own 20 s abort failed the test)
    expect(services.redis.running).toBe(false);
    const ready = await fetch(`${apiUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not_ready', checks: { postgres: true, redis: false } });

    await services.redis.start();
    await waitFor(async () => (await send('after Redis is back')).status === 202, 30_000, 'a send to be accepted again');
    await waitAllReady();
    await expectAllAlive();
  });

  it('the API, the gateway and the dispatcher survive a PostgreSQL restart and a Redis restart, and inbound messages flow again', async () => {
    await expectInboundDelivered('before the restarts');
    await services.pg.restart();
    await waitAllReady();
    await expectAllAlive();
    await expectInboundDelivered('after the PostgreSQL restart');

    await services.redis.restart();
    await waitAllReady();
    await expectAllAlive();
    await expectInboundDelivered('after the Redis restart');
  });
});
