import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:session-faults-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '4000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { sessionProbes, storedEvents } from './support/session-probes';
import { TcpOutage } from './support/tcp-outage';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';

const KEEPALIVE_MS = 300;

/**
 * What WhatsApp's closes do to a session, end to end on the sim engine: the simulator's fault call (CONTRACT 9) plays
 * each close toward a live device, and the session must react as docs/baileys-engine.md's close table says. Every
 * transient fault also counts the inbound messages sent around it: none lost, none duplicated.
 */
describe('session faults: WhatsApp closes as the gateway reads them (sim engine)', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let healthUrl: string;
  /** the gateway reaches the simulator through it, so a test can cut the network between them */
  const relay = new TcpOutage(() => ({ host: '127.0.0.1', port: Number(new URL(simUrl).port) }));
  let org: SeededOrg;
  let phoneSeq = 0;
  const gatewayId = `gw-session-faults-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const { get: simGet } = simControl(() => simUrl);
  const simPost = async (path: string, body: object = {}) => {
    const res = await fetch(simUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's control API is untyped JSON
    return { status: res.status, body: (await res.json()) as any };
  };
  const fault = async (sessionId: string, kind: string) => {
    const res = await simPost(`/sim/sessions/${sessionId}/fault`, { kind });
    expect({ kind, status: res.status }).toEqual({ kind, status: 200 });
    return res.body;
  };
  const probes = sessionProbes(api, () => org.adminKey);
  const { getSession } = probes;
  const waitStatus = (id: string, status: string) => probes.waitStatus(id, status, 15000);
  /** The session's status and reason as a user reads them: the QR endpoint's 409 (the row's lastReason). */
  const reasonOf = async (id: string): Promise<{ status: string; reason: string }> => {
    const res = await api().get(`/api/v1/sessions/${id}/qr`).set(bearer(org.adminKey));
    expect(res.status).toBe(409);
    return res.body.error.details;
  };
  const eventsOf = async (sessionId: string, type: string) => (await storedEvents(sessionId, type)).map((e) => e.payload);
  const statusEvents = (sessionId: string) => eventsOf(sessionId, 'session.status') as Promise<Array<{ status: string; reason: string }>>;
  const pairedSession = async (label: string) => {
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label });
    expect(created.status).toBe(201);
    await waitStatus(created.body.id, 'scan_qr_code');
    const phoneNumber = `1555200${String(++phoneSeq).padStart(4, '0')}`;
    expect((await simPost(`/sim/sessions/${created.body.id}/scan`, { phoneNumber })).status).toBe(200);
    return waitStatus(created.body.id, 'working');
  };
  const inbound = async (sessionId: string, text: string): Promise<string> => {
    const res = await simPost(`/sim/sessions/${sessionId}/inbound`, { from: '15559990000@s.whatsapp.net', text });
    expect(res.status).toBe(200);
    return res.body.id;
  };
  /** message.received events per waMessageId, once every id has arrived: lost = missing, duplicated = counted twice. */
  const receivedOnce = async (sessionId: string, ids: string[]) => {
    const counts = await waitFor(async () => {
      const received = (await eventsOf(sessionId, 'message.received')) as Array<{ message: { waMessageId: string } }>;
      const byId = new Map<string, number>();
      for (const e of received) byId.set(e.message.waMessageId, (byId.get(e.message.waMessageId) ?? 0) + 1);
      return ids.every((id) => byId.has(id)) ? byId : null;
    }, 15000, 'every inbound message received');
    const lost = ids.filter((id) => !counts.has(id)).length;
    const duplicated = [...counts.values()].filter((n) => n > 1).length;
    return { lost, duplicated, received: counts.size };
  };
  /**
   * Plays a transient fault on a working session with inbound traffic around it: one message before, one while the
   * device is away (the network holds it), one after it is back. The pairing must survive: working again, same
   * account, no QR shown, nothing lost or doubled.
   */
  const survives = async (kind: string) => {
    const s = await pairedSession(`survives ${kind}`);
    const qrsBefore = (await eventsOf(s.id, 'auth.qr')).length;
    const before = await inbound(s.id, `before ${kind}`);
    await receivedOnce(s.id, [before]);
    await fault(s.id, kind);
    const during = await inbound(s.id, `during ${kind}`);
    // back: a status event after the fault's own says working again
    await waitFor(async () => {
      const statuses = await statusEvents(s.id);
      const away = statuses.findIndex((e, i) => i > 0 && e.status !== 'working');
      return away >= 0 && statuses.slice(away).some((e) => e.status === 'working');
    }, 15000, `session back to working after ${kind}`);
    const after = await inbound(s.id, `after ${kind}`);
    const counted = await receivedOnce(s.id, [before, during, after]);
    expect(counted).toEqual({ lost: 0, duplicated: 0, received: 3 });
    const back = await getSession(s.id);
    expect(back).toMatchObject({ status: 'working', phoneNumber: s.phoneNumber, waJid: s.waJid });
    expect((await eventsOf(s.id, 'auth.qr')).length).toBe(qrsBefore);
    expect(await simGet(`/sim/sessions/${s.id}`)).toMatchObject({ state: 'paired', connected: true, jid: s.waJid });
    return { session: s, statuses: await statusEvents(s.id) };
  };

  beforeAll(async () => {
    await relay.start();
    ({ sim, simUrl, gateway, healthUrl } = await startSimGateway(gatewayId, {
      sim: { SIM_QR_INTERVAL_MS: '60000' },
      gateway: {
        RECONNECT_BASE_DELAY_MS: '100',
        RECONNECT_MAX_DELAY_MS: '400',
        RECONNECT_MAX_ATTEMPTS: '3',
        NETWORK_SIM_KEEPALIVE_MS: String(KEEPALIVE_MS),
        NETWORK_SIM_URL: relay.url,
        LOG_LEVEL: 'info',
      },
    }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Faults Inc');
  });

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await relay.cut();
    await closeTestDataSource();
  });

  it('a stream error without a code (<ack/>, Baileys 500) keeps the pairing: back to working, no QR, nothing lost', async () => {
    const { statuses } = await survives('stream-error-ack');
    expect(statuses).toContainEqual({ status: 'reconnecting', previousStatus: 'working', reason: 'connection_lost: stream error: ack (close code 500)' });
  }, 60000);

  it('515 (restart required) reconnects at once with the stored pairing', async () => {
    await survives('stream-error-515');
  }, 60000);

  it('an abrupt drop reconnects with backoff', async () => {
    const { statuses } = await survives('drop');
    expect(statuses.some((e) => e.status === 'reconnecting' && e.reason.startsWith('connection_lost: '))).toBe(true);
  }, 60000);

  it('a network that goes silent is noticed by the keepalive and reconnected', async () => {
    const { statuses } = await survives('silent');
    expect(statuses).toContainEqual({
      status: 'reconnecting',
      previousStatus: 'working',
      reason: `connection_lost: the network stopped answering (no pong within ${KEEPALIVE_MS} ms)`,
    });
  }, 60000);

  it('conflict (440) once: retried after a delay and back; twice: failed with reason replaced, no more retries', async () => {
    const { session } = await survives('conflict');
    const opens = (await simGet(`/sim/sessions/${session.id}`)).opens;
    await fault(session.id, 'conflict');
    await waitStatus(session.id, 'failed');
    // `replaced` alone: no "next attempt at" (none is scheduled), and the network saw no new connection
    expect(await reasonOf(session.id)).toEqual({ status: 'failed', reason: 'replaced' });
    expect(await getSession(session.id)).toMatchObject({ status: 'failed', statusReason: 'replaced', nextAttemptAt: null });
    expect(await simGet(`/sim/sessions/${session.id}`)).toMatchObject({ state: 'paired', connected: false, opens });
  }, 60000);

  it('failure 405 shows client_version_refused, is told once in the gateway log and a metric, and retries with the long delay', async () => {
    const { session, statuses } = await survives('failure-405');
    expect(statuses).toContainEqual({ status: 'reconnecting', previousStatus: 'working', reason: 'client_version_refused' });
    const second = await pairedSession('a second refusal');
    await fault(second.id, 'failure-405');
    await waitFor(async () => (await statusEvents(second.id)).filter((e) => e.status === 'working').length >= 2, 15000, 'the second session back');
    const told = gateway
      .output()
      .split('\n')
      .filter((line) => line.includes('WhatsApp refused this client version'));
    expect(told).toHaveLength(1);
    expect(JSON.parse(told[0])).toMatchObject({ level: 50, sessionId: session.id, reason: 'client_version_refused' });
    expect(told[0]).toContain('WHATSAPP_WEB_VERSION');
    const metrics = await (await fetch(`${healthUrl}/metrics`)).text();
    expect(metrics).toMatch(/^\S*gateway_client_version_refused_total(\{[^}]*\})? 2$/m);
  }, 60000);

  it('failure 403 stops at once with reason forbidden: no retry, the pairing kept', async () => {
    const s = await pairedSession('forbidden');
    const { opens } = await simGet(`/sim/sessions/${s.id}`);
    await fault(s.id, 'failure-403');
    await waitStatus(s.id, 'failed');
    expect(await reasonOf(s.id)).toEqual({ status: 'failed', reason: 'forbidden' });
    expect(await simGet(`/sim/sessions/${s.id}`)).toMatchObject({ state: 'paired', connected: false, opens });
    // the pairing was kept: a start resumes it without a QR
    expect((await api().post(`/api/v1/sessions/${s.id}:start`).set(bearer(org.adminKey))).status).toBe(200);
    expect(await waitStatus(s.id, 'working')).toMatchObject({ waJid: s.waJid });
  }, 60000);

  it('failure 401 is the device gone: logged_out, credentials and account cleared', async () => {
    const s = await pairedSession('unlinked');
    await fault(s.id, 'failure-401');
    const out = await waitStatus(s.id, 'logged_out');
    expect(out).toMatchObject({ phoneNumber: null, waJid: null });
    // the row says logged_out a moment before the event is written (status first, then the announcement)
    const announced = await waitFor(async () => {
      const events = await eventsOf(s.id, 'session.logged_out');
      return events.length ? events : null;
    }, 20000, 'session.logged_out');
    expect(announced).toEqual([{ reason: 'unlinked_on_phone' }]);
    expect((await simGet(`/sim/sessions/${s.id}`)).state).toBe('unlinked');
  }, 60000);

  it('a pairing code never entered (the network forgets the half-made device: 401) resets to a fresh QR, reason pairing_expired', async () => {
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'pairing code' });
    const id = created.body.id;
    await waitStatus(id, 'scan_qr_code');
    const code = await api().post(`/api/v1/sessions/${id}:request-code`).set(bearer(org.adminKey)).send({ phoneNumber: '15552009999' });
    expect(code.status).toBe(200);
    const firstQr = (await simGet(`/sim/sessions/${id}`)).qr;
    await fault(id, 'failure-401');
    await waitFor(async () => (await statusEvents(id)).some((e) => e.reason === 'pairing_expired'), 15000, 'pairing_expired');
    const fresh = await waitStatus(id, 'scan_qr_code');
    expect(fresh.phoneNumber).toBeNull();
    const qr = await api().get(`/api/v1/sessions/${id}/qr`).set(bearer(org.adminKey));
    expect(qr.status).toBe(200);
    expect(qr.body.qr).not.toBe(firstQr);
    expect(await eventsOf(id, 'session.logged_out')).toEqual([]);
    expect((await statusEvents(id)).map((e) => e.status)).not.toContain('logged_out');
  }, 60000);

  it('a paired session never gives up: after an outage longer than RECONNECT_MAX_ATTEMPTS it comes back; a never-paired one stops', async () => {
    const paired = await pairedSession('outage');
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'never paired' });
    const unpaired = await waitStatus(created.body.id, 'scan_qr_code');
    const before = await inbound(paired.id, 'before the outage');
    await receivedOnce(paired.id, [before]);

    await relay.cut();
    let during: string;
    try {
      during = await inbound(paired.id, 'during the outage');
      const failed = await waitStatus(unpaired.id, 'failed');
      expect(failed.phoneNumber).toBeNull();
      expect((await reasonOf(unpaired.id)).reason).toMatch(/^reconnect_attempts_exhausted: connect_failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
      // twice RECONNECT_MAX_ATTEMPTS failed attempts in a row, and still trying
      const retries = () =>
        gateway
          .output()
          .split('\n')
          .filter((line) => line.includes(paired.id) && line.includes('connect failed; retrying'))
          .map((line) => JSON.parse(line) as { attempt: number; of: number | null; nextAttemptAt: string });
      await waitFor(() => retries().some((r) => r.attempt >= 6), 20000, 'six failed attempts of the paired session');
      expect(retries().at(-1)).toMatchObject({ of: null });
      expect((await getSession(paired.id)).status).toBe('reconnecting');
      const waiting = await reasonOf(paired.id);
      expect(waiting).toMatchObject({ status: 'reconnecting' });
      expect(waiting.reason).toMatch(/^connection_lost: connect ECONNREFUSED 127\.0\.0\.1:\d+; next attempt at \d{4}-\d\d-\d\dT[\d:.]+Z$/);
      expect(Date.parse(waiting.reason.split('next attempt at ')[1])).toBeGreaterThan(Date.now() - 5000);
      // the Session view says the same in its own fields (CONTRACT 4): the reason alone, and the time as epoch ms
      const view = await getSession(paired.id);
      expect(view.statusReason).toMatch(/^connection_lost: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
      expect(view.nextAttemptAt).toEqual(expect.any(Number));
      expect(view.nextAttemptAt).toBeGreaterThan(Date.now() - 5000);
      const page = (await api().get('/api/v1/sessions?limit=100').set(bearer(org.adminKey))).body.data as Array<{ id: string; statusReason: string; nextAttemptAt: number | null }>;
      expect(page.find((x) => x.id === paired.id)).toMatchObject({ statusReason: expect.stringMatching(/^connection_lost: /), nextAttemptAt: expect.any(Number) });
      expect(await getSession(unpaired.id)).toMatchObject({
        status: 'failed',
        statusReason: expect.stringMatching(/^reconnect_attempts_exhausted: connect_failed: connect ECONNREFUSED /),
        nextAttemptAt: null,
      });
    } finally {
      // the network comes back whatever happened, for this test's end and the tests that follow
      await relay.start();
    }
    expect(await waitStatus(paired.id, 'working')).toMatchObject({ statusReason: 'connected', nextAttemptAt: null });
    const after = await inbound(paired.id, 'after the outage');
    expect(await receivedOnce(paired.id, [before, during, after])).toEqual({ lost: 0, duplicated: 0, received: 3 });
    expect(await getSession(paired.id)).toMatchObject({ phoneNumber: paired.phoneNumber, waJid: paired.waJid });
    expect((await statusEvents(paired.id)).map((e) => e.status)).not.toContain('failed');
  }, 60000);

  it('refuses an unknown kind (422 naming it) and a device that is not connected (409)', async () => {
    const s = await pairedSession('bad faults');
    const bad = await simPost(`/sim/sessions/${s.id}/fault`, { kind: 'meteor' });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({ code: 'validation_error', details: { kind: 'meteor' } });
    expect((await simPost('/sim/sessions/never-connected/fault', { kind: 'drop' })).status).toBe(404);
    expect((await api().post(`/api/v1/sessions/${s.id}:stop`).set(bearer(org.adminKey))).status).toBe(200);
    await waitFor(async () => !(await simGet(`/sim/sessions/${s.id}`)).connected, 10000, 'device offline');
    expect((await simPost(`/sim/sessions/${s.id}/fault`, { kind: 'conflict' })).status).toBe(409);
  }, 60000);
});
