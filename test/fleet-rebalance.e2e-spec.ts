import type { INestApplication } from '@nestjs/common';
import { bootFleet, isolateFleet, SimFleet } from './support/fleet-harness';

const db = isolateFleet('rebalance');

import { E2E_ENGINE } from './support/engine';
import { waitFor } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';
import { checkedRequest as request } from './support/api-app';

jest.setTimeout(180_000);

const RATE_PER_MIN = 20;
const SPACING_MS = 60_000 / RATE_PER_MIN;
// On the real engine the sessions are paired devices (a move hands over a logged-in socket: it must resume from the
// stored auth state on the new gateway, never show a QR again), fewer of them and a smaller capacity for the same 75 %
// spread: Baileys logs each device in with Signal sessions and 812 pre-keys (docs/testing.md).
const REAL = E2E_ENGINE === 'baileys';
const PER_GATEWAY = REAL ? 3 : 15;
const CAPACITY = REAL ? 4 : 20;
const MOVES_WATCHED = REAL ? 2 : 4;

/** Scale-out (CONTRACT 11): a new gateway takes existing sessions gradually, never faster than REBALANCE_MOVES_PER_MIN. */
describe(`Fleet rebalance: a fourth gateway joining (${E2E_ENGINE} engine)`, () => {
  const fleet = new SimFleet({
    GATEWAY_HEARTBEAT_MS: '250',
    GATEWAY_TTL_MS: '1500',
    SUPERVISOR_INTERVAL_MS: '100',
    GATEWAY_CAPACITY: String(CAPACITY),
    REBALANCE_MOVES_PER_MIN: String(RATE_PER_MIN),
    REBALANCE_THRESHOLD: '10',
  });
  let app: INestApplication;
  let org: SeededOrg;

  beforeAll(async () => {
    app = await bootFleet(db, fleet, ['gw-a', 'gw-b', 'gw-c']);
    org = await seedOrganization('Rebalance Inc');
  });

  afterAll(async () => {
    await app?.close();
    await fleet.stopAll();
    await closeTestDataSource();
    await db.drop();
  });

  it(`gets sessions from the full gateways, one every ${SPACING_MS / 1000} s at most`, async () => {
    const api = () => request(app.getHttpServer());
    const created: string[] = [];
    for (let i = 0; i < 3 * PER_GATEWAY; i++) {
      const res = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `rb ${i}` });
      expect(res.status).toBe(201);
      created.push(res.body.id);
    }
    const pg = await testDataSource();
    const statusOf = async (id: string): Promise<string> => (await api().get(`/api/v1/sessions/${id}`).set(bearer(org.adminKey))).body.status;
    if (REAL) {
      await fleet.pair(created, { api, token: org.adminKey });
      await waitFor(async () => (await Promise.all(created.map(statusOf))).every((s) => s === 'working'), 120_000, 'every paired session working');
    }
    const placed = async () =>
      new Map(
        ((await pg.query(`SELECT gateway_id, count(*) AS n FROM sessions WHERE organization_id = $1 GROUP BY gateway_id`, [org.id])) as Array<{ gateway_id: string; n: string }>).map(
          (r) => [r.gateway_id, Number(r.n)],
        ),
      );
    // 75 % of capacity each: balanced, nothing moves
    expect([...(await placed()).values()]).toEqual([PER_GATEWAY, PER_GATEWAY, PER_GATEWAY]);

    const joinedAt = Date.now();
    await fleet.startGateway('gw-new');
    type Move = { session_id: string; at: string; p: { reason: string; fromGatewayId: string; toGatewayId: string; status: string; previousStatus: string } };
    const rebalanceMoves = async (): Promise<Move[]> =>
      pg.query(
        `SELECT session_id, envelope->>'timestamp' AS at, envelope->'payload' AS p FROM events
          WHERE organization_id = $1 AND type = 'session.status' AND envelope->'payload'->>'reason' = 'rebalance' ORDER BY (envelope->>'timestamp')::bigint`,
        [org.id],
      );
    // watch until several moves happened (the spread justifies more at once): they keep the rate's spacing
    await waitFor(async () => (await rebalanceMoves()).length >= MOVES_WATCHED, 15000 + MOVES_WATCHED * 2 * SPACING_MS, `${MOVES_WATCHED} moves to gw-new`);
    const moves = await rebalanceMoves();
    const watchedMs = Date.now() - joinedAt;
    // at most the configured rate over the time watched (one may fall at either end of the window); a loaded machine
    // only makes fewer
    expect(moves.length).toBeLessThanOrEqual(Math.floor(watchedMs / SPACING_MS) + 1);
    const at = moves.map((m) => Number(m.at));
    // the leader decides a move no sooner than SPACING_MS after the last one; the event's timestamp is taken when the
    // move is published, a little later and by a varying amount on a loaded machine, so two consecutive stamps can
    // come closer than the spacing by that lag. Half the spacing is that allowance; without the rate limit, moves
    // would follow each other within a supervisor tick (100 ms).
    for (let i = 1; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(SPACING_MS / 2);
    // over the whole run the lag cancels out but for one move's worth
    expect(at[at.length - 1] - at[0]).toBeGreaterThanOrEqual((at.length - 2) * SPACING_MS);
    for (const m of moves) {
      expect(m.p.toGatewayId).toBe('gw-new');
      expect(['gw-a', 'gw-b', 'gw-c']).toContain(m.p.fromGatewayId);
      expect(m.p.status).toBe(m.p.previousStatus);
    }
    // every announced move is in the table: the sessions it names are placed on gw-new
    const onNew: Array<{ id: string }> = await pg.query(`SELECT id FROM sessions WHERE organization_id = $1 AND gateway_id = 'gw-new'`, [org.id]);
    expect(new Set(onNew.map((r) => r.id))).toEqual(new Set(moves.map((m) => m.session_id)));
    // and the operator sees the moves on the leader's metrics
    const metrics = (await Promise.all(['gw-a', 'gw-b', 'gw-c', 'gw-new'].map((id) => fleet.metrics(id)))).join('\n');
    const counted = [...metrics.matchAll(/^gw_gateway_session_moves_in_total\{gateway="gw-new",reason="rebalance",app="gateway"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    expect(counted).toBeGreaterThanOrEqual(moves.length);

    if (REAL) {
      // a moved device resumes on gw-new from its stored auth state: working there, never asked for a QR again
      const movedIds = moves.map((m) => m.session_id);
      await waitFor(async () => (await Promise.all(movedIds.map(statusOf))).every((s) => s === 'working'), 60_000, 'the moved sessions working on gw-new');
      const qrsAfterMove: Array<{ n: string }> = await pg.query(
        `SELECT count(*) AS n FROM events WHERE session_id = ANY($1) AND type = 'session.status'
            AND envelope->'payload'->>'status' = 'scan_qr_code' AND (envelope->>'timestamp')::bigint > $2`,
        [movedIds, joinedAt],
      );
      expect(Number(qrsAfterMove[0].n)).toBe(0);
      for (const id of movedIds) expect((await fleet.simGet(`/sim/sessions/${id}`)).connected).toBe(true);
    }
  });
});
