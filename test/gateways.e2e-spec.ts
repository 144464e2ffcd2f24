import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so only its own gateways are live here
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:gateways-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '2000';

import { Queue } from 'bullmq';
import { gatewayCommandQueue, REGISTRY_KEYS } from '@app/contracts';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';

describe('Gateway nodes: registry, placement, leases, resume, dead gateways', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let redis: Redis;
  const keys = new RedisKeys(process.env.REDIS_KEY_PREFIX!);
  const gateways = new Map<string, AppProcess>();
  const id = (name: string) => `gw-${name}-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const { get: simGet, post: simPost } = simControl(() => simUrl);
  const getSession = async (sid: string) => (await api().get(`/api/v1/sessions/${sid}`).set(bearer(org.adminKey))).body;
  const waitStatus = (sid: string, status: string) =>
    waitFor(async () => ((await getSession(sid)).status === status ? getSession(sid) : null), 10000, `session ${sid} to be ${status}`).catch(async (err) => {
      // what the gateways saw is the only useful clue when this fails
      const s = await getSession(sid);
      const db = await testDataSource();
      const history = await db.query(`SELECT envelope->'payload' AS p FROM events WHERE session_id = $1 AND type = 'session.status' ORDER BY id`, [sid]);
      throw new Error(`${String(err)}; session ${JSON.stringify(s)} history ${JSON.stringify(history.map((h: { p: unknown }) => h.p))}\n${gateways.get([...gateways.keys()].find((k) => id(k) === s.gatewayId) ?? '')?.output().slice(-4000)}`);
    });
  const createSession = async (label: string) => {
    const res = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label });
    expect(res.status).toBe(201);
    return res.body;
  };
  const startGateway = async (name: string, env: Record<string, string> = {}) => {
    const port = await freePort();
    const proc = await startApp(
      'gateway',
      {
        GATEWAY_ID: id(name),
        GATEWAY_ENGINE: 'sim',
        NETWORK_SIM_URL: simUrl,
        GATEWAY_HEALTH_PORT: String(port),
        GATEWAY_HEARTBEAT_MS: '250',
        GATEWAY_TTL_MS: '1500',
        RECONNECT_BASE_DELAY_MS: '100',
        ...env,
      },
      `http://127.0.0.1:${port}/healthz`,
    );
    gateways.set(name, proc);
    return proc;
  };
  type Listed = Array<{ id: string; alive: boolean; sessionCount: number; capacity: number }>;
  /** The platform operator's fleet-wide view (a key with `platform:operate`, which only the admin CLI grants). */
  let operatorKey: string;
  const listGateways = async (token = operatorKey) => (await api().get('/api/v1/gateways').set(bearer(token))).body.data as Listed;
  /** the fencing token the session row holds; the lease's holder stamps the same one */
  const leaseTokenOf = async (sid: string) => Number((await (await testDataSource()).query('SELECT lease_token FROM sessions WHERE id = $1', [sid]))[0].lease_token);

  beforeAll(async () => {
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    await Promise.all([startGateway('a', { GATEWAY_CAPACITY: '10' }), startGateway('b', { GATEWAY_CAPACITY: '10' })]);
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Gateways Inc');
    operatorKey = (await org.apiKey(['sessions:read', 'platform:operate'])).token;
    redis = createRedis(process.env.REDIS_URL!);
  });

  afterAll(async () => {
    await app?.close();
    for (const g of gateways.values()) await g.stop();
    await sim?.stop();
    redis?.disconnect();
    await closeTestDataSource();
  });

  it('lists registered gateways with liveness, capacity and session count', async () => {
    const listed = await listGateways();
    expect(listed.map((g) => g.id)).toEqual([id('a'), id('b')]);
    // the sim engine announces no WhatsApp Web version
    for (const g of listed) expect(g).toMatchObject({ alive: true, capacity: 10, sessionCount: 0, engine: 'sim', waWebVersion: null });
    expect((await api().get('/api/v1/gateways')).status).toBe(401);
    const key = await org.apiKey(['webhooks:manage']);
    expect((await api().get('/api/v1/gateways').set(bearer(key.token))).status).toBe(403);
    // a tenant without sessions sees no gateway at all; `*` is not the platform operator's capability
    for (const token of [org.users.owner.token, org.adminKey]) expect(await listGateways(token)).toEqual([]);
  });

  it("a tenant sees only the gateways hosting its own sessions, with its own count, never another tenant's", async () => {
    const tenant = await seedOrganization('Gateways Tenant');
    const res = await api().post('/api/v1/sessions').set(bearer(tenant.adminKey)).send({ label: 'tenant one' });
    expect(res.status).toBe(201);
    await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'neighbour' }).expect(201);
    await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'neighbour 2' }).expect(201);

    const seen = await listGateways(tenant.users.viewer.token);
    expect(seen).toEqual([expect.objectContaining({ id: res.body.gatewayId, sessionCount: 1 })]);
    const fleet = await listGateways();
    expect(fleet.map((g) => g.id)).toEqual([id('a'), id('b')]);

    for (const label of ['tenant one', 'neighbour', 'neighbour 2']) {
      const owner = label === 'tenant one' ? tenant : org;
      const list = (await api().get('/api/v1/sessions').set(bearer(owner.adminKey))).body.data as Array<{ id: string; label: string }>;
      await api().delete(`/api/v1/sessions/${list.find((x) => x.label === label)!.id}`).set(bearer(owner.adminKey)).expect(204);
    }
  });

  it('spreads new sessions over the live gateways by free capacity', async () => {
    const placed = [];
    for (let i = 0; i < 4; i++) placed.push((await createSession(`spread ${i}`)).gatewayId);
    expect(placed.filter((g) => g === id('a'))).toHaveLength(2);
    expect(placed.filter((g) => g === id('b'))).toHaveLength(2);
    await waitFor(async () => (await listGateways()).every((g) => g.sessionCount === 2), 5000, 'heartbeats to report 2 sessions each').catch(async (e) => {
      console.log(JSON.stringify(await listGateways()), JSON.stringify((await api().get('/api/v1/sessions').set(bearer(org.adminKey))).body.data.map((x: {status: string; gatewayId: string}) => [x.status, x.gatewayId])), gateways.get('a')!.output().slice(-3000));
      throw e;
    });
  });

  it('holds a lease per running session and frees it on stop', async () => {
    const s = await createSession('leased');
    await waitStatus(s.id, 'scan_qr_code');
    expect(await redis.get(keys.key(REGISTRY_KEYS.lease(s.id)))).toMatch(new RegExp(`^${s.gatewayId}\\|${await leaseTokenOf(s.id)}\\|\\d+$`));
    // the lease lives by its holder's epoch, whose key the holder renews
    expect(Number(await redis.pttl(keys.key(REGISTRY_KEYS.leaseNode(s.gatewayId))))).toBeGreaterThan(0);
    await api().post(`/api/v1/sessions/${s.id}:stop`).set(bearer(org.adminKey)).expect(200);
    expect(await redis.get(keys.key(REGISTRY_KEYS.lease(s.id)))).toBeNull();
  });

  it('waits for a lease another gateway still holds (a dead one, until it expires), then takes the session', async () => {
    const s = await createSession('contested');
    await waitStatus(s.id, 'scan_qr_code');
    await api().post(`/api/v1/sessions/${s.id}:stop`).set(bearer(org.adminKey)).expect(200);
    // what a gateway that died a moment ago leaves behind: its lease, live while its epoch lives (a few more heartbeats)
    await redis.set(keys.key(REGISTRY_KEYS.leaseNode('gw-dead-ghost')), '7', 'PX', 2500);
    await redis.set(keys.key(REGISTRY_KEYS.lease(s.id)), 'gw-dead-ghost|3|7');
    await api().post(`/api/v1/sessions/${s.id}:start`).set(bearer(org.adminKey)).expect(200);
    await waitStatus(s.id, 'reconnecting');
    // several heartbeats pass while it waits; none may count the ghost's lease as one this gateway lost
    await waitStatus(s.id, 'scan_qr_code');
    expect(await redis.get(keys.key(REGISTRY_KEYS.lease(s.id)))).toMatch(new RegExp(`^${s.gatewayId}\\|${await leaseTokenOf(s.id)}\\|`));
  });

  it('a stopped gateway hands its paired sessions over: they resume elsewhere from stored auth state, without a new QR', async () => {
    const s = await createSession('resume me');
    await waitStatus(s.id, 'scan_qr_code');
    await simPost(`/sim/sessions/${s.id}/scan`, { phoneNumber: '15551110000' });
    const working = await waitStatus(s.id, 'working');
    const name = s.gatewayId === id('a') ? 'a' : 'b';
    const other = name === 'a' ? 'b' : 'a';
    const db = await testDataSource();
    const qrCount = async () => Number((await db.query(`SELECT count(*) AS n FROM events WHERE session_id = $1 AND type = 'auth.qr'`, [s.id]))[0].n);
    const qrsBefore = await qrCount();

    // SIGTERM drains (issue 11): the node leaves the registry and its session resumes on the other gateway
    await gateways.get(name)!.stop();
    expect((await listGateways()).map((g) => g.id)).not.toContain(id(name));
    const resumed = await waitFor(async () => {
      const view = (await api().get(`/api/v1/sessions/${s.id}`).set(bearer(org.adminKey))).body;
      return view.status === 'working' && view.gatewayId === id(other) ? view : null;
    }, 15000, 'the session working on the other gateway');
    expect(resumed.waJid).toBe(working.waJid);
    // a move changes the row's gateway, not its status: `working` on the other gateway can be read a moment before
    // that gateway has taken the lease and opened its socket (clean-clone CIs read `connected: false`, and once no
    // lease yet, here), so both are awaited
    await waitFor(async () => new RegExp(`^${id(other)}\\|`).test(String(await redis.get(keys.key(REGISTRY_KEYS.lease(s.id))))) || null, 15000, 'the lease held by the other gateway');
    await waitFor(async () => (await simGet(`/sim/sessions/${s.id}`)).connected === true || null, 15000, 'the device connected through the other gateway');
    expect(await qrCount()).toBe(qrsBefore);

    // the stopped node comes back and takes new work again
    await startGateway(name, { GATEWAY_CAPACITY: '10' });
    await waitFor(async () => (await listGateways()).some((g) => g.id === id(name) && g.alive) || null, 10000, 'the node back in the registry');
  });

  it('a gateway that stops answering gives 503 gateway_unavailable in bounded time, and the command is never run late', async () => {
    // a long heartbeat TTL: the node still looks alive after the crash, so the API has to time out on it
    await startGateway('c', { GATEWAY_TTL_MS: '60000' });
    const s = await createSession('on c');
    expect(s.gatewayId).toBe(id('c'));
    await waitStatus(s.id, 'scan_qr_code');
    await gateways.get('c')!.kill();

    const res = await api().post(`/api/v1/sessions/${s.id}:stop`).set(bearer(org.adminKey)).timeout(15000);
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'gateway_unavailable', details: { gatewayId: id('c') } });

    const queue = new Queue(gatewayCommandQueue(id('c')), { connection: redis, prefix: keys.bullPrefix });
    try {
      expect(await queue.getWaitingCount()).toBe(0);
    } finally {
      await queue.close();
    }

    // back up and cleanly shut down: it leaves the registry, so later placements never pick the node
    await startGateway('c');
    await gateways.get('c')!.stop();
  });

  it('re-places a session whose gateway heartbeat expired on a live gateway (start/restart), and stops it without one', async () => {
    await startGateway('d');
    const s = await createSession('on d');
    expect(s.gatewayId).toBe(id('d'));
    await waitStatus(s.id, 'scan_qr_code');
    await gateways.get('d')!.kill();
    await waitFor(async () => (await listGateways()).find((g) => g.id === id('d'))?.alive === false, 10000, 'gateway d to be dead');

    const stopped = await api().post(`/api/v1/sessions/${s.id}:stop`).set(bearer(org.adminKey));
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: 'stopped', gatewayId: id('d') });

    const restarted = await api().post(`/api/v1/sessions/${s.id}:restart`).set(bearer(org.adminKey));
    expect(restarted.status).toBe(200);
    expect([id('a'), id('b')]).toContain(restarted.body.gatewayId);
    await waitStatus(s.id, 'scan_qr_code');
  });

  it('answers 503 when no gateway is alive at all, and keeps no half-created session', async () => {
    for (const name of ['a', 'b']) await gateways.get(name)!.stop();
    const before = (await api().get('/api/v1/sessions?limit=100').set(bearer(org.adminKey))).body.data.length;
    const res = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'nowhere' });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('gateway_unavailable');
    expect((await api().get('/api/v1/sessions?limit=100').set(bearer(org.adminKey))).body.data.length).toBe(before);
  });
});
