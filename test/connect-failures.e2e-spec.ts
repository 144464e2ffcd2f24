import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace, so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:connect-failures-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '4000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';

/**
 * The real Baileys engine pointed at a WhatsApp it cannot reach: what a user with no network sees. The session must say
 * why it cannot connect, in the QR endpoint's 409, in `session.status`, and in the gateway's log at warn, and must not
 * claim to be `reconnecting` when it never connected. Hermetic (issue 38): the address is a loopback port nothing
 * listens on (a refused connection), not a name only a DNS resolver can refuse (offline that is EAI_AGAIN, online
 * ENOTFOUND); the words of a DNS failure are the unit tests' (session-runner.spec.ts, baileys.engine.spec.ts), and the
 * engine passes any transport error through the same path.
 */
describe('a session that cannot reach WhatsApp says why', () => {
  let app: INestApplication;
  let gateway: AppProcess;
  let org: SeededOrg;
  const api = () => request(app.getHttpServer());

  /** where WhatsApp is said to be: a port that was free a moment ago, so a connect is refused */
  let cause: string;

  beforeAll(async () => {
    const deadPort = await freePort();
    cause = `connect ECONNREFUSED 127.0.0.1:${deadPort}`;
    const healthPort = await freePort();
    gateway = await startApp(
      'gateway',
      {
        GATEWAY_ID: `gw-connect-failures-${process.pid}`,
        GATEWAY_ENGINE: 'baileys',
        WHATSAPP_WEB_URL: `wss://127.0.0.1:${deadPort}/ws/chat`,
        WHATSAPP_WEB_VERSION: '2.3000.1012345678',
        GATEWAY_HEALTH_PORT: String(healthPort),
        // a Baileys gateway on a loaded machine: a TTL its heartbeats keep (support/engine.ts's floors)
        GATEWAY_HEARTBEAT_MS: '1000',
        GATEWAY_TTL_MS: '10000',
        RECONNECT_BASE_DELAY_MS: '500',
        RECONNECT_MAX_DELAY_MS: '500',
        RECONNECT_MAX_ATTEMPTS: '4',
        LOG_LEVEL: 'warn',
      },
      `http://127.0.0.1:${healthPort}/healthz`,
    );
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Offline Inc');
  });

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await closeTestDataSource();
  });

  it('names the connect failure in the QR 409, in session.status and in the gateway log, stays starting, then fails', async () => {
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'no network' });
    expect(created.status).toBe(201);
    const id = created.body.id;

    const conflict = await waitFor(async () => {
      const res = await api().get(`/api/v1/sessions/${id}/qr`).set(bearer(org.adminKey));
      // the first answers may still carry the start's own reason (start_requested): wait for the connect's outcome
      return res.status === 409 && String(res.body.error.details.reason ?? '').includes(cause) ? res : null;
    }, 15000, 'a 409 naming the cause');
    expect(conflict.body.error.code).toBe('conflict');
    // still retrying, or already given up (a slow machine may see only the end): either way the cause is there
    // while retrying, the reason also says when the next attempt is
    const { status, reason } = conflict.body.error.details;
    expect(
      (status === 'starting' && reason.startsWith(`connect_failed: ${cause}; next attempt at `) && /at \d{4}-\d\d-\d\dT[\d:.]+Z$/.test(reason)) ||
        (status === 'failed' && reason === `reconnect_attempts_exhausted: connect_failed: ${cause}`),
    ).toBe(true);
    expect(conflict.body.error.message).toContain(cause);
    // the version the engine announces (WHATSAPP_WEB_VERSION) is on the gateway's registry entry
    const listed = await api().get('/api/v1/gateways').set(bearer(org.adminKey));
    expect(listed.body.data).toEqual([expect.objectContaining({ engine: 'baileys', waWebVersion: '2.3000.1012345678' })]);

    const db = await testDataSource();
    const statuses = async () =>
      (
        (await db.query(`SELECT envelope FROM events WHERE session_id = $1 AND type = 'session.status' ORDER BY id`, [id])) as Array<{
          envelope: { payload: { status: string; previousStatus: string; reason: string } };
        }>
      ).map((r) => r.envelope.payload);
    expect(await statuses()).toContainEqual({
      status: 'starting',
      previousStatus: 'starting',
      reason: `connect_failed: ${cause}`,
    });

    const failed = await waitFor(async () => (await statuses()).find((s) => s.status === 'failed'), 20000, 'the session to fail');
    expect(failed.reason).toBe(`reconnect_attempts_exhausted: connect_failed: ${cause}`);
    expect((await statuses()).map((s) => s.status)).not.toContain('reconnecting');

    const warnings = gateway
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; sessionId?: string; reason?: string; msg: string })
      .filter((l) => l.level === 40 && l.sessionId === id);
    expect(warnings.length).toBeGreaterThanOrEqual(4);
    expect(warnings[0]).toMatchObject({ reason: `connect_failed: ${cause}`, msg: 'connect failed; retrying' });
  }, 60000);
});
