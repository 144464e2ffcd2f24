import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace, so only its own gateways are live here
// (and per engine: `npm test` runs this file on both engines in one process, docs/testing.md)
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:fleet-drain-${process.env.E2E_ENGINE ?? 'sim'}-${process.pid}`;

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { E2E_ENGINE, pairSession } from './support/engine';
import { startSimGateway } from './support/fleet';
import { AppProcess, freePort, runToExit, startApp, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { createWebhookRow, Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';

// the real engine logs each device in with Signal sessions and 812 pre-keys: a fifth of the sessions on a 2-core CI
// machine (docs/testing.md), with the same burst of inbound messages during the drain
const SESSIONS = E2E_ENGINE === 'baileys' ? 10 : 50;
const BURST = 300;
const SLOW = E2E_ENGINE === 'baileys' ? 2 : 1;

describe(`Fleet drain: SIGTERM hands every session to the other gateways, one by one (${E2E_ENGINE} engine)`, () => {
  let app: INestApplication;
  let sim: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let receiver: Receiver;
  let dispatcher: AppProcess;
  const gateways = new Map<string, AppProcess>();
  const id = (name: string) => `gw-${name}-${E2E_ENGINE}-${process.pid}`;
  const api = () => request(app.getHttpServer());
  const { post: simPost } = simControl(() => simUrl);
  const sessions = async (): Promise<Array<{ id: string; status: string; gatewayId: string }>> =>
    (await api().get('/api/v1/sessions?limit=100').set(bearer(org.adminKey))).body.data;
  const startGateway = async (name: string) => {
    const started = await startSimGateway(simUrl, id(name), {
      GATEWAY_HEARTBEAT_MS: '250',
      GATEWAY_TTL_MS: '1500',
      GATEWAY_ADOPT_INTERVAL_MS: '250',
      GATEWAY_DRAIN_GRACE_MS: '25000',
    });
    gateways.set(name, started.proc);
    return started;
  };

  beforeAll(async () => {
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Drain Inc');
    receiver = await startReceiver();
    await createWebhookRow(await testDataSource(), null, { organizationId: org.id, url: `${receiver.url}/in`, events: ['message.received'] });
    dispatcher = await startDispatcherProcess();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    for (const g of gateways.values()) await g.stop();
    await dispatcher?.stop();
    await sim?.stop();
    await receiver?.close();
    await closeTestDataSource();
  });

  it(`SIGTERM drain of a gateway with ${SESSIONS} sessions and a burst of ${BURST} inbound messages: every session moves and works elsewhere, each message reaches the webhook once (0 lost, 0 duplicated), exit 0`, async () => {
    const drained = await startGateway('drained');
    for (let i = 0; i < SESSIONS; i++) {
      const res = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `drain ${i}` });
      expect(res.body.gatewayId).toBe(id('drained'));
      await pairSession({ api, token: org.adminKey, simUrl, sessionId: res.body.id, waitWorking: false });
    }
    await waitFor(async () => (await sessions()).filter((s) => s.status === 'working').length === SESSIONS, 30_000 * SLOW, 'every session to work');
    await Promise.all([startGateway('b'), startGateway('c')]);
    const ids = (await sessions()).map((s) => s.id);

    const exited = new Promise<number | null>((resolve) => drained.proc.child.once('exit', (code) => resolve(code)));
    drained.proc.child.kill('SIGTERM');
    // readiness drops at once: the drained gateway takes no new sessions
    await waitFor(async () => (await fetch(drained.readyUrl).catch(() => null))?.status !== 200, 5000, 'readiness to drop');
    // messages arriving on the network while the sessions move (round robin over the sessions): each waits on the
    // network until a holder takes it
    const sent: string[] = [];
    for (let i = 0; i < BURST; i++) {
      const res = await simPost(`/sim/sessions/${ids[i % ids.length]}/inbound`, { from: '15559990000@s.whatsapp.net', text: `during drain ${i}` });
      expect(res.status).toBe(200);
      sent.push(((await res.json()) as { id: string }).id);
    }
    expect(await exited).toBe(0);

    await waitFor(
      async () => {
        const all = await sessions();
        return all.length === SESSIONS && all.every((s) => s.status === 'working' && s.gatewayId !== id('drained'));
      },
      30_000 * SLOW,
      'every session working on the other gateways',
    );
    const placed = await sessions();
    expect(new Set(placed.map((s) => s.gatewayId))).toEqual(new Set([id('b'), id('c')]));
    const moves = await (await testDataSource()).query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'session.status' AND envelope->'payload'->>'reason' = 'drain' AND session_id = ANY($1)`,
      [ids],
    );
    expect(moves[0].n).toBe(SESSIONS);

    // counted by event id: a webhook may redeliver one event, but a message announced by two events is a duplicate
    const eventIdsByMessage = () => {
      const byMessage = new Map<string, Set<string>>();
      for (const r of receiver.at('/in')) {
        const body = JSON.parse(r.rawBody.toString());
        const wa = body.payload?.message?.waMessageId;
        if (body.event === 'message.received') byMessage.set(wa, (byMessage.get(wa) ?? new Set()).add(body.id));
      }
      return byMessage;
    };
    const startedWaiting = Date.now();
    await waitFor(
      () => sent.every((wa) => eventIdsByMessage().has(wa)),
      60_000 * SLOW,
      'every inbound message sent during the drain to reach the webhook receiver',
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${sent.filter((wa) => !eventIdsByMessage().has(wa)).length} of ${BURST} lost`);
    });
    const byMessage = eventIdsByMessage();
    const lost = sent.filter((wa) => !byMessage.has(wa)).length;
    const duplicated = sent.filter((wa) => (byMessage.get(wa)?.size ?? 0) > 1).length;
    console.log(`drain (${E2E_ENGINE}): ${BURST} inbound during the drain of ${SESSIONS} sessions, ${lost} lost, ${duplicated} duplicated (by event id), all delivered ${((Date.now() - startedWaiting) / 1000).toFixed(1)} s after the drain ended`);
    expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
  }, 240_000);

  it('`cli gateway:drain --id` from anywhere drains a gateway the same way: its sessions work elsewhere, it exits 0', async () => {
    const target = await startGateway('cli');
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `cli drain ${i}` });
      created.push(res.body.id);
      await pairSession({ api, token: org.adminKey, simUrl, sessionId: res.body.id, waitWorking: false });
    }
    const mine = async () => (await sessions()).filter((s) => created.includes(s.id));
    await waitFor(async () => (await mine()).every((s) => s.status === 'working') || null, 30_000 * SLOW, 'the new sessions to work');
    const onTarget = (await mine()).filter((s) => s.gatewayId === id('cli')).map((s) => s.id);
    expect(onTarget.length).toBeGreaterThan(0);

    const exited = new Promise<number | null>((resolve) => target.proc.child.once('exit', (code) => resolve(code)));
    const cli = await runToExit('dist/apps/cli/src/main.js', ['gateway:drain', '--id', id('cli')], { REDIS_KEY_PREFIX: process.env.REDIS_KEY_PREFIX! });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.output)).toEqual({ gatewayId: id('cli'), drainRequested: true });
    expect(await exited).toBe(0);
    await waitFor(
      async () => (await mine()).every((s) => s.status === 'working' && s.gatewayId !== id('cli')) || null,
      30_000,
      'the drained sessions working on the other gateways',
    );
    // an unknown gateway is refused, with nothing requested
    const unknown = await runToExit('dist/apps/cli/src/main.js', ['gateway:drain', '--id', 'no-such-gateway'], { REDIS_KEY_PREFIX: process.env.REDIS_KEY_PREFIX! });
    expect(unknown.code).not.toBe(0);
    expect(unknown.output).toContain('no gateway no-such-gateway is registered');
  }, 120_000);
});
