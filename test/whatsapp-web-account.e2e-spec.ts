import type { INestApplication } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import request from 'supertest';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:whatsapp-web-account-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '8000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's and the simulator's JSON
type Json = any;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
/** a 1×1 PNG: Baileys re-encodes a profile picture as a 640×640 JPEG (sharp) before it sends it */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * CONTRACT 12's account operations on the real engine (Baileys 7.0.0-rc14) against the simulator's WhatsApp Web
 * front door (issues 18 and 20): usync lookups, pictures, the block list, presence, the device's edits, deletes,
 * forwards and votes, contacts' edits and deletes. Each must change and show the same network state the device
 * protocol does (`/sim/sessions/{id}/account`, `/sim/messages`, `/presence-log`). One paired session for the file.
 */
describe('Contacts, profile, presence and message actions on the Baileys engine against the WhatsApp Web front door', () => {
  jest.setTimeout(60_000);
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let sessionId: string;
  const gatewayId = `gw-waweb-account-${process.pid}`;
  const debugLogs: Record<string, string> = process.env.WHATSAPP_WEB_E2E_LOG ? { LOG_LEVEL: 'debug' } : {};
  const gatewayTuning = { RECONNECT_BASE_DELAY_MS: '100', GATEWAY_HEARTBEAT_MS: '1000', GATEWAY_TTL_MS: '10000', ...debugLogs };
  const ACCOUNT = '15557772000';
  const ACCOUNT_JID = `${ACCOUNT}@s.whatsapp.net`;
  const ANA = '15557772001';
  const ANA_JID = `${ANA}@s.whatsapp.net`;
  const BEN = '15557772002';
  const BEN_JID = `${BEN}@s.whatsapp.net`;
  const NOBODY = '15557779999';

  const api = () => request(app.getHttpServer());
  const path = (rest: string) => `/api/v1/sessions/${sessionId}${rest}`;
  const { get: simGet, post: simFetch } = simControl(() => simUrl);
  const simPost = async (p: string, body: object = {}): Promise<Json> => {
    const res = await simFetch(p, body);
    const json = await res.json();
    if (res.status !== 200) throw new Error(`POST ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const { waitStatus } = sessionProbes(api, () => org.adminKey);
  const account = (): Promise<Json> => simGet(`/sim/sessions/${sessionId}/account`);
  const presenceLog = async (): Promise<Json[]> => (await simGet(`/sim/sessions/${sessionId}/presence-log`)).data;
  const onNetwork = async (waMessageId: string): Promise<Json> => (await simGet(`/sim/messages?sessionId=${sessionId}`)).data.find((m: Json) => m.id === waMessageId);
  const eventsOf = async (type: string): Promise<Json[]> => (await storedEvents(sessionId, type)).map((e) => e.payload);
  const waitEvent = (type: string, match: (p: Json) => boolean, what: string) =>
    waitFor(async () => (await eventsOf(type)).find(match) ?? null, 20000, what);
  const sendAndWait = async (body: object): Promise<Json> => {
    const res = await api().post(path('/messages')).set(bearer(org.adminKey)).send(body);
    expect(res.status).toBe(202);
    return waitFor(async () => {
      const m = (await api().get(path(`/messages/${res.body.id}`)).set(bearer(org.adminKey))).body;
      return m.status === 'sent' ? m : null;
    }, 20000, `message ${res.body.id} to be sent`);
  };
  const inbound = async (from: string, text: string): Promise<Json> => {
    const { id } = await simPost(`/sim/sessions/${sessionId}/inbound`, { from, text });
    return waitEvent('message.received', (p) => p.message.waMessageId === id, `the inbound ${text}`).then((p) => p.message);
  };

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, { engine: 'baileys', sim: { SIM_QR_INTERVAL_MS: '60000', LOG_LEVEL: 'info', ...debugLogs }, gateway: gatewayTuning }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('WhatsApp Web Account Inc');
    const s = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Account' });
    expect(s.status).toBe(201);
    sessionId = s.body.id;
    await waitStatus(sessionId, 'scan_qr_code', 20000);
    const qr = (await api().get(`/api/v1/sessions/${sessionId}/qr`).set(bearer(org.adminKey))).body.qr;
    await simPost(`/sim/sessions/${sessionId}/scan`, { phoneNumber: ACCOUNT, qr });
    // the simulator, the gateway and a first login with 812 pre-keys, on a shared machine
    await waitStatus(sessionId, 'working', 60000);
    await simPost('/sim/contacts', { phoneNumber: ANA, name: 'Ana', about: 'Out surfing', pictureBase64: PNG.toString('base64'), pictureMimetype: 'image/png' });
    await simPost('/sim/contacts', { phoneNumber: BEN });
  }, 150_000);

  afterAll(async () => {
    if (process.env.WHATSAPP_WEB_E2E_LOG) writeFileSync(process.env.WHATSAPP_WEB_E2E_LOG, `${gateway?.output()}\n---- simulator ----\n${sim?.output()}`);
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('checks numbers (usync contact): those on the network with jid and lid, the others not; a contact shows its about and picture', async () => {
    const res = await api().post(path('/contacts:check')).set(bearer(org.adminKey)).send({ numbers: [`+${ANA}`, NOBODY, BEN_JID] });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { input: `+${ANA}`, exists: true, jid: ANA_JID, lid: expect.stringMatching(/^\d+@lid$/) },
      { input: NOBODY, exists: false, jid: null, lid: null },
      { input: BEN_JID, exists: true, jid: BEN_JID, lid: expect.stringMatching(/^\d+@lid$/) },
    ]);

    const ana = await api().get(path(`/contacts/${ANA}`)).set(bearer(org.adminKey));
    expect(ana.status).toBe(200);
    expect(ana.body).toMatchObject({ jid: ANA_JID, about: 'Out surfing', pictureUrl: expect.stringContaining('/sim/pictures/') });
    const picture = await fetch(ana.body.pictureUrl);
    expect(sha256(Buffer.from(await picture.arrayBuffer()))).toBe(sha256(PNG));
    const ben = await api().get(path(`/contacts/${BEN}`)).set(bearer(org.adminKey));
    expect(ben.body).toMatchObject({ jid: BEN_JID, about: null, pictureUrl: null });
    expect((await api().get(path(`/contacts/${NOBODY}`)).set(bearer(org.adminKey))).status).toBe(404);
  });

  it('blocks and unblocks (blocklist set by lid): the network\'s account shows it, one event each', async () => {
    const blocked = await api().post(path(`/contacts/${BEN}:block`)).set(bearer(org.adminKey));
    expect(blocked.status).toBe(200);
    expect(blocked.body).toMatchObject({ jid: BEN_JID, blocked: true });
    expect((await account()).blocked).toEqual([BEN_JID]);
    expect(await eventsOf('contact.blocked')).toEqual([{ contact: blocked.body }]);

    const unblocked = await api().post(path(`/contacts/${BEN}:unblock`)).set(bearer(org.adminKey));
    expect(unblocked.status).toBe(200);
    expect((await account()).blocked).toEqual([]);
    expect(await eventsOf('contact.unblocked')).toEqual([{ contact: unblocked.body }]);
  });

  it('sets the about text and the profile picture, and removes it: the network\'s account shows each', async () => {
    const patched = await api().patch(path('/profile')).set(bearer(org.adminKey)).send({ about: 'Replies within a day' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ jid: ACCOUNT_JID, about: 'Replies within a day' });
    expect((await account()).about).toBe('Replies within a day');

    const put = await api().put(path('/profile/picture')).set(bearer(org.adminKey)).send({ media: { base64: PNG.toString('base64'), mimetype: 'image/png' } });
    expect(put.status).toBe(200);
    const sha = (await account()).pictureSha256;
    expect(sha).toMatch(/^[0-9a-f]{64}$/);
    const served = await fetch(put.body.pictureUrl);
    expect(sha256(Buffer.from(await served.arrayBuffer()))).toBe(sha);

    const removed = await api().delete(path('/profile/picture')).set(bearer(org.adminKey));
    expect(removed.status).toBe(200);
    expect(removed.body.pictureUrl).toBeNull();
    expect((await account()).pictureSha256).toBeNull();
  });

  it('chat presence lands in the presence log; a subscription is logged and the contact\'s presence follows as presence.update', async () => {
    for (const presence of ['composing', 'recording', 'paused']) {
      expect((await api().post(path(`/chats/${ANA}/presence`)).set(bearer(org.adminKey)).send({ presence })).status).toBe(204);
    }
    const chatPresences = await waitFor(async () => {
      const entries = (await presenceLog()).filter((e) => e.type === 'presence');
      return entries.length >= 3 ? entries : null;
    }, 10000, 'three chat presences');
    expect(chatPresences.map((e) => [e.chatJid, e.presence])).toEqual([
      [ANA_JID, 'composing'],
      [ANA_JID, 'recording'],
      [ANA_JID, 'paused'],
    ]);

    expect((await api().post(path(`/contacts/${ANA}/presence:subscribe`)).set(bearer(org.adminKey))).status).toBe(204);
    await waitFor(async () => (await presenceLog()).some((e) => e.type === 'presence-subscribe' && e.jid === ANA_JID), 10000, 'the subscription on the network');
    await waitEvent('presence.update', (p) => p.jid === ANA_JID && p.presence === 'unavailable', 'Ana\'s current presence');
    await simPost(`/sim/sessions/${sessionId}/presence`, { jid: ANA_JID, presence: 'available' });
    await waitEvent('presence.update', (p) => p.jid === ANA_JID && p.presence === 'available', 'Ana online');
  });

  it('edits and deletes an own text (protocolMessage): the network\'s entry shows the edit and the revoke', async () => {
    const m = await sendAndWait({ to: ANA_JID, text: 'first words' });
    const edit = await api().patch(path(`/messages/${m.id}`)).set(bearer(org.adminKey)).send({ text: 'better words' });
    expect(edit.status).toBe(200);
    await waitFor(async () => ((await onNetwork(m.waMessageId)).edits.length > 0 ? true : null), 10000, 'the edit on the network');
    expect((await onNetwork(m.waMessageId)).edits).toEqual([{ text: 'better words', at: expect.any(Number) }]);
    await waitEvent('message.edited', (p) => p.message.id === m.id, 'message.edited');

    expect((await api().delete(path(`/messages/${m.id}`)).set(bearer(org.adminKey))).status).toBe(204);
    await waitFor(async () => (await onNetwork(m.waMessageId)).revoked, 10000, 'the revoke on the network');
    // the edit and the revoke are not messages of their own on the network
    expect((await simGet(`/sim/messages?sessionId=${sessionId}`)).data.filter((e: Json) => e.to === ANA_JID && e.text === 'better words')).toEqual([]);
  });

  it('forwards a received text (marked forwarded on the network) and votes on an own poll (opened with the poll\'s secret)', async () => {
    const received = await inbound(ANA_JID, 'pass it on');
    const fwd = await api().post(path(`/messages/${received.id}:forward`)).set(bearer(org.adminKey)).send({ to: BEN_JID });
    expect(fwd.status).toBe(202);
    const forwarded = await waitFor(async () => {
      const m = (await api().get(path(`/messages/${fwd.body.id}`)).set(bearer(org.adminKey))).body;
      return m.status === 'sent' ? m : null;
    }, 20000, 'the forward to be sent');
    expect(await onNetwork(forwarded.waMessageId)).toMatchObject({ to: BEN_JID, type: 'text', text: 'pass it on', forwarded: true });

    const poll = await sendAndWait({ to: ANA_JID, type: 'poll', poll: { name: 'Lunch?', options: ['pizza', 'sushi', 'salad'], selectableCount: 2 } });
    const vote = await sendAndWait({ to: ANA_JID, type: 'pollVote', pollVote: { pollMessageId: poll.id, options: ['sushi', 'salad'] } });
    expect(await onNetwork(vote.waMessageId)).toMatchObject({ to: ANA_JID, type: 'pollVote', pollVote: { pollWaMessageId: poll.waMessageId, options: ['sushi', 'salad'] } });
  });

  it('a contact\'s edit and delete of its message reach the device as WhatsApp sends them: message.edited, message.revoked', async () => {
    const received = await inbound(ANA_JID, 'typo hier');
    await simPost(`/sim/sessions/${sessionId}/edit`, { from: ANA_JID, waMessageId: received.waMessageId, text: 'typo here' });
    const edited = await waitEvent('message.edited', (p) => p.message.id === received.id, 'the contact\'s edit');
    expect(edited).toMatchObject({ previousText: 'typo hier', message: { text: 'typo here', direction: 'in' } });
    await simPost(`/sim/sessions/${sessionId}/revoke`, { from: ANA_JID, waMessageId: received.waMessageId });
    const revoked = await waitEvent('message.revoked', (p) => p.messageId === received.id, 'the contact\'s delete');
    expect(revoked).toMatchObject({ waMessageId: received.waMessageId, chatJid: ANA_JID, by: ANA_JID });
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).pendingInbound === 0, 10000, 'the device to take both');
  });

  it("a business's message carries its verified name (the stanza's verified_name certificate): its contact keeps it and its chat is named by it", async () => {
    const shop = '15557772003';
    await simPost('/sim/contacts', { phoneNumber: shop, isBusiness: true, verifiedName: 'Surf Shop Ltd' });
    await inbound(`${shop}@s.whatsapp.net`, 'your board is ready');
    const chat = await waitFor(async () => {
      const res = await api().get(path('/chats?limit=100')).set(bearer(org.adminKey));
      return res.body.data.find((c: Json) => c.jid === `${shop}@s.whatsapp.net` && c.name === 'Surf Shop Ltd') ?? null;
    }, 10000, "the shop's chat named by its verified name");
    expect(chat).toMatchObject({ jid: `${shop}@s.whatsapp.net`, isGroup: false });
  });

  it('reads what contacts send (autoRead: Baileys\' readMessages, `read` under WhatsApp\'s default privacy): the network logs each read', async () => {
    expect((await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ autoRead: true })).status).toBe(200);
    const first = await inbound(BEN_JID, 'b1');
    const second = await inbound(BEN_JID, 'b2');
    const reads = await waitFor(async () => {
      const ids = (await presenceLog()).filter((e) => e.type === 'read' && e.chatJid === BEN_JID).map((e) => e.waMessageId);
      return ids.length >= 2 ? ids : null;
    }, 10000, 'the read receipts');
    expect(reads.sort()).toEqual([first.waMessageId, second.waMessageId].sort());
  });
});
