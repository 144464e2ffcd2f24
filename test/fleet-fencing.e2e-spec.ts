import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace, so only its own gateways are live here
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:fleet-fencing-${process.env.E2E_ENGINE ?? 'sim'}-${process.pid}`;

import { REGISTRY_KEYS } from '@app/contracts';
import { SessionsRepository } from '@app/database';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { E2E_ENGINE, pairSession } from './support/engine';
import { startSimGateway } from './support/fleet';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDb } from './support/seed';

/**
 * On baileys the lease TTL is raised to 10 s (support/engine.ts) and the network's keepalive is longer: a first login
 * blocks Baileys' event loop while it makes its pre-keys, and its socket must not look frozen then.
 */
const BAILEYS = E2E_ENGINE === 'baileys';
const KEEPALIVE_MS = BAILEYS ? 3000 : 300;
const WAIT_MS = BAILEYS ? 30_000 : 10_000;

describe(`Fleet fencing: a paused gateway that lost its lease never opens the device again (${E2E_ENGINE} engine)`, () => {
  let app: INestApplication;
  let sim: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let redis: Redis;
  const keys = new RedisKeys(process.env.REDIS_KEY_PREFIX!);
  const gateways = new Map<string, AppProcess>();
  const id = (name: string) => `gw-${name}-${E2E_ENGINE}-${process.pid}`;
  const api = () => request(app.getHttpServer());
  const { get: simGet } = simControl(() => simUrl);
  const getSession = async (sid: string) => (await api().get(`/api/v1/sessions/${sid}`).set(bearer(org.adminKey))).body;
  const startGateway = async (name: string) => {
    const { proc } = await startSimGateway(simUrl, id(name), { GATEWAY_HEARTBEAT_MS: '500', GATEWAY_TTL_MS: '3000', GATEWAY_ADOPT_INTERVAL_MS: '250' });
    gateways.set(name, proc);
    return proc;
  };

  beforeAll(async () => {
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    // the network drops a socket that stops answering pings, as WhatsApp does with a frozen client
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000', SIM_KEEPALIVE_MS: String(KEEPALIVE_MS) }, `${simUrl}/healthz`);
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Fencing Inc');
    redis = createRedis(process.env.REDIS_URL!);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    for (const g of gateways.values()) {
      g.child.kill('SIGCONT');
      await g.stop();
    }
    await sim?.stop();
    redis?.disconnect();
    await closeTestDataSource();
  });

  it('SIGSTOP past the lease TTL while another gateway takes over, then SIGCONT: the resumed one closes without a second open', async () => {
    const paused = await startGateway('paused');
    const s = (await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'fenced' })).body;
    expect(s.gatewayId).toBe(id('paused'));
    await pairSession({ api, token: org.adminKey, simUrl, sessionId: s.id, timeoutMs: WAIT_MS });
    await startGateway('taker');
    // a pairing is one open on the sim door, two on WhatsApp Web (pair-success, then the login after the 515 restart)
    const paired = await simGet(`/sim/sessions/${s.id}`);
    expect(paired).toMatchObject({ connected: true, maxConcurrent: 1 });

    paused.child.kill('SIGSTOP');
    // the network drops the frozen gateway's socket (it answers no ping), as WhatsApp does with a frozen client
    await waitFor(async () => (await simGet(`/sim/sessions/${s.id}`)).connected === false, WAIT_MS, 'the network to drop the frozen socket');
    // past the TTL: the paused gateway's epoch, and with it its lease, is gone
    await waitFor(async () => (await redis.exists(keys.key(REGISTRY_KEYS.leaseNode(id('paused'))))) === 0, WAIT_MS, 'the lease to expire');
    // the takeover: the taker's supervisor makes it on its own (it leads once the paused gateway's leader lease ran
    // out, issue 37), and here by hand too, whichever comes first: move the row (the taker adopts it)
    const sessionsRepo = new SessionsRepository(await testDb());
    await sessionsRepo.moveToGateway(s.id, id('paused'), id('taker'));
    await waitFor(async () => (await getSession(s.id)).gatewayId === id('taker'), WAIT_MS, 'the row to name the taker');
    await waitFor(async () => (await simGet(`/sim/sessions/${s.id}`)).opens === paired.opens + 1, WAIT_MS, 'the taker to open the device');
    await waitFor(async () => (await getSession(s.id)).status === 'working', WAIT_MS, 'the session to work on the taker');

    paused.child.kill('SIGCONT');
    // the resumed gateway beats again (it is alive) and has converged on the table: it holds nothing
    await waitFor(async () => (await redis.exists(keys.key(REGISTRY_KEYS.alive(id('paused'))))) === 1, WAIT_MS, 'the resumed gateway to beat');
    // several of its heartbeats and converge passes go by
    const beats = (await redis.get(keys.key(REGISTRY_KEYS.alive(id('paused'))))) ?? '0';
    await waitFor(async () => Number((await redis.get(keys.key(REGISTRY_KEYS.alive(id('paused'))))) ?? 0) > Number(beats) + 2000, WAIT_MS, 'two seconds of beats');

    expect(await simGet(`/sim/sessions/${s.id}`)).toMatchObject({ connected: true, opens: paired.opens + 1, maxConcurrent: 1 });
    const after = await getSession(s.id);
    expect(after).toMatchObject({ status: 'working', gatewayId: id('taker') });
    const holder = await redis.get(keys.key(REGISTRY_KEYS.lease(s.id)));
    expect(holder?.startsWith(`${id('taker')}|`)).toBe(true);
  }, BAILEYS ? 150_000 : 90_000);
});
