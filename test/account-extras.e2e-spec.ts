import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:account-extras-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '4000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { sessionProbes, storedEvents } from './support/session-probes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's and the simulator's JSON, asserted field by field
type Json = any;

/**
 * Labels, statuses and channels (CONTRACT 13) end to end on the sim engine: the API in-process, a real gateway process
 * and the network simulator. The simulator plays the phone (label edits, business or not), contacts (their statuses)
 * and channel admins (posts); every change a user makes is checked where the network keeps it.
 */
describe('labels, status and channels (sim engine)', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let stranger: SeededOrg;
  let phoneSeq = 0;
  const gatewayId = `gw-account-extras-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const { get: simGet } = simControl(() => simUrl);
  const simPost = async (path: string, body: object = {}): Promise<{ status: number; body: Json }> => {
    const res = await fetch(simUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const probes = sessionProbes(api, () => org.adminKey);
  const waitStatus = (id: string, status: string) => probes.waitStatus(id, status, 15000);
  const eventsOf = async (sessionId: string, type: string): Promise<Json[]> => (await storedEvents(sessionId, type)).map((e) => e.payload);
  const eventWhere = (sessionId: string, type: string, match: (p: Json) => boolean) =>
    waitFor(async () => (await eventsOf(sessionId, type)).find(match), 15000, `${type} of ${sessionId}`);

  /** A session of `org`, paired on the network with a number of its own: working, with its account's jid. */
  const pairedSession = async (settings: object = {}, scan: object = {}): Promise<{ id: string; jid: string }> => {
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'extras', ...settings });
    expect(created.status).toBe(201);
    await waitStatus(created.body.id, 'scan_qr_code');
    const phoneNumber = `1555300${String(++phoneSeq).padStart(4, '0')}`;
    const scanned = await simPost(`/sim/sessions/${created.body.id}/scan`, { phoneNumber, ...scan });
    expect(scanned.status).toBe(200);
    await waitStatus(created.body.id, 'working');
    return { id: created.body.id, jid: `${phoneNumber}@s.whatsapp.net` };
  };
  const as = (key: string) => bearer(key);

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, {
      sim: { SIM_QR_INTERVAL_MS: '60000' },
      gateway: { RECONNECT_BASE_DELAY_MS: '100', MESSAGE_SWEEP_MS: '300' },
    }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Extras Inc');
    stranger = await seedOrganization('Stranger Ltd');
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  describe('labels (WhatsApp Business)', () => {
    let business: { id: string; jid: string };
    const CHAT = '15557770001@s.whatsapp.net';

    beforeAll(async () => {
      business = await pairedSession({}, { isBusiness: true });
    }, 30000);

    it('lists the account’s labels, adds one to a chat and removes it; the network keeps them and label.update follows each change', async () => {
      const listed = await api().get(`/api/v1/sessions/${business.id}/labels`).set(as(org.users.member.token));
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((l: Json) => l.name)).toEqual(['New customer', 'New order', 'Pending payment', 'Paid', 'Order complete']);
      expect(listed.body.data[1]).toEqual({ id: '2', name: 'New order', color: 1 });

      // digits are a chat too, normalized like a send's `to`
      const added = await api().post(`/api/v1/sessions/${business.id}/chats/15557770001/labels`).set(as(org.users.member.token)).send({ labelId: '2' });
      expect(added.status).toBe(200);
      expect(added.body).toEqual({ chatJid: CHAT, labels: [{ id: '2', name: 'New order', color: 1 }] });
      expect((await simGet(`/sim/sessions/${business.id}/labels`)).chats).toEqual({ [CHAT]: ['2'] });
      expect(await eventWhere(business.id, 'label.update', (p) => p.action === 'assigned')).toEqual({
        action: 'assigned', labelId: '2', label: { id: '2', name: 'New order', color: 1 }, chatJid: CHAT,
      });

      const removed = await api().delete(`/api/v1/sessions/${business.id}/chats/${CHAT}/labels/2`).set(as(org.users.member.token));
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ chatJid: CHAT, labels: [] });
      expect((await simGet(`/sim/sessions/${business.id}/labels`)).chats).toEqual({});
      await eventWhere(business.id, 'label.update', (p) => p.action === 'unassigned' && p.chatJid === CHAT);
    }, 30000);

    it('a label the phone creates reaches the session as label.update and is listed; an unknown label is 404 and changes nothing', async () => {
      const edited = await simPost(`/sim/sessions/${business.id}/labels`, { name: 'VIP', color: 7 });
      expect(edited.status).toBe(200);
      const id = edited.body.id;
      expect(await eventWhere(business.id, 'label.update', (p) => p.action === 'edited' && p.labelId === id)).toEqual({
        action: 'edited', labelId: id, label: { id, name: 'VIP', color: 7 }, chatJid: null,
      });
      const listed = await api().get(`/api/v1/sessions/${business.id}/labels`).set(as(org.users.member.token));
      expect(listed.body.data).toContainEqual({ id, name: 'VIP', color: 7 });

      const unknown = await api().post(`/api/v1/sessions/${business.id}/chats/${CHAT}/labels`).set(as(org.users.member.token)).send({ labelId: '999' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('not_found');
      expect((await simGet(`/sim/sessions/${business.id}/labels`)).chats).toEqual({});
    }, 30000);

    it('a non-business account answers 409 to every label operation, and the network keeps nothing', async () => {
      const personal = await pairedSession();
      for (const res of [
        await api().get(`/api/v1/sessions/${personal.id}/labels`).set(as(org.users.member.token)),
        await api().post(`/api/v1/sessions/${personal.id}/chats/${CHAT}/labels`).set(as(org.users.member.token)).send({ labelId: '1' }),
        await api().delete(`/api/v1/sessions/${personal.id}/chats/${CHAT}/labels/1`).set(as(org.users.member.token)),
      ]) {
        expect(res.status).toBe(409);
        expect(res.body.error.code).toBe('conflict');
      }
      expect(await simGet(`/sim/sessions/${personal.id}/labels`)).toEqual({ jid: personal.jid, isBusiness: false, labels: [], chats: {} });
    }, 30000);

    it('422 names the field: a chat that is no JID, a missing labelId', async () => {
      const badJid = await api().post(`/api/v1/sessions/${business.id}/chats/not-a-jid/labels`).set(as(org.users.member.token)).send({ labelId: '1' });
      expect(badJid.status).toBe(422);
      expect(Object.keys(badJid.body.error.details.fields)).toEqual(['jid']);
      const noLabel = await api().post(`/api/v1/sessions/${business.id}/chats/${CHAT}/labels`).set(as(org.users.member.token)).send({});
      expect(noLabel.status).toBe(422);
      expect(Object.keys(noLabel.body.error.details.fields)).toEqual(['labelId']);
      expect((await simGet(`/sim/sessions/${business.id}/labels`)).chats).toEqual({});
    });
  });

  describe('status (stories)', () => {
    it('a status post is a send to status@broadcast: 202, the network records it with its audience, and the audience’s session with receiveStatus gets status.received', async () => {
      const poster = await pairedSession();
      const viewer = await pairedSession({ receiveStatus: true });
      expect((await probes.getSession(viewer.id)).receiveStatus).toBe(true);
      expect((await probes.getSession(poster.id)).receiveStatus).toBe(false);

      const posted = await api()
        .post(`/api/v1/sessions/${poster.id}/status`)
        .set(as(org.users.member.token))
        .send({ type: 'text', text: 'Open until 8 pm today', backgroundColor: '#1f6feb', audience: [viewer.jid, '15557770002'] });
      expect(posted.status).toBe(202);
      expect(posted.body).toMatchObject({ chatJid: 'status@broadcast', direction: 'out', type: 'text', text: 'Open until 8 pm today', status: 'queued' });

      const sent = await waitFor(async () => {
        const m = (await api().get(`/api/v1/sessions/${poster.id}/messages/${posted.body.id}`).set(as(org.users.member.token))).body;
        return m.status === 'sent' ? m : null;
      }, 15000, 'the status to be sent');
      expect(sent.waMessageId).toBe(posted.body.waMessageId);
      const log = await api().get(`/api/v1/sessions/${poster.id}/messages?chatJid=status@broadcast`).set(as(org.users.member.token));
      expect(log.body.data.map((m: Json) => m.id)).toEqual([posted.body.id]);

      const onNetwork = (await simGet(`/sim/messages?sessionId=${poster.id}`)).data.find((m: Json) => m.id === posted.body.waMessageId);
      expect(onNetwork).toMatchObject({ to: 'status@broadcast', text: 'Open until 8 pm today', status: { audience: [viewer.jid, '15557770002@s.whatsapp.net'], backgroundColor: '#1f6feb' } });
      const statuses = (await simGet(`/sim/statuses?sessionId=${poster.id}`)).data;
      expect(statuses).toHaveLength(1);
      expect(statuses[0]).toMatchObject({ id: posted.body.waMessageId, from: poster.jid, audience: [viewer.jid, '15557770002@s.whatsapp.net'], deliveredTo: [viewer.id] });

      expect(await eventWhere(viewer.id, 'status.received', (p) => p.waMessageId === posted.body.waMessageId)).toMatchObject({
        from: poster.jid, type: 'text', text: 'Open until 8 pm today', media: null,
      });
    }, 60000);

    it('status.received only with receiveStatus on: a contact’s status reaches both sessions, only the one with the setting announces it (and a PATCH turns it on)', async () => {
      const off = await pairedSession();
      const on = await pairedSession({ receiveStatus: true });
      const contact = '15557770003@s.whatsapp.net';
      for (const s of [off, on]) expect((await simPost(`/sim/sessions/${s.id}/status`, { from: contact, text: `story for ${s.id}` })).status).toBe(200);
      // the network delivers in order: once the message after the status is received, the status was taken (or dropped)
      for (const s of [off, on]) expect((await simPost(`/sim/sessions/${s.id}/inbound`, { from: contact, text: 'after the story' })).status).toBe(200);
      await eventWhere(off.id, 'message.received', (p) => p.message.text === 'after the story');
      expect(await eventsOf(off.id, 'status.received')).toEqual([]);
      expect(await eventWhere(on.id, 'status.received', () => true)).toMatchObject({ from: contact, type: 'text', text: `story for ${on.id}` });

      expect((await api().patch(`/api/v1/sessions/${off.id}`).set(as(org.adminKey)).send({ receiveStatus: true })).body.receiveStatus).toBe(true);
      expect((await simPost(`/sim/sessions/${off.id}/status`, { from: contact, text: 'second story' })).status).toBe(200);
      expect(await eventWhere(off.id, 'status.received', () => true)).toMatchObject({ from: contact, text: 'second story' });
    }, 60000);

    it('status posts count against the session’s send rate: past ratePerMin, 429 with Retry-After and nothing stored', async () => {
      const limited = await pairedSession({ ratePerMin: 1 });
      const body = { text: 'one a minute', audience: ['15557770004@s.whatsapp.net'] };
      expect((await api().post(`/api/v1/sessions/${limited.id}/status`).set(as(org.users.member.token)).send(body)).status).toBe(202);
      const refused = await api().post(`/api/v1/sessions/${limited.id}/status`).set(as(org.users.member.token)).send(body);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const log = await api().get(`/api/v1/sessions/${limited.id}/messages`).set(as(org.users.member.token));
      expect(log.body.data).toHaveLength(1);
    }, 30000);

    it('the default audience is the session’s contacts; with none yet, 422 names audience; bad bodies name their field', async () => {
      const s = await pairedSession();
      const noContacts = await api().post(`/api/v1/sessions/${s.id}/status`).set(as(org.users.member.token)).send({ text: 'hello' });
      expect(noContacts.status).toBe(422);
      expect(Object.keys(noContacts.body.error.details.fields)).toEqual(['audience']);

      expect((await simPost(`/sim/sessions/${s.id}/inbound`, { from: '15557770005@s.whatsapp.net', text: 'hi' })).status).toBe(200);
      await eventWhere(s.id, 'message.received', () => true);
      const posted = await api().post(`/api/v1/sessions/${s.id}/status`).set(as(org.users.member.token)).send({ text: 'to my contacts' });
      expect(posted.status).toBe(202);
      await waitFor(async () => (await simGet(`/sim/statuses?sessionId=${s.id}`)).data[0], 15000, 'the status on the network');
      expect((await simGet(`/sim/statuses?sessionId=${s.id}`)).data[0].audience).toEqual(['15557770005@s.whatsapp.net']);

      for (const [bad, field] of [
        [{ type: 'text' }, 'text'],
        [{ type: 'image', text: 'no media' }, 'media'],
        [{ type: 'story', text: 'x' }, 'type'],
        [{ text: 'x', backgroundColor: 'blue' }, 'backgroundColor'],
        [{ text: 'x', audience: ['nobody'] }, 'audience'],
        [{ text: 'x', media: { base64: 'aGk=', mimetype: 'image/jpeg' } }, 'media'],
      ] as const) {
        const res = await api().post(`/api/v1/sessions/${s.id}/status`).set(as(org.users.member.token)).send(bad);
        expect({ bad, status: res.status, fields: Object.keys(res.body.error?.details?.fields ?? {}) }).toEqual({ bad, status: 422, fields: [field] });
      }
      expect((await simGet(`/sim/statuses?sessionId=${s.id}`)).data).toHaveLength(1);
    }, 60000);
  });

  describe('channels', () => {
    it('follow by invite link, list, read posts, a new post arrives as channel.message, unfollow (then 404)', async () => {
      const s = await pairedSession();
      const channel = (await simPost('/sim/channels', { name: 'Gateway news', description: 'release notes' })).body;
      expect(channel).toMatchObject({ name: 'Gateway news', jid: expect.stringMatching(/@newsletter$/) });
      expect((await simPost(`/sim/channels/${channel.jid}/posts`, { text: 'first post' })).status).toBe(200);

      const followed = await api()
        .post(`/api/v1/sessions/${s.id}/channels:follow`)
        .set(as(org.users.member.token))
        .send({ invite: `https://whatsapp.com/channel/${channel.invite}` });
      expect(followed.status).toBe(200);
      expect(followed.body).toEqual({ jid: channel.jid, name: 'Gateway news', description: 'release notes', invite: channel.invite, subscribers: 1 });
      expect((await api().get(`/api/v1/sessions/${s.id}/channels`).set(as(org.users.member.token))).body.data).toEqual([followed.body]);
      expect((await simGet('/sim/channels')).data.find((c: Json) => c.jid === channel.jid).followers).toEqual([(await probes.getSession(s.id)).waJid]);

      const posted = (await simPost(`/sim/channels/${channel.jid}/posts`, { text: 'second post' })).body;
      expect(posted.delivered).toEqual([s.id]);
      expect(await eventWhere(s.id, 'channel.message', (p) => p.serverId === posted.serverId)).toMatchObject({ channelJid: channel.jid, text: 'second post', type: 'text' });

      const messages = await api().get(`/api/v1/sessions/${s.id}/channels/${channel.jid}/messages?count=10`).set(as(org.users.member.token));
      expect(messages.status).toBe(200);
      expect(messages.body.data.map((m: Json) => m.text)).toEqual(['second post', 'first post']);
      expect((await api().get(`/api/v1/sessions/${s.id}/channels/${channel.jid}/messages?count=1`).set(as(org.users.member.token))).body.data).toHaveLength(1);

      expect((await api().post(`/api/v1/sessions/${s.id}/channels/${channel.jid}:unfollow`).set(as(org.users.member.token))).status).toBe(204);
      expect((await api().get(`/api/v1/sessions/${s.id}/channels`).set(as(org.users.member.token))).body.data).toEqual([]);
      const again = await api().post(`/api/v1/sessions/${s.id}/channels/${channel.jid}:unfollow`).set(as(org.users.member.token));
      expect(again.status).toBe(404);
      // no longer a follower: a new post is not delivered to it
      expect((await simPost(`/sim/channels/${channel.jid}/posts`, { text: 'third post' })).body.delivered).toEqual([]);
    }, 60000);

    it('an unknown invite is 404; 422 names invite, jid and count', async () => {
      const s = await pairedSession();
      const unknown = await api().post(`/api/v1/sessions/${s.id}/channels:follow`).set(as(org.users.member.token)).send({ invite: 'AAAAAAAAAAAAAAAAAAAAAA' });
      expect(unknown.status).toBe(404);
      const checks: Array<[PromiseLike<Json>, string]> = [
        [api().post(`/api/v1/sessions/${s.id}/channels:follow`).set(as(org.users.member.token)).send({}), 'invite'],
        [api().post(`/api/v1/sessions/${s.id}/channels:follow`).set(as(org.users.member.token)).send({ invite: 'no spaces allowed!' }), 'invite'],
        [api().post(`/api/v1/sessions/${s.id}/channels/12345@g.us:unfollow`).set(as(org.users.member.token)), 'jid'],
        [api().get(`/api/v1/sessions/${s.id}/channels/120363000000000001@newsletter/messages?count=0`).set(as(org.users.member.token)), 'count'],
      ];
      for (const [pending, field] of checks) {
        const res = await pending;
        expect({ field, status: res.status, fields: Object.keys(res.body.error?.details?.fields ?? {}) }).toEqual({ field, status: 422, fields: [field] });
      }
    }, 30000);
  });

  describe('scoping and state', () => {
    it('another organization’s session is 404 for every operation, and a stopped session is 409', async () => {
      const s = await pairedSession({}, { isBusiness: true });
      const CHAT = '15557770006@s.whatsapp.net';
      const calls = (key: string): Array<[string, PromiseLike<Json>]> => [
        ['labels', api().get(`/api/v1/sessions/${s.id}/labels`).set(as(key))],
        ['add label', api().post(`/api/v1/sessions/${s.id}/chats/${CHAT}/labels`).set(as(key)).send({ labelId: '1' })],
        ['remove label', api().delete(`/api/v1/sessions/${s.id}/chats/${CHAT}/labels/1`).set(as(key))],
        ['status', api().post(`/api/v1/sessions/${s.id}/status`).set(as(key)).send({ text: 'x', audience: [CHAT] })],
        ['channels', api().get(`/api/v1/sessions/${s.id}/channels`).set(as(key))],
        ['follow', api().post(`/api/v1/sessions/${s.id}/channels:follow`).set(as(key)).send({ invite: 'AAAAAAAAAAAAAAAAAAAAAA' })],
        ['unfollow', api().post(`/api/v1/sessions/${s.id}/channels/120363000000000001@newsletter:unfollow`).set(as(key))],
        ['channel messages', api().get(`/api/v1/sessions/${s.id}/channels/120363000000000001@newsletter/messages`).set(as(key))],
      ];
      for (const [what, pending] of calls(stranger.adminKey)) {
        const res = await pending;
        expect({ what, status: res.status }).toEqual({ what, status: 404 });
      }

      expect((await api().post(`/api/v1/sessions/${s.id}:stop`).set(as(org.adminKey))).status).toBeLessThan(300);
      await waitStatus(s.id, 'stopped');
      for (const [what, pending] of calls(org.users.member.token)) {
        const res = await pending;
        expect({ what, status: res.status, code: res.body.error?.code }).toEqual({ what, status: 409, code: 'conflict' });
      }
      expect((await api().get(`/api/v1/sessions/${s.id}/messages`).set(as(org.users.member.token))).body.data).toEqual([]);
      expect((await simGet(`/sim/sessions/${s.id}/labels`)).chats).toEqual({});
    }, 60000);
  });
});
