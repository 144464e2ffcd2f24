import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace, so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:engine-switch-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '8000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { Engine, engineEnv, pairSession } from './support/engine';
import { AppProcess, freePort, startApp } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';

// a Baileys gateway's first pairing uploads its pre-keys: slow on a loaded machine
jest.setTimeout(90000);

/**
 * Issue 38 item 2: `npm run demo`, then `npm run demo -- --engine baileys` (the same gateway id, another engine) made
 * Baileys resume the simulator's credentials: a TypeError with a stack every attempt, retried for ever. A credential
 * another engine stored now ends the session as `logged_out` with a reason that says to scan again, one warn line,
 * no retry; and the same the other way round.
 */
describe('a gateway that finds another engine’s credentials logs the session out once', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  /** every gateway this file ran, by engine, in order: each one's whole log is checked at the end */
  const gateways: Array<{ engine: Engine; proc: AppProcess }> = [];
  const gatewayId = `gw-engine-switch-${process.pid}`;
  const api = () => request(app.getHttpServer());
  const { waitStatus } = sessionProbes(api, () => org.adminKey);

  /** The demo's switch: the gateway stops as Ctrl-C stops it, and comes back under the same id on `engine`. */
  const runGateway = async (engine: Engine) => {
    const last = gateways.at(-1)?.proc;
    if (last && last.child.exitCode === null) {
      const exited = new Promise((resolve) => last.child.once('exit', resolve));
      last.child.kill('SIGINT');
      await exited;
    }
    const port = await freePort();
    const proc = await startApp(
      'gateway',
      { GATEWAY_ID: gatewayId, GATEWAY_HEALTH_PORT: String(port), LOG_LEVEL: 'info', ...engineEnv(simUrl, { GATEWAY_HEARTBEAT_MS: '300', GATEWAY_TTL_MS: '2000' }, engine) },
      `http://127.0.0.1:${port}/healthz`,
    );
    gateways.push({ engine, proc });
  };

  /** The gateway's JSON log lines about `sessionId` at warn or above. */
  const loudLines = (proc: AppProcess, sessionId: string) =>
    proc
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; sessionId?: string; msg: string; reason?: string })
      .filter((l) => l.level >= 40 && (l.sessionId === sessionId || JSON.stringify(l).includes(sessionId)));

  const paired = async (engine: Engine) => {
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: `paired on ${engine}` });
    expect(created.status).toBe(201);
    await pairSession({ api, token: org.adminKey, simUrl, sessionId: created.body.id, timeoutMs: engine === 'baileys' ? 30000 : 10000 });
    return created.body.id as string;
  };

  const expectLoggedOut = async (sessionId: string, written: Engine, running: Engine) => {
    const session = await waitStatus(sessionId, 'logged_out', 30000);
    expect(session).toMatchObject({ phoneNumber: null, waJid: null });
    const reason = `credentials_unusable: the stored credential is the ${written} engine's, this gateway runs ${running}; start the session and scan a new QR`;
    const statuses = (await storedEvents(sessionId, 'session.status')).map((e) => e.payload);
    expect(statuses.at(-1)).toEqual({ status: 'logged_out', previousStatus: expect.any(String), reason });
    expect(statuses.filter((s) => s.status === 'logged_out')).toHaveLength(1);
    expect((await storedEvents(sessionId, 'session.logged_out')).map((e) => e.payload)).toEqual([{ reason: 'credentials_unusable' }]);
    // the pairing is gone: a start shows a new QR, on this engine
    const qr = await api().get(`/api/v1/sessions/${sessionId}/qr`).set(bearer(org.adminKey));
    expect(qr.status).toBe(409);
  };

  beforeAll(async () => {
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Engine Switch Inc');
  });

  afterAll(async () => {
    await app?.close();
    for (const { proc } of gateways) await proc.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  let pairedOnSim: string;
  let pairedOnBaileys: string;

  it('a session the sim engine paired, resumed by a Baileys gateway: logged_out, a reason to scan again', async () => {
    await runGateway('sim');
    pairedOnSim = await paired('sim');
    await runGateway('baileys');
    await expectLoggedOut(pairedOnSim, 'sim', 'baileys');
  });

  it('a session Baileys paired, resumed by a sim gateway: the same', async () => {
    // the Baileys gateway pairs a session of its own meanwhile: time in which a retry loop on the first would show
    pairedOnBaileys = await paired('baileys');
    await runGateway('sim');
    await expectLoggedOut(pairedOnBaileys, 'baileys', 'sim');
  });

  it('each refusal is one warn line, no error, no stack, no retry', async () => {
    const [, onBaileys, onSim] = gateways;
    // the Baileys gateway's whole life: it stopped after pairing another session, long after the refusal
    expect(loudLines(onBaileys.proc, pairedOnSim)).toEqual([
      expect.objectContaining({ level: 40, msg: 'stored credentials unusable; logged out', reason: expect.stringContaining('credentials_unusable') }),
    ]);
    // the last gateway, stopped now so its log is whole
    const exited = new Promise((resolve) => onSim.proc.child.once('exit', resolve));
    onSim.proc.child.kill('SIGINT');
    await exited;
    expect(loudLines(onSim.proc, pairedOnBaileys)).toEqual([
      expect.objectContaining({ level: 40, msg: 'stored credentials unusable; logged out', reason: expect.stringContaining('credentials_unusable') }),
    ]);
    // the session logged out by the first switch stays so: the third gateway never touched it
    expect(loudLines(onSim.proc, pairedOnSim)).toEqual([]);
    // before: `Cannot read properties of undefined (reading 'public')` with a stack at every attempt
    for (const { proc } of gateways) expect(proc.output()).not.toContain('TypeError');
  });
});
