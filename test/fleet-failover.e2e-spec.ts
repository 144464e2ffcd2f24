import { bootWebhookedFleet, isolateFleet, SimFleet, WebhookedFleet } from './support/fleet-harness';

const db = isolateFleet('failover');

import { E2E_ENGINE } from './support/engine';
import { waitFor } from './support/processes';
import type { Receiver } from './support/receivers';
import { bearer, SeededOrg, testDataSource } from './support/seed';
import { checkedRequest as request } from './support/api-app';

jest.setTimeout(240_000);

// the real engine logs each device in with Signal sessions and 812 pre-keys: a tenth of the sessions on a 2-core CI
// machine (docs/testing.md); what only the real protocol shows (offline delivery after the SIGKILL) holds for each
const SESSIONS = E2E_ENGINE === 'baileys' ? 10 : 100;
const SLOW = E2E_ENGINE === 'baileys' ? 2 : 1;

/**
 * CONTRACT 11 failover at default settings (heartbeat 2 s, TTL 6 s): nobody calls the API after the crash.
 * The time printed runs from the SIGKILL to the last of the 100 sessions `working` on its new gateway.
 */
describe(`Fleet failover: a SIGKILLed gateway’s sessions resume on the others by themselves (${E2E_ENGINE} engine)`, () => {
  const fleet = new SimFleet({ REBALANCE_MOVES_PER_MIN: '0', GATEWAY_CAPACITY: '200' });
  let world: WebhookedFleet;
  let org: SeededOrg;
  let receiver: Receiver;
  const ids: string[] = [];
  const api = () => request(world.app.getHttpServer());

  beforeAll(async () => {
    world = await bootWebhookedFleet(db, fleet, ['gw-doomed'], 'Failover Inc');
    ({ org, receiver } = world);
  });

  afterAll(async () => {
    await world?.close();
  });

  it(`moves all ${SESSIONS} working sessions of a killed gateway to the others, and the messages sent meanwhile all reach the webhook`, async () => {
    // all on one gateway first: it is the only one alive while they are created
    for (let i = 0; i < SESSIONS; i += 10) {
      const created = await Promise.all(
        Array.from({ length: Math.min(10, SESSIONS - i) }, (_, j) => api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `fo ${i + j}` })),
      );
      for (const res of created) {
        expect(res.status).toBe(201);
        expect(res.body.gatewayId).toBe('gw-doomed');
        ids.push(res.body.id);
      }
    }
    await fleet.pair(ids, { api, token: org.adminKey });
    const pg = await testDataSource();
    const working = async (gatewayFilter: string, since: Date) =>
      Number(
        (
          await pg.query(`SELECT count(*) AS n FROM sessions WHERE organization_id = $1 AND status = 'working' AND ${gatewayFilter} AND last_connected_at >= $2`, [
            org.id,
            since,
          ])
        )[0].n,
      );
    await waitFor(async () => (await working(`gateway_id = 'gw-doomed'`, new Date(0))) === SESSIONS, 30000 * SLOW, 'every session working on gw-doomed');
    await Promise.all([fleet.startGateway('gw-b'), fleet.startGateway('gw-c')]);

    const killedAt = new Date();
    await fleet.gateways.get('gw-doomed')!.proc.kill();
    // the contacts keep writing while the sessions have no gateway: the network holds the messages
    await waitFor(async () => (await fleet.simGet(`/sim/sessions/${ids[0]}`)).connected === false, 5000, 'the devices to drop');
    for (const id of ids) await fleet.simPost(`/sim/sessions/${id}/inbound`, { from: '15557770000@s.whatsapp.net', text: `during the outage ${id}` });

    await waitFor(async () => (await working(`gateway_id IN ('gw-b', 'gw-c')`, killedAt)) === SESSIONS, 60000 * SLOW, `all ${SESSIONS} sessions working on gw-b and gw-c`);
    const seconds = (Date.now() - killedAt.getTime()) / 1000;
    console.log(`failover of ${SESSIONS} sessions: all working on the other gateways ${seconds.toFixed(1)} s after the SIGKILL`);

    const rows: Array<{ gateway_id: string; n: string }> = await pg.query(
      `SELECT gateway_id, count(*) AS n FROM sessions WHERE organization_id = $1 GROUP BY gateway_id ORDER BY gateway_id`,
      [org.id],
    );
    // placed by free capacity: both survivors took a fair share
    for (const r of rows) expect(Number(r.n)).toBeGreaterThanOrEqual(SESSIONS * 0.4);

    // one move per session, announced with its reason, the status unchanged at that moment
    const moves: Array<{ session_id: string; p: { status: string; previousStatus: string; reason: string; fromGatewayId: string; toGatewayId: string } }> =
      await pg.query(`SELECT session_id, envelope->'payload' AS p FROM events WHERE organization_id = $1 AND type = 'session.status' AND envelope->'payload'->>'reason' = 'failover'`, [
        org.id,
      ]);
    expect(new Set(moves.map((m) => m.session_id)).size).toBe(SESSIONS);
    expect(moves).toHaveLength(SESSIONS);
    for (const m of moves) expect(m.p).toMatchObject({ status: 'working', previousStatus: 'working', fromGatewayId: 'gw-doomed' });

    // each message once: one event id per text (a webhook may redeliver an event, never announce a message twice)
    const expected = new Set(ids.map((id) => `during the outage ${id}`));
    const eventIdsByText = () => {
      const byText = new Map<string, Set<string>>();
      for (const r of receiver.at('/hooks')) {
        const body = JSON.parse(r.rawBody.toString());
        const text = body.payload?.message?.text;
        if (body.event === 'message.received' && expected.has(text)) byText.set(text, (byText.get(text) ?? new Set()).add(body.id));
      }
      return byText;
    };
    await waitFor(() => eventIdsByText().size === SESSIONS, 60000 * SLOW, 'every message sent during the outage to reach the webhook');
    const duplicated = [...eventIdsByText().values()].filter((events) => events.size > 1).length;
    console.log(`failover (${E2E_ENGINE}): ${SESSIONS} messages sent during the outage, 0 lost, ${duplicated} duplicated (by event id)`);
    expect(duplicated).toBe(0);

    // the leader recorded how long each session took, from the dead gateway's last heartbeat
    const metrics = (await fleet.metrics('gw-b')) + (await fleet.metrics('gw-c'));
    const observed = [...metrics.matchAll(/^gw_gateway_failover_duration_seconds_count\{app="gateway"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    await waitFor(async () => {
      const text = (await fleet.metrics('gw-b')) + (await fleet.metrics('gw-c'));
      return [...text.matchAll(/^gw_gateway_failover_duration_seconds_count\{app="gateway"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0) === SESSIONS;
    }, 10000, `the failover histogram to count ${SESSIONS} (counted ${observed})`);
    expect(metrics).toMatch(/gw_gateway_session_moves_in_total\{gateway="gw-(b|c)",reason="failover",app="gateway"\}/);
  });

  // issue 37: a leader frozen by SIGSTOP used to keep its advisory lock, and with it every failover, until resumed
  it('a SIGSTOPped leader loses the leadership: its sessions resume on the other gateway, the sends accepted meanwhile go out once, and it steps down when resumed', async () => {
    const pg = await testDataSource();
    const leads = async (id: string) => /^gw_gateway_supervisor_leader\{[^}]*\} 1$/m.test(await fleet.metrics(id));
    const leader = await waitFor(async () => ((await leads('gw-b')) ? 'gw-b' : (await leads('gw-c')) ? 'gw-c' : null), 10000, 'a leader among gw-b and gw-c');
    const other = leader === 'gw-b' ? 'gw-c' : 'gw-b';
    const held: string[] = (await pg.query(`SELECT id FROM sessions WHERE organization_id = $1 AND gateway_id = $2 ORDER BY id`, [org.id, leader])).map((r: { id: string }) => r.id);
    expect(held.length).toBeGreaterThan(0);
    const proc = fleet.gateways.get(leader)!.proc;

    const stoppedAt = new Date();
    proc.child.kill('SIGSTOP');
    try {
      // traffic while it is frozen: the API still shows these sessions working, so it accepts a send for each
      const text = (id: string) => `while the leader is frozen ${id}`;
      // a contact of its own per session: the emulator still hands one one-time pre-key to every sender (issue 37 item 9)
      for (const [i, id] of held.entries()) {
        const to = `1555888${String(i).padStart(4, '0')}@s.whatsapp.net`;
        const res = await api().post(`/api/v1/sessions/${id}/messages`).set(bearer(org.adminKey)).send({ to, text: text(id) });
        expect(res.status).toBe(202);
      }
      const movedAndWorking = async () =>
        Number(
          (
            await pg.query(`SELECT count(*) AS n FROM sessions WHERE id = ANY($1) AND gateway_id = $2 AND status = 'working' AND last_connected_at >= $3`, [
              held,
              other,
              stoppedAt,
            ])
          )[0].n,
        );
      await waitFor(async () => (await movedAndWorking()) === held.length, 60000 * SLOW, `the frozen leader's ${held.length} sessions working on ${other}`);
      console.log(`frozen leader (${E2E_ENGINE}): its ${held.length} sessions working on ${other} ${((Date.now() - stoppedAt.getTime()) / 1000).toFixed(1)} s after the SIGSTOP`);
      expect(await leads(other)).toBe(true);

      // every send accepted during the freeze reaches its contact, once
      const sentOnce = async () => {
        const sent: Array<{ text: string | null; sends: number }> = (await fleet.simGet('/sim/messages')).data;
        return held.map((id) => sent.filter((m) => m.text === text(id)));
      };
      await waitFor(async () => (await sentOnce()).every((copies) => copies.length > 0), 30000 * SLOW, 'every send of the freeze to reach its contact');

      // resumed, the old leader learns it lost before it acts: it steps down and holds nothing
      proc.child.kill('SIGCONT');
      await waitFor(async () => /^gw_gateway_supervisor_leader\{[^}]*\} 0$/m.test(await fleet.metrics(leader)), 20000, 'the resumed leader to step down');
      await waitFor(async () => /^gw_gateway_sessions\{[^}]*\} 0$/m.test(await fleet.metrics(leader)), 20000, 'the resumed gateway to hold nothing');
      expect(await leads(other)).toBe(true);
      for (const copies of await sentOnce()) expect(copies.map((m) => m.sends)).toEqual([1]);
      const placed = await pg.query(`SELECT count(*) AS n FROM sessions WHERE id = ANY($1) AND gateway_id = $2`, [held, other]);
      expect(Number(placed[0].n)).toBe(held.length);
    } finally {
      proc.child.kill('SIGCONT');
    }
  });
});
