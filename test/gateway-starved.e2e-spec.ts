import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace, so only its own gateway is live here
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:gateway-starved-${process.pid}`;

import { REGISTRY_KEYS } from '@app/contracts';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { startSimGateway } from './support/fleet';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';

/*
 * A gateway whose main thread is starved keeps its leases (issue 36): the engine's work cannot delay the renewals past
 * their margin, because they run on the lease keeper thread. The starvation is the test-only GATEWAY_FAULT
 * `block-on-sigusr2`: a SIGUSR2 makes the main thread spin for 3 × the lease TTL. That is the worst a competing busy
 * process on the gateway's core (or Baileys' crypto) can do to the main thread — it gets no turn at all — while the
 * keeper thread still gets its share of the CPU, as it does under the kernel's fair scheduling; it needs no CPU
 * pinning, so it behaves the same on a CI box of any size and costs a few seconds.
 */
describe('A starved gateway slows down; it does not fence itself', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let redis: Redis;
  let gateway: AppProcess;
  let metricsUrl: string;
  const keys = new RedisKeys(process.env.REDIS_KEY_PREFIX!);
  const gatewayId = `gw-starved-${process.pid}`;
  const api = () => request(app.getHttpServer());
  const { get: simGet, post: simPost } = simControl(() => simUrl);
  const inboundCount = async (sessionId: string) =>
    Number((await (await testDataSource()).query(`SELECT count(*) AS n FROM messages WHERE session_id = $1 AND direction = 'in'`, [sessionId]))[0].n);
  const lapses = async () => {
    const text = await (await fetch(metricsUrl)).text();
    return Number(/^gw_gateway_lease_lapses_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? NaN);
  };

  beforeAll(async () => {
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Starved Inc');
    redis = createRedis(process.env.REDIS_URL!);
    const started = await startSimGateway(simUrl, gatewayId, { GATEWAY_HEARTBEAT_MS: '500', GATEWAY_TTL_MS: '3000', GATEWAY_FAULT: 'block-on-sigusr2' });
    gateway = started.proc;
    metricsUrl = started.readyUrl.replace('/readyz', '/metrics');
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    redis?.disconnect();
    await closeTestDataSource();
  });

  it('holds its lease and its socket through a main thread blocked for 3 TTLs, and delivers what arrived as soon as it runs again', async () => {
    const s = (await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'starved' })).body;
    await waitFor(async () => (await simPost(`/sim/sessions/${s.id}/scan`)).status === 200, 10_000, 'the QR to show');
    await waitFor(async () => (await simGet(`/sim/sessions/${s.id}`)).connected === true || null, 10_000, 'the device connected');
    await simPost(`/sim/sessions/${s.id}/inbound`, { from: '15550001111@s.whatsapp.net', text: 'before' });
    await waitFor(async () => (await inboundCount(s.id)) === 1 || null, 10_000, 'the first message stored');
    expect({ lapses: await lapses(), log: gateway.output().match(/.*lapsed.*/g) }).toEqual({ lapses: 0, log: null });
    const lease = await redis.get(keys.key(REGISTRY_KEYS.lease(s.id)));

    gateway.child.kill('SIGUSR2');
    // while the main thread spins, texts keep arriving; the registry entry and the epoch stay live past several TTLs
    const blockedAt = Date.now();
    for (let i = 0; i < 5; i++) expect((await simPost(`/sim/sessions/${s.id}/inbound`, { from: '15550001111@s.whatsapp.net', text: `during ${i}` })).status).toBe(200);
    await waitFor(async () => Date.now() - blockedAt > 6000 || null, 10_000, 'two TTLs into the block');
    expect(await redis.exists(keys.key(REGISTRY_KEYS.alive(gatewayId)))).toBe(1);
    expect(await redis.exists(keys.key(REGISTRY_KEYS.leaseNode(gatewayId)))).toBe(1);

    // the main thread runs again: every text is stored, on the same socket, with no lapse
    await waitFor(async () => (await inboundCount(s.id)) === 6 || null, 20_000, 'every text stored');
    expect(await lapses()).toBe(0);
    expect(await simGet(`/sim/sessions/${s.id}`)).toMatchObject({ connected: true, opens: 1, maxConcurrent: 1 });
    expect(await redis.get(keys.key(REGISTRY_KEYS.lease(s.id)))).toBe(lease);
    expect(gateway.output()).not.toContain('lease renewals lapsed');
  }, 90_000);
});
