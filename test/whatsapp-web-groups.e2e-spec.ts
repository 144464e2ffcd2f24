import type { INestApplication } from '@nestjs/common';
import { writeFileSync } from 'node:fs';
import request from 'supertest';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:whatsapp-web-groups-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '8000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';

/**
 * The real engine (Baileys 7.0.0-rc14) in groups and beyond 1:1 texts, against the simulator's WhatsApp Web front door
 * (issue 18): group IQs, sender-key messages both ways, `w:gp2` notifications, per-member receipts. One paired session
 * for the whole file (its first login uploads 812 pre-keys); each case uses its own group and members.
 */
describe('Groups, reactions, polls, presence and calls on the Baileys engine against the WhatsApp Web front door', () => {
  jest.setTimeout(60_000);
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let sessionId: string;
  const gatewayId = `gw-waweb-groups-${process.pid}`;
  const debugLogs: Record<string, string> = process.env.WHATSAPP_WEB_E2E_LOG ? { LOG_LEVEL: 'debug' } : {};
  const gatewayTuning = { RECONNECT_BASE_DELAY_MS: '100', GATEWAY_HEARTBEAT_MS: '1000', GATEWAY_TTL_MS: '10000', ...debugLogs };
  const ACCOUNT = '15557771000';
  const ACCOUNT_JID = `${ACCOUNT}@s.whatsapp.net`;

  const api = () => request(app.getHttpServer());
  const { get: simGet, post: simFetch } = simControl(() => simUrl);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's control API is untyped JSON
  const simPost = async (path: string, body: object = {}, method = 'POST'): Promise<{ status: number; body: any }> => {
    const res = method === 'POST' ? await simFetch(path, body) : await fetch(simUrl + path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const { waitStatus } = sessionProbes(api, () => org.adminKey);
  const eventsOf = storedEvents;
  /** the payloads of the session's events of one type, waited for until `done` holds */
  const eventsUntil = <T>(type: string, done: (payloads: T[]) => boolean, what: string, timeoutMs = 20000) =>
    waitFor(async () => {
      const payloads = (await eventsOf(sessionId, type)).map((e) => e.payload as T);
      return done(payloads) ? payloads : null;
    }, timeoutMs, what);
  const sendOverApi = async (to: string, text: string | object) => {
    const body = typeof text === 'string' ? { to, text } : { to, ...text };
    const res = await api().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(org.adminKey)).send(body);
    expect(res.status).toBe(202);
    return waitFor(async () => {
      const m = (await api().get(`/api/v1/sessions/${sessionId}/messages/${res.body.id}`).set(bearer(org.adminKey))).body;
      return m.status === 'sent' ? (m as { id: string; waMessageId: string; status: string }) : null;
    }, 20000, `message ${res.body.id} to be sent`);
  };
  const createGroup = async (name: string, participants: string[]) => {
    const res = await api().post(`/api/v1/sessions/${sessionId}/groups`).set(bearer(org.adminKey)).send({ name, participants });
    expect(res.status).toBe(201);
    return res.body as { groupJid: string; subject: string; ownerJid: string; participants: number };
  };
  type Received = { message: { waMessageId: string; chatJid: string; from: string; text: string } };

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, { engine: 'baileys', sim: { SIM_QR_INTERVAL_MS: '60000', LOG_LEVEL: 'info', ...debugLogs }, gateway: gatewayTuning }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('WhatsApp Web Groups Inc');
    const s = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Groups' });
    expect(s.status).toBe(201);
    sessionId = s.body.id;
    await waitStatus(sessionId, 'scan_qr_code', 20000);
    const qr = (await api().get(`/api/v1/sessions/${sessionId}/qr`).set(bearer(org.adminKey))).body.qr;
    expect((await simPost(`/sim/sessions/${sessionId}/scan`, { phoneNumber: ACCOUNT, qr })).status).toBe(200);
    await waitStatus(sessionId, 'working', 60000);
    // the simulator, the gateway and a first login with 812 pre-keys, on a shared machine
  }, 150_000);

  afterAll(async () => {
    if (process.env.WHATSAPP_WEB_E2E_LOG) writeFileSync(process.env.WHATSAPP_WEB_E2E_LOG, `${gateway?.output()}\n---- simulator ----\n${sim?.output()}`);
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('creates a group over the API (w:g2 create), sends to it with a sender key the members decrypt, and receives what a member sends', async () => {
    const alice = '15557771001@s.whatsapp.net';
    const bob = '15557771002@s.whatsapp.net';
    const group = await createGroup('Emulated team', [alice, bob]);
    expect(group).toMatchObject({ subject: 'Emulated team', ownerJid: ACCOUNT_JID, participants: 3 });
    expect(group.groupJid).toMatch(/@g\.us$/);
    const onNetwork = (await simGet(`/sim/groups?sessionId=${sessionId}`)).data;
    expect(onNetwork).toEqual([expect.objectContaining({ groupJid: group.groupJid, subject: 'Emulated team', participants: [ACCOUNT_JID, alice, bob] })]);

    // the first send distributes the device's sender key (pkmsg per member device), then one skmsg; the second is
    // only the skmsg, which the members read with the key they took: the network records each once, as decrypted
    const first = await sendOverApi(group.groupJid, 'hello team');
    const second = await sendOverApi(group.groupJid, 'second, sender key only');
    const recorded = (await simGet(`/sim/messages?sessionId=${sessionId}`)).data.filter((m: { to: string }) => m.to === group.groupJid);
    expect(recorded.map((m: { id: string; text: string; sends: number }) => [m.id, m.text, m.sends])).toEqual([
      [first.waMessageId, 'hello team', 1],
      [second.waMessageId, 'second, sender key only', 1],
    ]);

    // a member writes to the group: its sender key (1:1 Signal) and its skmsg in one stanza, then the skmsg alone
    const ids: string[] = [];
    for (const text of ['hi from alice', 'alice again']) {
      const res = await simPost(`/sim/sessions/${sessionId}/inbound`, { from: alice, chatJid: group.groupJid, text });
      expect(res.status).toBe(200);
      ids.push(res.body.id);
    }
    const received = await eventsUntil<Received>('message.received', (p) => ids.every((id) => p.some((e) => e.message.waMessageId === id)), 'the member\'s group texts');
    const mine = received.filter((e) => ids.includes(e.message.waMessageId));
    expect(mine.map((e) => [e.message.waMessageId, e.message.chatJid, e.message.from, e.message.text])).toEqual([
      [ids[0], group.groupJid, alice, 'hi from alice'],
      [ids[1], group.groupJid, alice, 'alice again'],
    ]);
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).pendingInbound === 0, 10000, 'the device to take both');
  });

  it('tells the device of group changes made on the network (w:gp2 notifications): stored group and events follow', async () => {
    const carol = '15557771003@s.whatsapp.net';
    const dave = '15557771004@s.whatsapp.net';
    const erin = '15557771005@s.whatsapp.net';
    const group = await createGroup('Changing team', [carol]);

    // changes made elsewhere (another admin's phone): one notification per change, the stored group follows
    const added = await simPost(`/sim/groups/${encodeURIComponent(group.groupJid)}/participants`, { action: 'add', participants: [dave, erin] });
    expect(added.status).toBe(200);
    const participantEvents = await eventsUntil<{ groupJid: string; action: string; participants: string[] }>(
      'group.participants',
      (p) => p.some((e) => e.groupJid === group.groupJid && e.action === 'add'),
      'group.participants add',
    );
    expect(participantEvents.filter((e) => e.groupJid === group.groupJid)).toEqual([expect.objectContaining({ groupJid: group.groupJid, action: 'add', participants: [dave, erin] })]);
    // one change at a time: Baileys rc14's event buffer keeps only the first groups.update of a group per flush
    // (Utils/event-buffer.js), so two notifications processed in one buffer lose the second (docs/network-sim.md)
    type Update = { groupJid: string; changes: Record<string, unknown> };
    for (const change of [{ subject: 'Renamed team' }, { isLocked: true }]) {
      const patched = await simPost(`/sim/groups/${encodeURIComponent(group.groupJid)}`, change, 'PATCH');
      expect(patched.status).toBe(200);
      await eventsUntil<Update>('group.update', (p) => p.some((e) => e.groupJid === group.groupJid && JSON.stringify(e.changes) === JSON.stringify(change)), `group.update ${JSON.stringify(change)}`);
    }
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).pendingInbound === 0, 10000, 'the device to ack the notifications');
    const stored = (await api().get(`/api/v1/sessions/${sessionId}/groups`).set(bearer(org.adminKey))).body.data.find((g: { groupJid: string }) => g.groupJid === group.groupJid);
    expect(stored).toMatchObject({ subject: 'Renamed team', isLocked: true, participants: 4 });

    // a removal reaches the device the same way, and the network's group follows
    const removed = await simPost(`/sim/groups/${encodeURIComponent(group.groupJid)}/participants`, { action: 'remove', participants: [carol] });
    expect(removed.status).toBe(200);
    await eventsUntil<{ groupJid: string; action: string }>('group.participants', (p) => p.some((e) => e.groupJid === group.groupJid && e.action === 'remove'), 'group.participants remove');
    const afterRemoval = (await simGet('/sim/groups')).data.find((g: { groupJid: string }) => g.groupJid === group.groupJid);
    expect(afterRemoval.participants).toEqual([ACCOUNT_JID, dave, erin]);
  });

  it('group receipts come per member (participant); the message is read once every member read it', async () => {
    const frank = '15557771006@s.whatsapp.net';
    const grace = '15557771007@s.whatsapp.net';
    const group = await createGroup('Receipts team', [frank, grace]);
    const sent = await sendOverApi(group.groupJid, 'who read this?');
    type Ack = { waMessageId: string; status: string; participant?: string };
    const acksOf = (p: Ack[]) => p.filter((e) => e.waMessageId === sent.waMessageId).map((e) => [e.status, e.participant ?? null]);

    const receipt = async (from: string, status: string) => {
      const res = await simPost(`/sim/sessions/${sessionId}/receipt`, { waMessageId: sent.waMessageId, status, from });
      expect(res.status).toBe(200);
    };
    await receipt(frank, 'delivered');
    await receipt(grace, 'delivered');
    await receipt(frank, 'read');
    await eventsUntil<Ack>('message.ack', (p) => acksOf(p).some(([s, who]) => s === 'read' && who === frank), 'frank\'s read receipt');
    // one member read: not yet read as a message
    expect((await api().get(`/api/v1/sessions/${sessionId}/messages/${sent.id}`).set(bearer(org.adminKey))).body.status).not.toBe('read');
    await receipt(grace, 'read');
    const acks = await eventsUntil<Ack>('message.ack', (p) => acksOf(p).some(([s, who]) => s === 'read' && who === null), 'the message read by all');
    // one per member and step (frank's delivery too, though Baileys folds it with his read when both arrive together),
    // and the message's own step once every member reached it; events of one transaction share a millisecond, so
    // their order is not asserted
    const order = (list: Array<Array<string | null>>) => [...list].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    expect(order(acksOf(acks))).toEqual(
      order([
        ['delivered', frank],
        ['delivered', grace],
        ['delivered', null],
        ['read', frank],
        ['read', grace],
        ['read', null],
      ]),
    );
    expect((await api().get(`/api/v1/sessions/${sessionId}/messages/${sent.id}`).set(bearer(org.adminKey))).body.status).toBe('read');
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).pendingInbound === 0, 10000, 'the device to ack the receipts');

    // a receipt from someone outside the group is refused, naming the field
    const stranger = await simPost(`/sim/sessions/${sessionId}/receipt`, { waMessageId: sent.waMessageId, status: 'read', from: '15557771999' });
    expect(stranger.status).toBe(422);
    expect(stranger.body.error.details).toHaveProperty('from');
  });

  it('a contact\'s reactions reach message.reaction: on a message the device sent (1:1) and on a member\'s message in a group', async () => {
    const henry = '15557771008@s.whatsapp.net';
    const iris = '15557771009@s.whatsapp.net';
    const mine = await sendOverApi(henry, 'react to this');
    expect((await simPost(`/sim/sessions/${sessionId}/reaction`, { from: henry, waMessageId: mine.waMessageId, emoji: '👍' })).status).toBe(200);

    const group = await createGroup('Reacting team', [henry, iris]);
    const theirs = await simPost(`/sim/sessions/${sessionId}/inbound`, { from: iris, chatJid: group.groupJid, text: 'react to mine' });
    await eventsUntil<Received>('message.received', (p) => p.some((e) => e.message.waMessageId === theirs.body.id), 'iris\'s group text');
    expect((await simPost(`/sim/sessions/${sessionId}/reaction`, { from: iris, waMessageId: theirs.body.id, emoji: '🎉' })).status).toBe(200);

    type Reaction = { messageId: string | null; waMessageId: string; chatJid: string; from: string; emoji: string };
    const reactions = await eventsUntil<Reaction>('message.reaction', (p) => p.length >= 2, 'both reactions');
    expect(reactions.map((r) => [r.waMessageId, r.chatJid, r.from, r.emoji])).toEqual([
      [mine.waMessageId, henry, henry, '👍'],
      [theirs.body.id, group.groupJid, iris, '🎉'],
    ]);
    expect(reactions[0].messageId).toBe(mine.id);
    expect(reactions[1].messageId).not.toBeNull();
    // the message log shows them on the messages (one per reactor)
    const shown = (await api().get(`/api/v1/sessions/${sessionId}/messages/${mine.id}`).set(bearer(org.adminKey))).body;
    expect(shown.reactions).toEqual([{ from: henry, emoji: '👍' }]);
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).pendingInbound === 0, 10000, 'the device to take both reactions');
  });

  it('a poll sent to a group is recorded with its options; a member\'s vote, sealed with the poll\'s secret, reaches poll.vote', async () => {
    const jack = '15557771010@s.whatsapp.net';
    const kate = '15557771011@s.whatsapp.net';
    const group = await createGroup('Voting team', [jack, kate]);
    const poll = await sendOverApi(group.groupJid, { type: 'poll', poll: { name: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'] } });
    const recorded = (await simGet(`/sim/messages?sessionId=${sessionId}`)).data.find((m: { id: string }) => m.id === poll.waMessageId);
    expect(recorded).toMatchObject({ to: group.groupJid, type: 'poll', poll: { name: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'], selectableCount: 1 } });

    expect((await simPost(`/sim/sessions/${sessionId}/poll-vote`, { from: jack, pollWaMessageId: poll.waMessageId, options: ['Sushi'] })).status).toBe(200);
    type Vote = { pollMessageId: string; chatJid: string; voter: string; selectedOptions: string[] };
    const votes = await eventsUntil<Vote>('poll.vote', (p) => p.some((v) => v.pollMessageId === poll.id), 'jack\'s vote');
    expect(votes.filter((v) => v.pollMessageId === poll.id)).toEqual([{ pollMessageId: poll.id, chatJid: group.groupJid, voter: jack, selectedOptions: ['Sushi'] }]);
    const shown = (await api().get(`/api/v1/sessions/${sessionId}/messages/${poll.id}`).set(bearer(org.adminKey))).body;
    expect(shown.pollVotes).toEqual([{ voter: jack, options: ['Sushi'] }]);
  });

  it('a contact\'s presence and chat state reach presence.update; a call offer reaches call.incoming', async () => {
    const liam = '15557771012@s.whatsapp.net';
    for (const presence of ['available', 'composing', 'paused']) {
      expect((await simPost(`/sim/sessions/${sessionId}/presence`, { jid: liam, presence })).status).toBe(200);
    }
    type PresenceUpdate = { chatJid: string; jid: string; presence: string };
    const updates = await eventsUntil<PresenceUpdate>('presence.update', (p) => p.filter((u) => u.jid === liam).length >= 3, 'three presence updates');
    // Baileys reports a paused chat state as `available` (chats.js handlePresenceUpdate)
    expect(updates.filter((u) => u.jid === liam).map((u) => [u.chatJid, u.presence])).toEqual([
      [liam, 'available'],
      [liam, 'composing'],
      [liam, 'available'],
    ]);

    const call = await simPost(`/sim/sessions/${sessionId}/call`, { from: liam, isVideo: true });
    expect(call.status).toBe(200);
    type Call = { callId: string; from: string; isVideo: boolean; isGroup: boolean };
    const calls = await eventsUntil<Call>('call.incoming', (p) => p.some((c) => c.callId === call.body.callId), 'the call');
    expect(calls.filter((c) => c.callId === call.body.callId)).toEqual([{ callId: call.body.callId, from: liam, isVideo: true, isGroup: false, rejected: false }]);
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).pendingInbound === 0, 10000, 'the device to ack the call');
  });
});
