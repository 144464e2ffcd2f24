import { request as httpRequest } from 'node:http';
import { bootWebhookedFleet, FleetGateway, isolateFleet, SimFleet, WebhookedFleet } from './support/fleet-harness';

const db = isolateFleet('inbound-ack');

import { waitFor } from './support/processes';
import type { Receiver } from './support/receivers';
import { bearer, SeededOrg, testDataSource } from './support/seed';
import { checkedRequest as request } from './support/api-app';

jest.setTimeout(120_000);

/** The burst a contact sends, and how many of it go out before the fault. */
const BURST = 300;
const BEFORE_FAULT = 100;
/** Control-API calls in flight at once: fast enough to build a backlog on the gateway, as a real burst does. */
const SEND_CONCURRENCY = 25;
const CONTACT = '15557770000@s.whatsapp.net';

/** What one fault run counted (printed for the figures). */
interface Figures {
  fault: string;
  sent: number;
  stored: number;
  announced: number;
  delivered: number;
  lost: number;
  duplicated: number;
}

/**
 * Issue 17, handoffs: a contact writes a burst of 300 messages to a session while its gateway is drained (SIGTERM),
 * killed (SIGKILL), or loses the session to a rebalance move; every message must reach a real webhook receiver, none
 * twice. Lost = sent and never received; duplicated = a message received under more than one X-Webhook-Request-Id
 * (a retry of one delivery repeats its request id and is not a duplicate) or announced by more than one event.
 */
