import type { INestApplication } from '@nestjs/common';
import { bootFleet, isolateFleet, SimFleet } from './support/fleet-harness';

const db = isolateFleet('race');
process.env.COMMAND_TIMEOUT_MS = '3000';
// the sends through moves count statuses: only the sessions' own rates (raised there) may refuse, not the credential's
process.env.RATE_LIMIT_CREDENTIAL_PER_MIN = '100000';

import { REGISTRY_KEYS } from '@app/contracts';
import { SessionsRepository } from '@app/database';
import { AdoptSignal } from '@app/fleet';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource, testDb } from './support/seed';
import { checkedRequest as request } from './support/api-app';

jest.setTimeout(180_000);

const SESSIONS = 30;

/**
 * Every mover at once: the gateways' supervisors (one leads) and two API replicas that re-place the sessions of a dead
 * gateway on start. Exactly one move wins per session, so each ends with one holder.
 */
describe('Fleet race: supervisors and API replicas racing for the same orphans', () => {
  const fast = { GATEWAY_HEARTBEAT_MS: '250', GATEWAY_TTL_MS: '1500', SUPERVISOR_INTERVAL_MS: '100', RECONNECT_BASE_DELAY_MS: '100', REBALANCE_MOVES_PER_MIN: '0' };
  const fleet = new SimFleet({ ...fast, GATEWAY_CAPACITY: '100' });
  let app: INestApplication;
  let replica: AppProcess;
  let replicaUrl: string;
  let org: SeededOrg;
  let redis: Redis;
  const keys = new RedisKeys(process.env.REDIS_KEY_PREFIX!);

  beforeAll(async () => {
    app = await bootFleet(db, fleet, ['gw-doomed']);
    const port = await freePort();
    replicaUrl = `http://127.0.0.1:${port}`;
    replica = await startApp('api', { PORT: String(port) }, `${replicaUrl}/healthz`);
    org = await seedOrganization('Race Inc');
    redis = createRedis(process.env.REDIS_URL!);
  });

  afterAll(async () => {
    await app?.close();
    await replica?.stop();
    await fleet.stopAll();
    redis?.disconnect();
    await closeTestDataSource();
    await db.drop();
  });

  it('ends with exactly one holder per session: one gateway in the row, the lease, the only runner, one device socket', async () => {
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const res = await request(app.getHttpServer()).post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `race ${i}` });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    await fleet.pair(ids);
    const pg = await testDataSource();
    const workingOn = async (filter: string, since: Date) =>
      Number((await pg.query(`SELECT count(*) AS n FROM sessions WHERE organization_id = $1 AND status = 'working' AND ${filter} AND last_connected_at >= $2`, [org.id, since]))[0].n);
    await waitFor(async () => (await workingOn(`gateway_id = 'gw-doomed'`, new Date(0))) === SESSIONS, 30000, 'all working on gw-doomed');
    await Promise.all(['gw-b', 'gw-c', 'gw-d'].map((id) => fleet.startGateway(id)));

    const killedAt = new Date();
    await fleet.gateways.get('gw-doomed')!.proc.kill();
    await waitFor(async () => (await redis.exists(keys.key(REGISTRY_KEYS.alive('gw-doomed')))) === 0, 10000, 'gw-doomed to expire');
    // both replicas start every session at once while the leader fails them over
    const replicas = [request(app.getHttpServer()), request(replicaUrl)];
    const answers = await Promise.all(ids.flatMap((id) => replicas.map((r) => r.post(`/api/v1/sessions/${id}:start`).set(bearer(org.adminKey)))));
    for (const a of answers) expect([200, 503]).toContain(a.status);

    await waitFor(async () => (await workingOn(`gateway_id IN ('gw-b', 'gw-c', 'gw-d')`, killedAt)) === SESSIONS, 60000, 'all working on the survivors');
    // a runner a lost mover had started would show up as a second lease holder or as a session counted twice
    await new Promise((r) => setTimeout(r, 3000));
    const rows: Array<{ id: string; gateway_id: string; status: string }> = await pg.query(`SELECT id, gateway_id, status FROM sessions WHERE organization_id = $1`, [org.id]);
    for (const row of rows) {
      expect(row.status).toBe('working');
      const lease = await redis.get(keys.key(REGISTRY_KEYS.lease(row.id)));
      expect(lease?.split('|')[0]).toBe(row.gateway_id);
      const device = await fleet.simGet(`/sim/sessions/${row.id}`);
      expect(device.connected).toBe(true);
      if (device.maxConcurrent !== undefined) expect(device.maxConcurrent).toBe(1);
    }
    const held = await waitFor(
      async () => {
        const listed = (await request(app.getHttpServer()).get('/api/v1/gateways').set(bearer(org.adminKey))).body.data as Array<{ id: string; alive: boolean; sessionCount: number }>;
        const live = listed.filter((g) => g.alive);
        const perRow = new Map<string, number>();
        for (const r of rows) perRow.set(r.gateway_id, (perRow.get(r.gateway_id) ?? 0) + 1);
        return live.every((g) => g.sessionCount === (perRow.get(g.id) ?? 0)) ? live : null;
      },
      10000,
      'each gateway to hold exactly the sessions its rows name',
    );
    expect(held.reduce((n, g) => n + g.sessionCount, 0)).toBe(SESSIONS);
  });

  // issue 37 item 7: a send refused while its session was `starting` on the new gateway, read `working` again, was a 500
  it('sends racing repeated moves between gateways: each answered 202 or 409, never 500, and every 202 sent once', async () => {
    const pg = await testDataSource();
    const sessions = new SessionsRepository(await testDb());
    const movers = ['gw-b', 'gw-c', 'gw-d'];
    const adopt = new AdoptSignal(keys);
    const moving: Array<{ id: string; gateway_id: string }> = await pg.query(`SELECT id, gateway_id FROM sessions WHERE organization_id = $1 ORDER BY id LIMIT 4`, [org.id]);
    for (const s of moving) {
      const patched = await request(app.getHttpServer()).patch(`/api/v1/sessions/${s.id}`).set(bearer(org.adminKey)).send({ ratePerMin: 10000, ratePerHour: 1000000 });
      expect(patched.status).toBe(200);
    }
    const statuses = new Map<number, number>();
    const accepted = new Map<string, string>();
    let done = false;
    let n = 0;
    const sender = async () => {
      while (!done) {
        const session = moving[n % moving.length];
        const text = `through the moves ${n++}`;
        const res = await request(app.getHttpServer()).post(`/api/v1/sessions/${session.id}/messages`).set(bearer(org.adminKey)).send({ to: '15559990000', text });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 202) accepted.set(res.body.id, text);
      }
    };
    const senders = Array.from({ length: 6 }, sender);
    try {
      // each session goes once round the three gateways, one move at a time, each landing `working` before the next
      for (let round = 1; round <= 3; round++) {
        for (const s of moving) {
          const to = movers[(movers.indexOf(s.gateway_id) + 1) % movers.length];
          const movedAt = new Date();
          expect(await sessions.moveToGateway(s.id, s.gateway_id, to)).toBe(true);
          // as a rebalance does: both gateways converge on the signal (the source lets go, the target adopts)
          await Promise.all([adopt.notify(redis, to), adopt.notify(redis, s.gateway_id)]);
          s.gateway_id = to;
          await waitFor(
            async () => (await pg.query(`SELECT 1 FROM sessions WHERE id = $1 AND gateway_id = $2 AND status = 'working' AND last_connected_at >= $3`, [s.id, to, movedAt])).length === 1,
            20000,
            `${s.id} working on ${to}`,
          );
        }
      }
    } finally {
      done = true;
      await Promise.all(senders);
    }
    console.log(`sends through ${3 * moving.length} moves: ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect([...statuses.keys()].filter((status) => status !== 202 && status !== 409)).toEqual([]);
    expect(statuses.get(202)).toBeGreaterThan(0);

    const ids = [...accepted.keys()];
    await waitFor(
      async () => Number((await pg.query(`SELECT count(*) AS n FROM messages WHERE id = ANY($1) AND status = 'sent'`, [ids]))[0].n) === ids.length,
      30000,
      `all ${ids.length} accepted sends to be sent`,
    );
    const onNetwork: Array<{ text: string | null; sends: number }> = (await fleet.simGet('/sim/messages')).data;
    const copies = new Map<string, number[]>();
    for (const m of onNetwork) if (m.text?.startsWith('through the moves ')) copies.set(m.text, [...(copies.get(m.text) ?? []), m.sends]);
    for (const text of accepted.values()) expect([text, copies.get(text)]).toEqual([text, [1]]);
    expect(copies.size).toBe(accepted.size);
  });
});
