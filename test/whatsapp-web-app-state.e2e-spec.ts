import type { INestApplication } from '@nestjs/common';
import { writeFileSync } from 'node:fs';
import request from 'supertest';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:whatsapp-web-app-state-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '8000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';

/**
 * App state sync on the real engine (Baileys 7.0.0-rc14) against the simulator's WhatsApp Web front door (issues 18,
 * 20, 21): the phone shares the app state key after login, Baileys resyncs and uploads encrypted syncd patches
 * (`chatModify`, `addChatLabel`, `updateProfileName`), the door decodes them and the network's account follows
 * (`GET /sim/sessions/{id}/account`, the same model the `sim` door changes). Two sessions: a WhatsApp Business account
 * (labels) and a plain one (labels refused with 409).
 */
describe('App state (chat marks, labels, push name) on the Baileys engine against the WhatsApp Web front door', () => {
  jest.setTimeout(60_000);
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let business: string;
  let plain: string;
  const gatewayId = `gw-waweb-appstate-${process.pid}`;
  const debugLogs: Record<string, string> = process.env.WHATSAPP_WEB_E2E_LOG ? { LOG_LEVEL: 'debug' } : {};
  const gatewayTuning = { RECONNECT_BASE_DELAY_MS: '100', GATEWAY_HEARTBEAT_MS: '1000', GATEWAY_TTL_MS: '10000', ...debugLogs };
  const BUSINESS = '15557772000';
  const PLAIN = '15557773000';
  const ALICE = '15557772001@s.whatsapp.net';
  const BOB = '15557772002@s.whatsapp.net';

  const api = () => request(app.getHttpServer());
  const { get: simGet, post: simPost } = simControl(() => simUrl);
  const { waitStatus } = sessionProbes(api, () => org.adminKey);
  const chats = (sessionId: string, jid: string) => `/api/v1/sessions/${sessionId}/chats/${encodeURIComponent(jid)}`;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's account view is untyped JSON
  const account = async (sessionId: string): Promise<any> => simGet(`/sim/sessions/${sessionId}/account`);
  const chatUpdates = async (sessionId: string, jid: string) =>
    (await storedEvents(sessionId, 'chat.update')).map((e) => e.payload as { jid: string; changes: Record<string, unknown> }).filter((p) => p.jid === jid).map((p) => p.changes);

  const pair = async (label: string, phoneNumber: string, isBusiness: boolean) => {
    const s = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label });
    expect(s.status).toBe(201);
    await waitStatus(s.body.id, 'scan_qr_code', 20000);
    const qr = (await api().get(`/api/v1/sessions/${s.body.id}/qr`).set(bearer(org.adminKey))).body.qr;
    expect((await simPost(`/sim/sessions/${s.body.id}/scan`, { phoneNumber, qr, isBusiness })).status).toBe(200);
    await waitStatus(s.body.id, 'working', 60000);
    return s.body.id as string;
  };

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, { engine: 'baileys', sim: { SIM_QR_INTERVAL_MS: '60000', LOG_LEVEL: 'info', ...debugLogs }, gateway: gatewayTuning }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('WhatsApp Web App State Inc');
    // both first logins at once (each uploads 812 pre-keys), on a shared machine
    [business, plain] = await Promise.all([pair('Business', BUSINESS, true), pair('Plain', PLAIN, false)]);
  }, 150_000);

  afterAll(async () => {
    if (process.env.WHATSAPP_WEB_E2E_LOG) writeFileSync(process.env.WHATSAPP_WEB_E2E_LOG, `${gateway?.output()}\n---- simulator ----\n${sim?.output()}`);
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('archives, pins and mutes a chat with app state patches the network decodes: the account shows it, chat.update follows', async () => {
    const path = chats(plain, ALICE);
    // the first patch waits for the key the phone shares after login
    const archived = await waitFor(async () => {
      const res = await api().post(`${path}:archive`).set(bearer(org.adminKey));
      return res.status === 200 ? res : null;
    }, 20000, 'the first archive (the device holds the app state key)');
    expect(archived.body).toMatchObject({ jid: ALICE, archived: true });
    expect((await api().post(`${path}:pin`).set(bearer(org.adminKey))).status).toBe(200);
    const until = Date.now() + 3_600_000;
    expect((await api().post(`${path}:mute`).set(bearer(org.adminKey)).send({ until })).status).toBe(200);
    expect((await account(plain)).chats[ALICE]).toEqual({ archived: true, pinned: true, mutedUntil: until, labels: [] });

    expect((await api().post(`${path}:unarchive`).set(bearer(org.adminKey))).status).toBe(200);
    expect((await api().post(`${path}:unpin`).set(bearer(org.adminKey))).status).toBe(200);
    expect((await api().post(`${path}:unmute`).set(bearer(org.adminKey))).status).toBe(200);
    expect((await account(plain)).chats[ALICE]).toEqual({ archived: false, pinned: false, mutedUntil: null, labels: [] });

    const updates = await waitFor(async () => {
      const changes = await chatUpdates(plain, ALICE);
      return changes.length >= 6 ? changes : null;
    }, 10000, 'six chat.update events');
    expect(updates).toEqual([{ archived: true }, { pinned: true }, { mutedUntil: until }, { archived: false }, { pinned: false }, { mutedUntil: null }]);
  });

  it('marks a chat read: the markChatAsRead patch naming the chat\'s last message is taken', async () => {
    const inbound = await simPost(`/sim/sessions/${plain}/inbound`, { from: BOB, text: 'read me' });
    expect(inbound.status).toBe(200);
    const { id } = (await inbound.json()) as { id: string };
    await waitFor(async () => (await storedEvents(plain, 'message.received')).some((e) => (e.payload as { message: { waMessageId: string } }).message.waMessageId === id), 20000, 'the text to arrive');
    const res = await api().post(`${chats(plain, BOB)}:read`).set(bearer(org.adminKey)).send({});
    expect(res.body).toMatchObject({ jid: BOB, unreadCount: 0 });
    expect(res.status).toBe(200);
    // and the read receipt itself (`read` under WhatsApp's default privacy): the contact's phone shows blue ticks
    await waitFor(async () => {
      const log = (await simGet(`/sim/sessions/${plain}/presence-log`)).data as Array<{ type: string; waMessageId?: string }>;
      return log.some((e) => e.type === 'read' && e.waMessageId === id);
    }, 10000, 'the read receipt on the network');
  });

  it('a chat the phone archives reaches the device as a patch after server_sync: chat.update from Baileys', async () => {
    const jid = '15557773009@s.whatsapp.net';
    expect((await simPost(`/sim/sessions/${plain}/chat`, { jid, archived: true, pinned: true })).status).toBe(200);
    const updates = await waitFor(async () => {
      const merged = Object.assign({}, ...(await chatUpdates(plain, jid)));
      return merged.archived === true && merged.pinned === true ? merged : null;
    }, 20000, 'the phone\'s marks on the device');
    expect(updates).toMatchObject({ archived: true, pinned: true });
    await waitFor(async () => (await simGet(`/sim/sessions/${plain}`)).pendingInbound === 0, 10000, 'the device to ack the server_sync');
  });

  it('labels: a business account lists the labels the phone synced, adds and removes one on a chat; a plain account gets 409', async () => {
    let last: unknown = null;
    const labels = await waitFor(async () => {
      const res = await api().get(`/api/v1/sessions/${business}/labels`).set(bearer(org.adminKey));
      last = { status: res.status, body: res.body };
      return res.status === 200 && res.body.data.length ? res.body.data : null;
    }, 30000, 'the labels synced from app state').catch((err) => {
      throw new Error(`${err.message}: last answer ${JSON.stringify(last)}`);
    });
    expect(labels).toEqual((await simGet(`/sim/sessions/${business}/labels`)).labels);
    expect(labels[0]).toEqual({ id: '1', name: 'New customer', color: 0 });

    const added = await api().post(`${chats(business, ALICE)}/labels`).set(bearer(org.adminKey)).send({ labelId: '2' });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ chatJid: ALICE, labels: [{ id: '2', name: 'New order', color: 1 }] });
    // the network's model (what the `sim` door changes too)
    expect((await simGet(`/sim/sessions/${business}/labels`)).chats).toEqual({ [ALICE]: ['2'] });
    const assigned = await waitFor(async () => {
      const events = (await storedEvents(business, 'label.update')).map((e) => e.payload as { action: string; labelId: string; chatJid: string | null });
      return events.find((e) => e.action === 'assigned' && e.labelId === '2') ?? null;
    }, 10000, 'label.update assigned');
    expect(assigned).toMatchObject({ chatJid: ALICE });

    const removed = await api().delete(`${chats(business, ALICE)}/labels/2`).set(bearer(org.adminKey));
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ chatJid: ALICE, labels: [] });
    expect((await simGet(`/sim/sessions/${business}/labels`)).chats).toEqual({});

    // the phone makes a label: a phone-written patch and server_sync; Baileys resyncs and the label is listed
    const made = await simPost(`/sim/sessions/${business}/labels`, { name: 'VIP', color: 7 });
    expect(made.status).toBe(200);
    const vip = (await made.json()) as { id: string };
    const listed = await waitFor(async () => {
      const res = await api().get(`/api/v1/sessions/${business}/labels`).set(bearer(org.adminKey));
      return res.body.data?.find((l: { id: string }) => l.id === vip.id) ?? null;
    }, 20000, 'the phone\'s new label on the device');
    expect(listed).toEqual({ id: vip.id, name: 'VIP', color: 7 });
    await waitFor(async () => (await simGet(`/sim/sessions/${business}`)).pendingInbound === 0, 10000, 'the device to ack the label\'s server_sync');

    expect((await api().get(`/api/v1/sessions/${plain}/labels`).set(bearer(org.adminKey))).status).toBe(409);
    expect((await api().post(`${chats(plain, ALICE)}/labels`).set(bearer(org.adminKey)).send({ labelId: '1' })).status).toBe(409);
  });

  it('changes the profile name with a push name patch: the network\'s account carries it', async () => {
    const res = await api().patch(`/api/v1/sessions/${business}/profile`).set(bearer(org.adminKey)).send({ name: 'Acme Support' });
    // the name travels in the app state patch; the answer also reads the picture and about (the account IQs)
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Acme Support');
    expect((await account(business)).name).toBe('Acme Support');
  });
});
