import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:chats-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '4000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';
import { simControl } from './support/sim-control';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the API and the simulator, asserted field by field
type Json = any;

const CHAT_FIELDS = ['jid', 'name', 'isGroup', 'unreadCount', 'archived', 'pinned', 'mutedUntil', 'lastMessage', 'labels'].sort();
const ALICE = '15550002001@s.whatsapp.net';
const BOB = '15550002002@s.whatsapp.net';
const CAROL = '15550002003@s.whatsapp.net';

/**
 * Chats (CONTRACT 12) on the `sim` engine: a real gateway process and the network simulator, the API in-process on the
 * run's PostgreSQL and Redis. Unread counts, read marks, archive / pin / mute on the network and in the API, the phone
 * changing a chat, and a history sync on pairing.
 */
describe('Chats, unread counts and history sync (sim engine)', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let other: SeededOrg;
  const gatewayId = `gw-chats-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const simApi = simControl(() => simUrl);
  const simPost = async (path: string, body: object = {}): Promise<Json> => {
    const res = await simApi.post(path, body);
    const json = (await res.json()) as Json;
    if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const { waitStatus } = sessionProbes(api, () => org.adminKey);
  const chatsOf = async (sessionId: string): Promise<Json[]> => {
    const res = await api().get(`/api/v1/sessions/${sessionId}/chats?limit=100`).set(bearer(org.adminKey));
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const chatOf = async (sessionId: string, jid: string): Promise<Json> => (await chatsOf(sessionId)).find((c) => c.jid === jid);
  const paired = async (label: string, phone: string, settings: object = {}, scan: object = {}) => {
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label, ...settings });
    expect(created.status).toBe(201);
    await waitStatus(created.body.id, 'scan_qr_code');
    await simPost(`/sim/sessions/${created.body.id}/scan`, { phoneNumber: phone, ...scan });
    await waitStatus(created.body.id, 'working');
    return created.body.id as string;
  };
  const chatAction = (sessionId: string, jid: string, verb: string, body?: object) =>
    api().post(`/api/v1/sessions/${sessionId}/chats/${encodeURIComponent(jid)}:${verb}`).set(bearer(org.adminKey)).send(body ?? {});

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, { sim: { SIM_QR_INTERVAL_MS: '60000' } }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Chats Inc');
    other = await seedOrganization('Chats Other');
  });

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  describe('a working session', () => {
    let sessionId: string;

    beforeAll(async () => {
      sessionId = await paired('Chats', '15550001001', { autoRead: false });
    });

    it('counts unread received messages per chat, most recent chat first, and :read sends the read marks and resets the count', async () => {
      const sent: string[] = [];
      for (const text of ['one', 'two', 'three']) sent.push((await simPost(`/sim/sessions/${sessionId}/inbound`, { from: ALICE, text })).id);
      await simPost(`/sim/sessions/${sessionId}/inbound`, { from: BOB, text: 'from bob' });

      const alice = await waitFor(async () => {
        const chat = await chatOf(sessionId, ALICE);
        return chat?.unreadCount === 3 ? chat : null;
      }, 10000, 'Alice with 3 unread');
      expect(Object.keys(alice).sort()).toEqual(CHAT_FIELDS);
      expect(alice).toMatchObject({ isGroup: false, archived: false, pinned: false, mutedUntil: null });
      expect(alice.lastMessage).toMatchObject({ text: 'three', direction: 'in', chatJid: ALICE, fromHistory: false });
      const bob = await waitFor(() => chatOf(sessionId, BOB), 10000, 'Bob');
      expect(bob.unreadCount).toBe(1);
      // Bob wrote last: his chat is first
      expect((await chatsOf(sessionId)).map((c) => c.jid).slice(0, 2)).toEqual([BOB, ALICE]);

      const read = await chatAction(sessionId, ALICE, 'read');
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ jid: ALICE, unreadCount: 0 });
      // WhatsApp Web's read receipts for what was read, on the network
      const log: Json[] = (await simApi.get(`/sim/sessions/${sessionId}/presence-log`)).data;
      expect(log.filter((e) => e.type === 'read' && e.chatJid === ALICE).map((e) => e.waMessageId).sort()).toEqual([...sent].sort());
      expect((await storedEvents(sessionId, 'chat.update')).map((e) => e.payload)).toContainEqual({ jid: ALICE, changes: { unreadCount: 0 } });
      expect((await chatOf(sessionId, BOB)).unreadCount).toBe(1);

      // read again: nothing changed, nothing announced
      expect((await chatAction(sessionId, ALICE, 'read')).status).toBe(200);
      expect((await storedEvents(sessionId, 'chat.update')).filter((e) => (e.payload as Json).jid === ALICE)).toHaveLength(1);
    });

    it(':read up to a given message sends receipts up to it only', async () => {
      const first = (await simPost(`/sim/sessions/${sessionId}/inbound`, { from: CAROL, text: 'c1' })).id;
      const second = (await simPost(`/sim/sessions/${sessionId}/inbound`, { from: CAROL, text: 'c2' })).id;
      await waitFor(async () => (await chatOf(sessionId, CAROL))?.unreadCount === 2, 10000, 'Carol with 2 unread');
      const messages = await api().get(`/api/v1/sessions/${sessionId}/chats/${CAROL}/messages`).set(bearer(org.adminKey));
      expect(messages.status).toBe(200);
      expect(messages.body.data.map((m: Json) => m.waMessageId)).toEqual([second, first]);
      const older = messages.body.data[1];

      expect((await chatAction(sessionId, CAROL, 'read', { messageId: older.id })).status).toBe(200);
      const log: Json[] = (await simApi.get(`/sim/sessions/${sessionId}/presence-log`)).data;
      expect(log.filter((e) => e.type === 'read' && e.chatJid === CAROL).map((e) => e.waMessageId)).toEqual([first]);
    });

    it('with autoRead on, received messages are read at once and not counted', async () => {
      await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ autoRead: true }).expect(200);
      const dave = '15550002004@s.whatsapp.net';
      await simPost(`/sim/sessions/${sessionId}/inbound`, { from: dave, text: 'hi' });
      const chat = await waitFor(() => chatOf(sessionId, dave), 10000, 'Dave');
      expect(chat.unreadCount).toBe(0);
      await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ autoRead: false }).expect(200);
    });

    it('archives, pins and mutes on the network: the account view, the chat list and chat.update events agree', async () => {
      const until = Date.now() + 7 * 24 * 3600_000;
      expect((await chatAction(sessionId, ALICE, 'archive')).body).toMatchObject({ jid: ALICE, archived: true });
      expect((await chatAction(sessionId, ALICE, 'pin')).body).toMatchObject({ pinned: true });
      const muted = await chatAction(sessionId, ALICE, 'mute', { until });
      expect(muted.status).toBe(200);
      expect(muted.body).toMatchObject({ archived: true, pinned: true, mutedUntil: until });

      const account = await simApi.get(`/sim/sessions/${sessionId}/account`);
      expect(account.chats[ALICE]).toEqual({ archived: true, pinned: true, mutedUntil: until, labels: [] });
      expect(await chatOf(sessionId, ALICE)).toMatchObject({ archived: true, pinned: true, mutedUntil: until });

      // undone the same way; a repeat changes nothing and announces nothing
      await chatAction(sessionId, ALICE, 'unarchive').expect(200);
      await chatAction(sessionId, ALICE, 'unpin').expect(200);
      await chatAction(sessionId, ALICE, 'unmute').expect(200);
      await chatAction(sessionId, ALICE, 'unmute').expect(200);
      expect((await simApi.get(`/sim/sessions/${sessionId}/account`)).chats[ALICE]).toEqual({ archived: false, pinned: false, mutedUntil: null, labels: [] });
      expect(await chatOf(sessionId, ALICE)).toMatchObject({ archived: false, pinned: false, mutedUntil: null });
      const changes = (await storedEvents(sessionId, 'chat.update')).map((e) => e.payload as Json).filter((p) => p.jid === ALICE).map((p) => p.changes);
      expect(changes).toEqual([
        { unreadCount: 0 },
        { archived: true },
        { pinned: true },
        { mutedUntil: until },
        { archived: false },
        { pinned: false },
        { mutedUntil: null },
      ]);
    });

    it('stores what the phone changes on a chat and announces it as chat.update', async () => {
      const res = await simPost(`/sim/sessions/${sessionId}/chat`, { jid: BOB, archived: true, read: true });
      expect(res.changes).toEqual({ jid: BOB, archived: true, unreadCount: 0 });
      const chat = await waitFor(async () => {
        const c = await chatOf(sessionId, BOB);
        return c?.archived ? c : null;
      }, 10000, 'Bob archived from the phone');
      expect(chat.unreadCount).toBe(0);
      expect((await storedEvents(sessionId, 'chat.update')).map((e) => e.payload)).toContainEqual({ jid: BOB, changes: { archived: true, unreadCount: 0 } });
    });

    it('refuses bad input with 422 naming the field, and changes nothing', async () => {
      const before = await chatsOf(sessionId);
      const badJid = await chatAction(sessionId, 'not-a-jid', 'archive');
      expect(badJid.status).toBe(422);
      expect(badJid.body.error.details.fields).toHaveProperty('jid');
      const past = await chatAction(sessionId, ALICE, 'mute', { until: 1000 });
      expect(past.status).toBe(422);
      expect(past.body.error.details.fields).toHaveProperty('until');
      const noUntil = await chatAction(sessionId, ALICE, 'mute', {});
      expect(noUntil.status).toBe(422);
      expect(noUntil.body.error.details.fields).toHaveProperty('until');
      const badId = await chatAction(sessionId, ALICE, 'read', { messageId: 42 });
      expect(badId.status).toBe(422);
      expect(badId.body.error.details.fields).toHaveProperty('messageId');
      const carolMessage = (await api().get(`/api/v1/sessions/${sessionId}/chats/${CAROL}/messages`).set(bearer(org.adminKey))).body.data[0];
      const otherChat = await chatAction(sessionId, ALICE, 'read', { messageId: carolMessage.id });
      expect(otherChat.status).toBe(422);
      expect(otherChat.body.error.details.fields).toHaveProperty('messageId');
      const cursor = await api().get(`/api/v1/sessions/${sessionId}/chats?cursor=bm90LWEtY3Vyc29y`).set(bearer(org.adminKey));
      expect(cursor.status).toBe(422);
      expect(await chatsOf(sessionId)).toEqual(before);
    });

    it("names a person's chat by the contact's saved name, else its push name, else its verified business name, and a sender without a push name is a contact at once", async () => {
      const dan = '15550002004@s.whatsapp.net';
      const erin = '15550002005@s.whatsapp.net';
      await simPost('/sim/contacts', { phoneNumber: '15550002004', name: 'Dan' });
      await simPost(`/sim/sessions/${sessionId}/inbound`, { from: dan, text: 'hi from dan' });
      await simPost(`/sim/sessions/${sessionId}/inbound`, { from: erin, text: 'hi from erin' });
      // the chat exists from an earlier case's message of this number ('hi'), and the contact's push name may name it
      // before the message is stored: wait for both
      const named = await waitFor(async () => {
        const chat = await chatOf(sessionId, dan);
        return chat?.name === 'Dan' && chat.lastMessage?.text === 'hi from dan' ? chat : null;
      }, 30000, "Dan's chat named by his push name, with his message");
      expect(named.lastMessage).toMatchObject({ text: 'hi from dan' });
      // Erin set no name: her chat has none, but she is a contact from her first message (no contacts:check needed)
      await waitFor(async () => (await chatOf(sessionId, erin))?.lastMessage?.text === 'hi from erin', 30000, "Erin's chat");
      expect((await chatOf(sessionId, erin)).name).toBeNull();
      const contacts: Json[] = await waitFor(async () => {
        const res = await api().get(`/api/v1/sessions/${sessionId}/contacts?limit=100`).set(bearer(org.adminKey));
        return res.body.data.some((c: Json) => c.jid === erin) ? res.body.data : null;
      }, 30000, 'Erin among the contacts');
      expect(contacts.find((c) => c.jid === erin)).toMatchObject({ phoneNumber: '15550002005', pushName: null });
      expect(contacts.find((c) => c.jid === dan)).toMatchObject({ pushName: 'Dan' });

      // the address book's name (Baileys' contacts.upsert `name`; the simulator's phone has no address book) comes first
      const db = await testDataSource();
      await db.query(`UPDATE contacts SET name = 'Dan (plumber)' WHERE session_id = $1 AND jid = $2`, [sessionId, dan]);
      expect((await chatOf(sessionId, dan)).name).toBe('Dan (plumber)');
      // an action's answer names the chat the same way
      const pinned = await chatAction(sessionId, dan, 'pin');
      expect(pinned.body).toMatchObject({ jid: dan, name: 'Dan (plumber)', pinned: true });
      expect((await chatAction(sessionId, dan, 'unpin')).status).toBe(200);
      // a business's verified name (Baileys' contacts `verifiedName`, its messages' `verifiedBizName`) comes third:
      // after the push name, and it names a chat whose contact has neither a saved nor a push name (issue 38 item 3)
      await db.query(`UPDATE contacts SET verified_name = 'Dan Plumbing Ltd' WHERE session_id = $1 AND jid = $2`, [sessionId, dan]);
      await db.query(`UPDATE contacts SET name = NULL WHERE session_id = $1 AND jid = $2`, [sessionId, dan]);
      expect((await chatOf(sessionId, dan)).name).toBe('Dan');
      // a business that set no push name: its messages carry its verified name (the emulator's `verified_name` node on
      // the real engine), which its contact keeps and its chat is named by
      const fay = '15550002006@s.whatsapp.net';
      await simPost('/sim/contacts', { phoneNumber: '15550002006', isBusiness: true, verifiedName: 'Fay Bakery Ltd' });
      await simPost(`/sim/sessions/${sessionId}/inbound`, { from: fay, text: 'your bread is ready' });
      await waitFor(async () => (await chatOf(sessionId, fay))?.name === 'Fay Bakery Ltd', 30000, "Fay's chat named by her verified name");
      // and the contact list shows it beside the push name
      const listed = (await api().get(`/api/v1/sessions/${sessionId}/contacts?limit=100`).set(bearer(org.adminKey))).body.data as Json[];
      expect(listed.find((c) => c.jid === fay)).toMatchObject({ verifiedName: 'Fay Bakery Ltd', pushName: null });
      expect(listed.find((c) => c.jid === erin)).toMatchObject({ verifiedName: null });
    });

    it('pages the chat list most recent first', async () => {
      const all = await chatsOf(sessionId);
      expect(all.length).toBeGreaterThanOrEqual(4);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: Json = await api().get(`/api/v1/sessions/${sessionId}/chats?limit=2${cursor ? `&cursor=${cursor}` : ''}`).set(bearer(org.adminKey));
        expect(res.status).toBe(200);
        seen.push(...res.body.data.map((c: Json) => c.jid));
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(all.map((c) => c.jid));
    });

    it('is 404 for another organization, and 409 once the session is stopped', async () => {
      const cross = await api().post(`/api/v1/sessions/${sessionId}/chats/${ALICE}:archive`).set(bearer(other.adminKey)).send({});
      expect(cross.status).toBe(404);
      expect((await api().get(`/api/v1/sessions/${sessionId}/chats`).set(bearer(other.adminKey))).status).toBe(404);
      expect((await api().get(`/api/v1/sessions/${sessionId}/chats/${ALICE}/messages`).set(bearer(other.adminKey))).status).toBe(404);

      await api().post(`/api/v1/sessions/${sessionId}:stop`).set(bearer(org.adminKey)).expect(200);
      const stopped = await chatAction(sessionId, ALICE, 'pin');
      expect(stopped.status).toBe(409);
      // the row said `starting` once in a clean-clone CI run right after the stop answered (a race noted on issue 20)
      expect(stopped.body.error.details.status).not.toBe('working');
      expect((await chatOf(sessionId, ALICE)).pinned).toBe(false);
      // reads need no network
      expect((await api().get(`/api/v1/sessions/${sessionId}/chats`).set(bearer(org.users.viewer.token))).status).toBe(200);
    });
  });

  it('stores the history the phone sends on pairing as chats and messages, batch by batch, without delaying a live message', async () => {
    const HISTORY = 600;
    const chats = [
      { jid: '15550003001@s.whatsapp.net', name: 'Erin', unreadCount: 4, archived: true, pinned: false, mutedUntil: null },
      { jid: '15550003002@s.whatsapp.net', name: 'Frank', unreadCount: 0, archived: false, pinned: true, mutedUntil: null },
      { jid: '15550003003@s.whatsapp.net', name: 'Grace', unreadCount: 1, archived: false, pinned: false, mutedUntil: null },
    ];
    const start = Date.now() - 24 * 3600_000;
    const messages = Array.from({ length: HISTORY }, (_, i) => ({
      chatJid: chats[i % 3].jid,
      text: `history ${i}`,
      fromMe: i % 5 === 0,
      timestamp: start + i * 1000,
    }));
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'History', syncHistory: 'recent' });
    expect(created.status).toBe(201);
    expect(created.body.syncHistory).toBe('recent');
    const sessionId = created.body.id;
    await waitStatus(sessionId, 'scan_qr_code');
    await simPost(`/sim/sessions/${sessionId}/scan`, { phoneNumber: '15550001002', history: { chats, messages } });
    // a contact writes while the history is still being played
    const live = await simPost(`/sim/sessions/${sessionId}/inbound`, { from: '15550003009@s.whatsapp.net', text: 'live during the sync' });

    const synced = await waitFor(async () => {
      const events = await storedEvents(sessionId, 'history.synced');
      const total = events.reduce((n, e) => n + (e.payload as Json).messages, 0);
      return total === HISTORY ? events : null;
    }, 60000, 'the whole history stored');
    // one event per batch (the simulator sends 100 messages a batch), the chats with the first
    expect(synced.length).toBe(HISTORY / 100);
    expect((synced[0].payload as Json).chats).toBe(3);

    const received = await storedEvents(sessionId, 'message.received');
    expect(received.map((e) => (e.payload as Json).message.waMessageId)).toEqual([live.id]);
    // the live message did not wait for the sync: it was announced before the last batch was
    const db = await testDataSource();
    const order: Array<{ type: string }> = await db.query(
      `SELECT type FROM events WHERE session_id = $1 AND type IN ('message.received', 'history.synced') ORDER BY id`,
      [sessionId],
    );
    expect(order.map((e) => e.type).indexOf('message.received')).toBeLessThan(order.length - 1);

    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM messages WHERE session_id = $1 AND from_history`, [sessionId]);
    expect(n).toBe(HISTORY);
    const erin = await chatOf(sessionId, chats[0].jid);
    expect(erin).toMatchObject({ name: 'Erin', unreadCount: 4, archived: true, pinned: false });
    expect(erin.lastMessage).toMatchObject({ text: 'history 597', fromHistory: true, direction: 'in' });
    expect(await chatOf(sessionId, chats[1].jid)).toMatchObject({ name: 'Frank', pinned: true });
    // the phone's chat state is the account's on the network too
    expect((await simApi.get(`/sim/sessions/${sessionId}/account`)).chats[chats[0].jid]).toMatchObject({ archived: true });

    const page = await api().get(`/api/v1/sessions/${sessionId}/chats/${chats[2].jid}/messages?limit=3`).set(bearer(org.adminKey));
    expect(page.status).toBe(200);
    // newest first, where they happened
    expect(page.body.data.map((m: Json) => m.text)).toEqual(['history 599', 'history 596', 'history 593']);
    expect(page.body.data.every((m: Json) => m.fromHistory === true)).toBe(true);
    const mine = (await api().get(`/api/v1/sessions/${sessionId}/messages?chatJid=${chats[0].jid}&direction=out&limit=1`).set(bearer(org.adminKey))).body.data[0];
    expect(mine).toMatchObject({ direction: 'out', status: 'sent', fromHistory: true });
  }, 90_000);

  it('stores no history for a session with syncHistory none (the default)', async () => {
    const sessionId = await paired('No history', '15550001003', {}, {
      history: { chats: [{ jid: '15550004001@s.whatsapp.net', name: 'Heidi' }], messages: [{ chatJid: '15550004001@s.whatsapp.net', text: 'old' }] },
    });
    // a live message after the (dropped) history batch is stored: the batch was taken before it
    await simPost(`/sim/sessions/${sessionId}/inbound`, { from: '15550004002@s.whatsapp.net', text: 'after' });
    await waitFor(async () => (await storedEvents(sessionId, 'message.received')).length === 1, 10000, 'the live message');
    await waitFor(async () => (await simApi.get(`/sim/sessions/${sessionId}`)).pendingInbound === 0, 10000, 'every event acknowledged');
    expect(await storedEvents(sessionId, 'history.synced')).toEqual([]);
    expect((await chatsOf(sessionId)).map((c) => c.jid)).toEqual(['15550004002@s.whatsapp.net']);
  });
});