describe('Inbound messages are acknowledged only once durable: nothing the network hands over is lost (issue 17)', () => {
  const fleet = new SimFleet({
    GATEWAY_HEARTBEAT_MS: '250',
    GATEWAY_TTL_MS: '1500',
    GATEWAY_ADOPT_INTERVAL_MS: '250',
    SUPERVISOR_INTERVAL_MS: '100',
    RECONNECT_BASE_DELAY_MS: '100',
    RECONNECT_MAX_DELAY_MS: '500',
    GATEWAY_DRAIN_GRACE_MS: '20000',
    REBALANCE_MOVES_PER_MIN: '0',
  });
  let world: WebhookedFleet;
  let org: SeededOrg;
  let receiver: Receiver;
  const figures: Figures[] = [];
  const api = () => request(world.app.getHttpServer());

  beforeAll(async () => {
    world = await bootWebhookedFleet(db, fleet, [], 'Handoff Inc');
    ({ org, receiver } = world);
  });

  afterAll(async () => {
    if (figures.length > 0) console.log(`inbound through faults:\n${figures.map((f) => JSON.stringify(f)).join('\n')}`);
    await world?.close();
  });

  /** Creates `n` sessions (placed on the only gateway up), pairs them and waits until they work. */
  async function workingSessions(n: number, gatewayId: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `handoff ${gatewayId} ${i}` });
      expect(res.status).toBe(201);
      expect(res.body.gatewayId).toBe(gatewayId);
      ids.push(res.body.id);
    }
    await fleet.pair(ids);
    const pg = await testDataSource();
    await waitFor(
      async () => Number((await pg.query(`SELECT count(*) AS n FROM sessions WHERE id = ANY($1) AND status = 'working'`, [ids]))[0].n) === n,
      20_000,
      'the sessions to work',
    );
    return ids;
  }

  /**
   * One message through the control API, on a connection of its own: a burst reusing pooled keep-alive sockets met
   * "other side closed" from the simulator now and then, which would fail the run for a reason that is not the test's.
   */
  function inbound(sessionId: string, text: string): Promise<{ id?: unknown }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        `${fleet.simUrl}/sim/sessions/${sessionId}/inbound`,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => {
            try {
              resolve(JSON.parse(body));
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ from: CONTACT, text }));
    });
  }

  /** The contact's messages `from`..`to` (exclusive), `concurrency` at a time; the network's waMessageIds in order. */
  async function send(sessionId: string, from: number, to: number, tag: string, concurrency = SEND_CONCURRENCY): Promise<string[]> {
    const ids: string[] = new Array(to - from);
    let next = from;
    const worker = async () => {
      for (let i = next++; i < to; i = next++) {
        const res = await inbound(sessionId, `${tag} ${i}`);
        if (typeof res.id !== 'string') throw new Error(`the simulator refused message ${i}: ${JSON.stringify(res)}`);
        ids[i - from] = res.id;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return ids;
  }

  /** What reached the receiver for these waMessageIds: request ids and event ids per message. */
  function received(sent: readonly string[]): Map<string, { requests: Set<string>; events: Set<string> }> {
    const wanted = new Set(sent);
    const seen = new Map<string, { requests: Set<string>; events: Set<string> }>();
    for (const r of receiver.at('/hooks')) {
      const body = JSON.parse(r.rawBody.toString());
      const wa = body.payload?.message?.waMessageId;
      if (body.event !== 'message.received' || !wanted.has(wa)) continue;
      const entry = seen.get(wa) ?? { requests: new Set(), events: new Set() };
      entry.requests.add(String(r.headers['x-webhook-request-id']));
      entry.events.add(body.id);
      seen.set(wa, entry);
    }
    return seen;
  }

  /**
   * Waits until every sent message has reached the receiver and every event announcing one was delivered (so a late
   * duplicate would be seen too), or up to `patienceMs` when some never arrive (the code before the fix); then counts.
   */
  async function count(fault: string, sessionIds: string | string[], sent: readonly string[], patienceMs = 45_000): Promise<Figures> {
    const sessions = ([] as string[]).concat(sessionIds);
    const pg = await testDataSource();
    const announced = async (): Promise<number> =>
      Number(
        (
          await pg.query(
            `SELECT count(*) AS n FROM events WHERE type = 'message.received' AND session_id = ANY($1) AND envelope->'payload'->'message'->>'waMessageId' = ANY($2)`,
            [sessions, sent],
          )
        )[0].n,
      );
    const settled = async () => {
      const seen = received(sent);
      if (seen.size < sent.length) return false;
      const events = new Set([...seen.values()].flatMap((e) => [...e.events]));
      return events.size >= (await announced());
    };
    await waitFor(settled, patienceMs, `all ${sent.length} messages of the ${fault} run at the receiver`).catch(() => undefined);
    const seen = received(sent);
    const stored = Number((await pg.query(`SELECT count(*) AS n FROM messages WHERE session_id = ANY($1) AND wa_message_id = ANY($2)`, [sessions, sent]))[0].n);
    let duplicated = 0;
    for (const entry of seen.values()) duplicated += Math.max(entry.requests.size, entry.events.size) - 1;
    const result: Figures = {
      fault,
      sent: sent.length,
      stored,
      announced: await announced(),
      delivered: seen.size,
      lost: sent.length - seen.size,
      duplicated,
    };
    figures.push(result);
    console.log(`inbound through ${fault}: ${JSON.stringify(result)}`);
    return result;
  }

  const expectNothingLost = (f: Figures) => {
    expect({ lost: f.lost, duplicated: f.duplicated, stored: f.stored, announced: f.announced }).toEqual({
      lost: 0,
      duplicated: 0,
      stored: f.sent,
      announced: f.sent,
    });
  };

  const started = (id: string): Promise<FleetGateway> => fleet.startGateway(id);

  // each run on a fleet of its own: the next run's supervisor must find nothing of this one to fail over or move,
  // even when this one failed half-way. Killed, not stopped: gateways stopped together would each drain, find no
  // other gateway to take their sessions, and wait out the grace period
  afterEach(async () => {
    await Promise.all([...fleet.gateways.values()].map((g) => g.proc.kill()));
    fleet.gateways.clear();
    // placement must not pick a killed gateway whose heartbeat has not expired yet
    await waitFor(
      async () => ((await api().get('/api/v1/gateways').set(bearer(org.adminKey))).body.data as Array<{ alive: boolean }>).every((g) => !g.alive),
      10_000,
      'the killed gateways to expire',
    );
    await (await testDataSource()).query(`UPDATE sessions SET desired_state = 'stopped', status = 'stopped' WHERE organization_id = $1`, [org.id]);
  });

  it('(a) SIGTERM during a burst: the drain hands the session to the other gateway and all 300 messages arrive, once', async () => {
    const doomed = await started('gw-drained');
    const [sessionId] = await workingSessions(1, 'gw-drained');
    await started('gw-heir');

    const exited = new Promise<number | null>((resolve) => doomed.proc.child.once('exit', (code) => resolve(code)));
    const sent = await send(sessionId, 0, BEFORE_FAULT, 'drain');
    doomed.proc.child.kill('SIGTERM');
    sent.push(...(await send(sessionId, BEFORE_FAULT, BURST, 'drain')));
    expect(await exited).toBe(0);

    const f = await count('drain (SIGTERM)', sessionId, sent);
    expectNothingLost(f);
    const pg = await testDataSource();
    expect((await pg.query(`SELECT gateway_id FROM sessions WHERE id = $1`, [sessionId]))[0].gateway_id).toBe('gw-heir');
  });

  it('(b) SIGKILL during a burst: failover to the other gateway and all 300 messages arrive, once', async () => {
    await started('gw-killed');
    const [sessionId] = await workingSessions(1, 'gw-killed');
    await started('gw-survivor');

    const sent = await send(sessionId, 0, BEFORE_FAULT, 'kill');
    await fleet.gateways.get('gw-killed')!.proc.kill();
    sent.push(...(await send(sessionId, BEFORE_FAULT, BURST, 'kill')));

    const f = await count('failover (SIGKILL)', sessionId, sent);
    expectNothingLost(f);
    const pg = await testDataSource();
    expect((await pg.query(`SELECT gateway_id FROM sessions WHERE id = $1`, [sessionId]))[0].gateway_id).toBe('gw-survivor');
  });

  it('(c) a rebalance move in the middle of a burst: the session changes gateway and all 300 messages arrive, once', async () => {
    const rebalancing = { REBALANCE_MOVES_PER_MIN: '600', REBALANCE_THRESHOLD: '10', GATEWAY_CAPACITY: '10' };
    // the first gateway leads (it is alone when it starts); both would rebalance
    await fleet.startGateway('gw-full', rebalancing);
    const [sessionId, other] = await workingSessions(2, 'gw-full');
    // 1 session against 0 is balanced: nothing moves until `other` runs again, which is when the test chooses
    expect((await api().post(`/api/v1/sessions/${other}:stop`).set(bearer(org.adminKey))).status).toBe(200);
    await fleet.startGateway('gw-empty', rebalancing);

    const sent = await send(sessionId, 0, BEFORE_FAULT, 'move');
    // 2 against 0: the leader moves the first session by id (ours, created first) while the burst goes on
    expect((await api().post(`/api/v1/sessions/${other}:start`).set(bearer(org.adminKey))).status).toBe(200);
    sent.push(...(await send(sessionId, BEFORE_FAULT, BURST, 'move')));
    const pg = await testDataSource();
    expect((await pg.query(`SELECT gateway_id FROM sessions WHERE id = $1`, [sessionId]))[0].gateway_id).toBe('gw-empty');

    const f = await count('rebalance move', sessionId, sent);
    expectNothingLost(f);
    const moves = await pg.query(`SELECT count(*)::int AS n FROM events WHERE type = 'session.status' AND session_id = $1 AND envelope->'payload'->>'reason' = 'rebalance'`, [
      sessionId,
    ]);
    expect(moves[0].n).toBe(1);
  });

  it('(d) writes that fail while the socket stays up: the events are retried in place, never acked meanwhile, and all arrive in order without a reconnect', async () => {
    await started('gw-failing');
    const [sessionId] = await workingSessions(1, 'gw-failing');
    const pg = await testDataSource();
    const opensBefore = (await fleet.simGet(`/sim/sessions/${sessionId}`)).opens;
    // PostgreSQL refuses this session's message rows (a failing write, not an outage: everything else works)
    await pg.query(`CREATE FUNCTION refuse_message() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await pg.query(`CREATE TRIGGER refuse_message BEFORE INSERT ON messages FOR EACH ROW WHEN (NEW.session_id = '${sessionId}') EXECUTE FUNCTION refuse_message()`);
    let sent: string[];
    try {
      // one at a time, so the network's order is the order of `sent`
      sent = await send(sessionId, 0, 100, 'refused', 1);
      // the device holds all of them un-acknowledged (the gateway retries the first, the rest wait behind it)
      await waitFor(async () => (await fleet.simGet(`/sim/sessions/${sessionId}`)).pendingInbound === 100, 15_000, 'the network to hold the 100 un-acked');
    } finally {
      await pg.query(`DROP TRIGGER IF EXISTS refuse_message ON messages`);
      await pg.query(`DROP FUNCTION IF EXISTS refuse_message()`);
    }
    sent.push(...(await send(sessionId, 100, 150, 'after', 1)));

    const f = await count('failing writes', sessionId, sent);
    expectNothingLost(f);
    await waitFor(async () => (await fleet.simGet(`/sim/sessions/${sessionId}`)).pendingInbound === 0, 10_000, 'every event acked');
    // taken in place, in the network's order: no reconnect redelivered them
    expect((await fleet.simGet(`/sim/sessions/${sessionId}`)).opens).toBe(opensBefore);
    const stored: Array<{ wa_message_id: string }> = await pg.query(`SELECT wa_message_id FROM messages WHERE session_id = $1 AND direction = 'in' ORDER BY id`, [sessionId]);
    expect(stored.map((r) => r.wa_message_id)).toEqual(sent);
  });

  it('(e) SIGTERM of a loaded gateway: 20 sessions with backlogs are all moved by the drain (none left for failover) within its grace period', async () => {
    const SESSIONS = 20;
    const PER_SESSION = 100;
    const loaded = await fleet.startGateway('gw-loaded', { GATEWAY_DRAIN_GRACE_MS: '8000' });
    const ids = await workingSessions(SESSIONS, 'gw-loaded');
    await started('gw-taker');

    let exitedAt = 0;
    const exited = new Promise<number | null>((resolve) => loaded.proc.child.once('exit', (code) => ((exitedAt = Date.now()), resolve(code))));
    const sendAll = (from: number, to: number) => Promise.all(ids.map((id) => send(id, from, to, 'loaded', 5)));
    // a backlog on every session: the network hands them over faster than the gateway stores them
    const sent = (await sendAll(0, PER_SESSION - 10)).flat();
    const termAt = Date.now();
    loaded.proc.child.kill('SIGTERM');
    sent.push(...(await sendAll(PER_SESSION - 10, PER_SESSION)).flat());
    expect(await exited).toBe(0);
    const drainMs = exitedAt - termAt;

    const f = await count('loaded drain (20 sessions)', ids, sent);
    expectNothingLost(f);
    const pg = await testDataSource();
    const moves: Array<{ reason: string; n: number }> = await pg.query(
      `SELECT envelope->'payload'->>'reason' AS reason, count(*)::int AS n FROM events WHERE type = 'session.status' AND session_id = ANY($1)
          AND envelope->'payload'->>'reason' IN ('drain', 'failover') GROUP BY 1`,
      [ids],
    );
    console.log(`loaded drain: exit after ${drainMs} ms, moves ${JSON.stringify(moves)}`);
    expect(moves).toEqual([{ reason: 'drain', n: SESSIONS }]);
  });
});
