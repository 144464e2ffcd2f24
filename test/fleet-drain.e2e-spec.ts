import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace, so only its own gateways are live here
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:fleet-drain-${process.pid}`;

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { startSimGateway } from './support/fleet';
import { AppProcess, freePort, runToExit, startApp, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { createWebhookRow, Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';

const SESSIONS = 50;

describe('Fleet drain: SIGTERM hands every session to the other gateways, one by one', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let receiver: Receiver;
  let dispatcher: AppProcess;
  const gateways = new Map<string, AppProcess>();
  const id = (name: string) => `gw-${name}-${process.pid}`;
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

  it('SIGTERM drain of a gateway with 50 sessions: every one moves and is working elsewhere, no inbound message is lost, exit 0', async () => {
    const drained = await startGateway('drained');
    for (let i = 0; i < SESSIONS; i++) {
      const res = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `drain ${i}` });
      expect(res.body.gatewayId).toBe(id('drained'));
      await waitFor(async () => (await simPost(`/sim/sessions/${res.body.id}/scan`)).status === 200, 10_000, 'the QR to show');
    }
    await waitFor(async () => (await sessions()).filter((s) => s.status === 'working').length === SESSIONS, 30_000, 'every session to work');
    await Promise.all([startGateway('b'), startGateway('c')]);
    const ids = (await sessions()).map((s) => s.id);

    const exited = new Promise<number | null>((resolve) => drained.proc.child.once('exit', (code) => resolve(code)));
    drained.proc.child.kill('SIGTERM');
    // readiness drops at once: the drained gateway takes no new sessions
    await waitFor(async () => (await fetch(drained.readyUrl).catch(() => null))?.status !== 200, 5000, 'readiness to drop');
    // messages arriving on the network while the sessions move: each waits on the network until a holder takes it
    const sent: string[] = [];
    for (const [i, sid] of ids.entries()) {
      const res = await simPost(`/sim/sessions/${sid}/inbound`, { from: '15559990000@s.whatsapp.net', text: `during drain ${i}` });
      expect(res.status).toBe(200);
      sent.push(((await res.json()) as { id: string }).id);
    }
    expect(await exited).toBe(0);

    await waitFor(
      async () => {
        const all = await sessions();
        return all.length === SESSIONS && all.every((s) => s.status === 'working' && s.gatewayId !== id('drained'));
      },
      30_000,
      'every session working on the other gateways',
    );
    const placed = await sessions();
    expect(new Set(placed.map((s) => s.gatewayId))).toEqual(new Set([id('b'), id('c')]));
    const moves = await (await testDataSource()).query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'session.status' AND envelope->'payload'->>'reason' = 'drain' AND session_id = ANY($1)`,
      [ids],
    );
    expect(moves[0].n).toBe(SESSIONS);

    await waitFor(
      async () => {
        const bodies = receiver.at('/in').map((r) => r.rawBody.toString());
        return sent.every((wa) => bodies.some((b) => b.includes(wa)));
      },
      30_000,
      'every inbound message sent during the drain to reach the webhook receiver',
    );
  }, 180_000);

  it('`cli gateway:drain --id` from anywhere drains a gateway the same way: its sessions work elsewhere, it exits 0', async () => {
    const target = await startGateway('cli');
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `cli drain ${i}` });
      created.push(res.body.id);
      await waitFor(async () => (await simPost(`/sim/sessions/${res.body.id}/scan`)).status === 200, 10_000, 'the QR to show');
    }
    const mine = async () => (await sessions()).filter((s) => created.includes(s.id));
    await waitFor(async () => (await mine()).every((s) => s.status === 'working') || null, 30_000, 'the new sessions to work');
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
