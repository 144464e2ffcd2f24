import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
// (and per engine: `npm test` runs this file on both engines in one process, docs/testing.md)
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:sessions-${process.env.E2E_ENGINE ?? 'sim'}-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = process.env.E2E_ENGINE === 'baileys' ? '8000' : '4000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { E2E_ENGINE, pairSession, PAIRING_TIMEOUT_MS } from './support/engine';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';

// the real engine's first login uploads its pre-keys: a pairing alone can take 15 s on a loaded machine
if (E2E_ENGINE === 'baileys') jest.setTimeout(90000);

const SESSION_FIELDS = [
  'id', 'organizationId', 'createdByUserId', 'gatewayId', 'label', 'status', 'phoneNumber', 'waJid', 'waLid', 'isAdminSession',
  'autoRead', 'presenceTyping', 'ratePerMin', 'ratePerHour', 'createdAt', 'updatedAt', 'lastConnectedAt', 'proxyUrl',
  'syncHistory', 'rejectCalls', 'receiveStatus', 'statusReason', 'nextAttemptAt',
].sort();
const GROUP_FIELDS = ['groupJid', 'subject', 'description', 'ownerJid', 'participants', 'isAnnounce', 'isLocked'].sort();

/** Runs on both engines of the matrix (E2E_ENGINE, docs/testing.md): pairing goes through support/engine.ts pairSession. */
describe(`Sessions API against a gateway on the network simulator (${E2E_ENGINE} engine)`, () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let other: SeededOrg;
  const gatewayId = `gw-sessions-${E2E_ENGINE}-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const { get: simGet } = simControl(() => simUrl);
  const simPost = async (path: string, body: object = {}) => {
    const res = await fetch(simUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's control API is untyped JSON
    return { status: res.status, body: (await res.json()) as any };
  };
  const { getSession, waitStatus: waitStatusWithin } = sessionProbes(api, () => org.adminKey);
  const waitStatus = (id: string, status: string) => waitStatusWithin(id, status, PAIRING_TIMEOUT_MS);
  const eventsOf = storedEvents;
  const createSession = async (label: string) => {
    const res = await api().post('/api/v1/sessions').set(bearer(org.users.member.token)).send({ label });
    expect(res.status).toBe(201);
    return res.body;
  };
  /** A session paired to `phone` through the QR flow (the phone scans the QR the API shows). */
  const pairedSession = async (label: string, phone: string) => {
    const s = await createSession(label);
    return pairSession({ api, token: org.adminKey, simUrl, sessionId: s.id, phoneNumber: phone });
  };

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, {
      sim: { SIM_QR_INTERVAL_MS: '60000' },
      gateway: { RECONNECT_BASE_DELAY_MS: '100' },
    }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Sessions Inc');
    other = await seedOrganization('Other Org');
  });

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('creates a session on the gateway and pairs it through the QR flow', async () => {
    const res = await api().post('/api/v1/sessions').set(bearer(org.users.member.token)).send({ label: 'Support' });
    expect(res.status).toBe(201);
    const created = res.body;
    expect(Object.keys(created).sort()).toEqual(SESSION_FIELDS);
    expect(created).toMatchObject({
      organizationId: org.id,
      createdByUserId: org.users.member.id,
      gatewayId,
      label: 'Support',
      phoneNumber: null,
      waJid: null,
      waLid: null,
      lastConnectedAt: null,
      autoRead: true,
      presenceTyping: false,
      ratePerMin: 20,
      ratePerHour: 200,
      isAdminSession: false,
    });
    expect(typeof created.createdAt).toBe('number');

    const waiting = await waitStatus(created.id, 'scan_qr_code');
    expect(waiting).toMatchObject({ phoneNumber: null, statusReason: 'qr_shown', nextAttemptAt: null });
    // a viewer may not: reading the QR pairs the session (sessions:write, docs/auth.md)
    const qr = await api().get(`/api/v1/sessions/${created.id}/qr`).set(bearer(org.users.member.token));
    expect(qr.status).toBe(200);
    const shown = (await simGet(`/sim/sessions/${created.id}`)).qr;
    // the sim engine shows the network's QR; Baileys draws its own from the network's ref and its keys
    if (E2E_ENGINE === 'sim') expect(qr.body.qr).toBe(shown);
    else expect(qr.body.qr.startsWith(`${shown},`)).toBe(true);
    expect(qr.body.expiresAt).toBeGreaterThan(Date.now());
    const png = await api().get(`/api/v1/sessions/${created.id}/qr`).set(bearer(org.adminKey)).set('Accept', 'image/png').buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => cb(null, Buffer.concat(chunks)));
    });
    expect(png.status).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect((png.body as Buffer).subarray(1, 4).toString()).toBe('PNG');

    const working = await pairSession({ api, token: org.adminKey, simUrl, sessionId: created.id, phoneNumber: '15550001111' });
    expect(working.phoneNumber).toBe('15550001111');
    expect(working.waJid).toBe('15550001111@s.whatsapp.net');
    expect(working.waLid).toMatch(/^\d+@lid$/);
    expect(working.lastConnectedAt).toEqual(expect.any(Number));
    expect(working).toMatchObject({ statusReason: 'connected', nextAttemptAt: null });

    const noQr = await api().get(`/api/v1/sessions/${created.id}/qr`).set(bearer(org.adminKey));
    expect(noQr.status).toBe(409);
    expect(noQr.body.error.code).toBe('conflict');

    const statuses = (await eventsOf(created.id, 'session.status')).map((e) => e.payload.status);
    expect(statuses).toEqual(['starting', 'scan_qr_code', 'working']);
    expect((await eventsOf(created.id, 'auth.qr'))[0].payload).toEqual({ qr: qr.body.qr, expiresAt: qr.body.expiresAt });
    expect((await eventsOf(created.id, 'session.connected'))[0].payload).toMatchObject({ phoneNumber: '15550001111', waJid: working.waJid });
  });

  it('restart of a paired session keeps the attachment and reconnects without a QR', async () => {
    const s = await pairedSession('Paired', '15550002222');
    const qrsBefore = (await eventsOf(s.id, 'auth.qr')).length;
    const res = await api().post(`/api/v1/sessions/${s.id}:restart`).set(bearer(org.users.member.token));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(SESSION_FIELDS);
    const again = await waitStatus(s.id, 'working');
    expect(again.waJid).toBe(s.waJid);
    expect(again.phoneNumber).toBe('15550002222');
    expect((await eventsOf(s.id, 'auth.qr')).length).toBe(qrsBefore);
    expect((await eventsOf(s.id, 'session.status')).map((e) => e.payload.status).slice(-2)).toEqual(['starting', 'working']);
    expect((await simGet(`/sim/sessions/${s.id}`)).connected).toBe(true);
  });

  it('restart of an unpaired session starts a fresh QR flow with a new QR', async () => {
    const s = await createSession('Unpaired');
    await waitStatus(s.id, 'scan_qr_code');
    const first = (await api().get(`/api/v1/sessions/${s.id}/qr`).set(bearer(org.adminKey))).body.qr;
    expect(first).toEqual(expect.any(String));
    const res = await api().post(`/api/v1/sessions/${s.id}:restart`).set(bearer(org.adminKey));
    expect(res.status).toBe(200);
    const second = await waitFor(async () => {
      const r = await api().get(`/api/v1/sessions/${s.id}/qr`).set(bearer(org.adminKey));
      return r.status === 200 && r.body.qr !== first ? r.body.qr : null;
    }, 10000, 'a new QR');
    expect(second).not.toBe(first);
    expect((await getSession(s.id)).status).toBe('scan_qr_code');
  });

  it('an inbound message becomes a message.received event in the outbox and on the stream', async () => {
    const s = await pairedSession('Inbound', '15550003333');
    const sent = await simPost(`/sim/sessions/${s.id}/inbound`, { from: '15559990000@s.whatsapp.net', text: 'hello gateway' });
    expect(sent.status).toBe(200);
    const [event] = await waitFor(async () => {
      const found = await eventsOf(s.id, 'message.received');
      return found.length ? found : null;
    }, 10000, 'message.received');
    expect(event.payload).toMatchObject({ message: { direction: 'in', status: 'received', from: '15559990000@s.whatsapp.net', text: 'hello gateway' } });
    const { createRedis } = await import('@app/redis');
    const redis = createRedis(process.env.REDIS_URL!);
    try {
      // the stream append follows the outbox commit (the event commits with the message row), so it may trail it
      const streamed = await waitFor(async () => {
        const entries = await redis.xrange(`${process.env.REDIS_KEY_PREFIX}:events`, '-', '+');
        const envelopes = entries.map(([, fields]) => JSON.parse(fields[1]));
        return envelopes.some((e) => e.event === 'message.received' && e.sessionId === s.id && e.payload.message.text === 'hello gateway') || null;
      }, 5000, 'message.received on the stream');
      expect(streamed).toBe(true);
    } finally {
      redis.disconnect();
    }
  });

  describe('groups', () => {
    let working: { id: string; waJid: string };

    beforeAll(async () => {
      working = await pairedSession('Groups', '15550004444');
    });

    it('validates the body (422)', async () => {
      const url = `/api/v1/sessions/${working.id}/groups`;
      for (const body of [{}, { name: '' }, { name: 42 }, { name: 'x', participants: 'nope' }, { name: 'x', participants: ['not-a-jid'] }, { name: 'x', extra: 1 }]) {
        const res = await api().post(url).set(bearer(org.adminKey)).send(body);
        expect(res.status).toBe(422);
        expect(res.body.error.code).toBe('validation_error');
      }
    });

    it('creates a group on the network, stores and lists it (201)', async () => {
      const participants = ['15557770001@s.whatsapp.net', '15557770002@s.whatsapp.net'];
      const res = await api().post(`/api/v1/sessions/${working.id}/groups`).set(bearer(org.users.member.token)).send({ name: 'Project team', participants });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(GROUP_FIELDS);
      expect(res.body).toMatchObject({ subject: 'Project team', ownerJid: working.waJid, isAnnounce: false, isLocked: false });
      expect(res.body.groupJid).toMatch(/@g\.us$/);

      const listed = await api().get(`/api/v1/sessions/${working.id}/groups`).set(bearer(org.users.viewer.token));
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual([res.body]);

      const onNetwork = (await simGet(`/sim/groups?sessionId=${working.id}`)).data;
      expect(onNetwork).toHaveLength(1);
      expect(onNetwork[0].participants).toEqual(expect.arrayContaining(participants));
      // the network counts the creator as a member, as WhatsApp does
      expect(res.body.participants).toBe(onNetwork[0].participants.length);
      expect((await eventsOf(working.id, 'group.created'))[0].payload).toEqual(res.body);
    });

    it('refuses group creation while the session is not working (501)', async () => {
      const s = await createSession('Not connected');
      await waitStatus(s.id, 'scan_qr_code');
      const res = await api().post(`/api/v1/sessions/${s.id}/groups`).set(bearer(org.adminKey)).send({ name: 'Nope' });
      expect(res.status).toBe(501);
      expect(res.body.error.code).toBe('not_implemented');
    });

    it('needs groups:write', async () => {
      const key = await org.apiKey(['sessions:read', 'sessions:write']);
      const res = await api().post(`/api/v1/sessions/${working.id}/groups`).set(bearer(key.token)).send({ name: 'x' });
      expect(res.status).toBe(403);
    });
  });

  it('logout unlinks the device, clears the number, keeps the row, and is idempotent', async () => {
    const s = await pairedSession('Logout', '15550005555');
    const res = await api().post(`/api/v1/sessions/${s.id}:logout`).set(bearer(org.users.member.token));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: s.id, status: 'logged_out', phoneNumber: null, waJid: null, waLid: null });
    expect((await api().get(`/api/v1/sessions/${s.id}`).set(bearer(org.adminKey))).status).toBe(200);
    // the device tells the network on its way out (the real engine's remove-companion-device IQ lands just after)
    const device = await waitFor(async () => {
      const d = await simGet(`/sim/sessions/${s.id}`);
      return d.state === 'unlinked' ? d : null;
    }, 10000, 'the network to forget the device');
    expect(device.connected).toBe(false);
    expect(await eventsOf(s.id, 'session.logged_out')).toHaveLength(1);

    const again = await api().post(`/api/v1/sessions/${s.id}:logout`).set(bearer(org.users.member.token));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);

    const group = await api().post(`/api/v1/sessions/${s.id}/groups`).set(bearer(org.adminKey)).send({ name: 'x' });
    expect(group.status).toBe(501);

    // a logged-out session can be paired again from scratch
    const started = await api().post(`/api/v1/sessions/${s.id}:start`).set(bearer(org.adminKey));
    expect(started.status).toBe(200);
    await waitStatus(s.id, 'scan_qr_code');
  });

  it('a device unlinked on the phone is logged out: number cleared, session.logged_out with its reason', async () => {
    const s = await pairedSession('Unlinked on phone', '15550005556');
    expect((await simPost(`/sim/sessions/${s.id}/unlink`)).status).toBe(200);
    const out = await waitStatus(s.id, 'logged_out');
    expect(out).toMatchObject({ phoneNumber: null, waJid: null, waLid: null });
    // the row is written before the event is published: the status can be read a moment before the event exists
    await waitFor(async () => (await eventsOf(s.id, 'session.logged_out')).length > 0, 10000, 'session.logged_out published');
    expect((await eventsOf(s.id, 'session.logged_out')).map((e) => e.payload)).toEqual([{ reason: 'unlinked_on_phone' }]);
    expect(await simGet(`/sim/sessions/${s.id}`)).toMatchObject({ state: 'unlinked', connected: false });
  });

  it('stop and start are idempotent lifecycle commands', async () => {
    const s = await createSession('Stop me');
    await waitStatus(s.id, 'scan_qr_code');
    for (let i = 0; i < 2; i++) {
      const stopped = await api().post(`/api/v1/sessions/${s.id}:stop`).set(bearer(org.adminKey));
      expect(stopped.status).toBe(200);
      expect(stopped.body.status).toBe('stopped');
    }
    expect((await simGet(`/sim/sessions/${s.id}`)).connected).toBe(false);
    const started = await api().post(`/api/v1/sessions/${s.id}:start`).set(bearer(org.adminKey));
    expect(started.status).toBe(200);
    await waitStatus(s.id, 'scan_qr_code');
    const twice = await api().post(`/api/v1/sessions/${s.id}:start`).set(bearer(org.adminKey));
    expect(twice.body.status).toBe('scan_qr_code');
  });

  it('pairs with a pairing code instead of a QR', async () => {
    const s = await createSession('Code');
    await waitStatus(s.id, 'scan_qr_code');
    const bad = await api().post(`/api/v1/sessions/${s.id}:request-code`).set(bearer(org.adminKey)).send({ phoneNumber: 'abc' });
    expect(bad.status).toBe(422);
    const res = await api().post(`/api/v1/sessions/${s.id}:request-code`).set(bearer(org.adminKey)).send({ phoneNumber: '15550006666' });
    expect(res.status).toBe(200);
    expect(res.body.code).toMatch(/^[A-Z0-9]{8}$/);
    expect((await simPost(`/sim/sessions/${s.id}/pair-code`, { code: res.body.code })).status).toBe(200);
    const working = await waitStatus(s.id, 'working');
    expect(working.phoneNumber).toBe('15550006666');
  });

  it('lists with pagination and updates label and settings', async () => {
    const page1 = await api().get('/api/v1/sessions?limit=2').set(bearer(org.users.viewer.token));
    expect(page1.status).toBe(200);
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await api().get(`/api/v1/sessions?limit=2&cursor=${page1.body.nextCursor}`).set(bearer(org.users.viewer.token));
    expect(page2.body.data[0].id > page1.body.data[1].id).toBe(true);
    expect((await api().get('/api/v1/sessions').set(bearer(other.adminKey))).body.data).toEqual([]);

    const id = page1.body.data[0].id;
    const patched = await api().patch(`/api/v1/sessions/${id}`).set(bearer(org.adminKey)).send({ label: 'Renamed', autoRead: false, ratePerMin: 5 });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ label: 'Renamed', autoRead: false, ratePerMin: 5, ratePerHour: 200 });
    expect(Object.keys(patched.body).sort()).toEqual(SESSION_FIELDS);
    for (const body of [{ label: '' }, { ratePerMin: 0 }, { autoRead: 'yes' }, { status: 'working' }]) {
      expect((await api().patch(`/api/v1/sessions/${id}`).set(bearer(org.adminKey)).send(body)).status).toBe(422);
    }
    expect((await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({})).status).toBe(422);
  });

  it('enforces rights: reads need sessions:read, lifecycle needs sessions:write', async () => {
    const [any] = (await api().get('/api/v1/sessions').set(bearer(org.adminKey))).body.data;
    expect((await api().get(`/api/v1/sessions/${any.id}`).set(bearer(org.users.viewer.token))).status).toBe(200);
    expect((await api().post(`/api/v1/sessions/${any.id}:restart`).set(bearer(org.users.viewer.token))).status).toBe(403);
    expect((await api().post('/api/v1/sessions').set(bearer(org.users.viewer.token)).send({ label: 'x' })).status).toBe(403);
    const writer = await org.apiKey(['webhooks:manage']);
    expect((await api().get('/api/v1/sessions').set(bearer(writer.token))).status).toBe(403);
    expect((await api().get('/api/v1/sessions')).status).toBe(401);
  });

  it('hides every session endpoint from another organization (404)', async () => {
    const [mine] = (await api().get('/api/v1/sessions').set(bearer(org.adminKey))).body.data;
    const id = mine.id;
    const calls = [
      api().get(`/api/v1/sessions/${id}`),
      api().patch(`/api/v1/sessions/${id}`).send({ label: 'stolen' }),
      api().delete(`/api/v1/sessions/${id}`),
      api().post(`/api/v1/sessions/${id}:start`),
      api().post(`/api/v1/sessions/${id}:stop`),
      api().post(`/api/v1/sessions/${id}:restart`),
      api().post(`/api/v1/sessions/${id}:logout`),
      api().post(`/api/v1/sessions/${id}:request-code`).send({ phoneNumber: '15550001234' }),
      api().get(`/api/v1/sessions/${id}/qr`),
      api().get(`/api/v1/sessions/${id}/groups`),
      api().post(`/api/v1/sessions/${id}/groups`).send({ name: 'x' }),
    ];
    for (const call of calls) {
      const res = await call.set(bearer(other.adminKey));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await getSession(id)).label).toBe(mine.label);
  });

  it('accepts a webhook scoped to an own session and refuses another organization’s (422)', async () => {
    const [mine] = (await api().get('/api/v1/sessions').set(bearer(org.adminKey))).body.data;
    const ok = await api().post('/api/v1/webhooks').set(bearer(org.adminKey)).send({ url: 'http://127.0.0.1:9/hook', sessionId: mine.id });
    expect(ok.status).toBe(201);
    expect(ok.body.sessionId).toBe(mine.id);
    const refused = await api().post('/api/v1/webhooks').set(bearer(other.adminKey)).send({ url: 'http://127.0.0.1:9/hook', sessionId: mine.id });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('validation_error');
  });

  it('DELETE stops, unlinks and deletes the session (204)', async () => {
    const s = await pairedSession('Delete me', '15550007777');
    const res = await api().delete(`/api/v1/sessions/${s.id}`).set(bearer(org.users.member.token));
    expect(res.status).toBe(204);
    expect((await api().get(`/api/v1/sessions/${s.id}`).set(bearer(org.adminKey))).status).toBe(404);
    let device: { state?: string } = {};
    await waitFor(async () => (device = await simGet(`/sim/sessions/${s.id}`)).state === 'unlinked', 10000, 'the network to forget the device').catch((err: Error) => {
      throw new Error(`${err.message}; it shows ${JSON.stringify(device)}`);
    });
    const db = await testDataSource();
    expect(await db.query('SELECT 1 FROM session_auth_keys WHERE session_id = $1', [s.id])).toHaveLength(0);
  });
});
