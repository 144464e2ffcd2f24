import type { INestApplication } from '@nestjs/common';
import { writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import request from 'supertest';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:whatsapp-web-group-admin-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '8000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';

/** A 1×1 PNG (Baileys makes the 640×640 JPEG WhatsApp keeps of it). */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/**
 * Group administration and statuses (CONTRACT 13, issues 18 and 21) on the real engine (Baileys 7.0.0-rc14) against
 * the simulator's WhatsApp Web front door: the `w:g2` IQs answered with WhatsApp's rights and codes, the `w:gp2`
 * notifications they cause, and statuses sent with sender keys to `status@broadcast`. Two paired sessions on one
 * network: A creates and administers the group, B joins it by invite from its own session (and sees statuses).
 */
describe('Group administration and statuses on the Baileys engine against the WhatsApp Web front door', () => {
  jest.setTimeout(60_000);
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  const ids = { a: '', b: '' };
  const gatewayId = `gw-waweb-group-admin-${process.pid}`;
  const debugLogs: Record<string, string> = process.env.WHATSAPP_WEB_E2E_LOG ? { LOG_LEVEL: 'debug' } : {};
  const gatewayTuning = { RECONNECT_BASE_DELAY_MS: '100', GATEWAY_HEARTBEAT_MS: '1000', GATEWAY_TTL_MS: '10000', ...debugLogs };
  const jid = (phone: string) => `${phone}@s.whatsapp.net`;
  const A = jid('15557772000');
  const B = jid('15557772001');
  const ALICE = jid('15557772002');
  const BOB = jid('15557772003');
  const CAROL = jid('15557772004');
  const NOT_ON_WHATSAPP = jid('15557772999');
  let groupJid = '';

  const api = () => request(app.getHttpServer());
  const { get: simGet, post: simPost } = simControl(() => simUrl);
  const { waitStatus } = sessionProbes(api, () => org.adminKey);
  const groupPath = (who: 'a' | 'b', suffix = '') => `/api/v1/sessions/${ids[who]}/groups/${groupJid}${suffix}`;
  /** the payloads of a session's events of one type about our group, once `done` holds */
  const eventsUntil = <T>(who: 'a' | 'b', type: string, done: (payloads: T[]) => boolean, what: string) =>
    waitFor(async () => {
      const payloads = (await storedEvents(ids[who], type)).map((e) => e.payload as T);
      return done(payloads) ? payloads : null;
    }, 20000, what);
  type Participants = { groupJid: string; action: string; participants: string[]; actor?: string };
  type Update = { groupJid: string; changes: Record<string, unknown>; actor?: string };
  const participantEvent = (who: 'a' | 'b', expected: Participants) =>
    eventsUntil<Participants>(who, 'group.participants', (p) => p.some((e) => isDeepStrictEqual(e, expected)), `${who}: ${JSON.stringify(expected)}`);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's control API is untyped JSON
  const onNetwork = async (): Promise<any> => simGet(`/sim/groups/${groupJid}`);
  const pendingNone = (who: 'a' | 'b') => waitFor(async () => (await simGet(`/sim/sessions/${ids[who]}`)).pendingInbound === 0, 10000, `session ${who} to take what the network sent`);

  const pair = async (label: string, phone: string, settings: object = {}) => {
    const s = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label, ...settings });
    expect(s.status).toBe(201);
    await waitStatus(s.body.id, 'scan_qr_code', 20000);
    const qr = (await api().get(`/api/v1/sessions/${s.body.id}/qr`).set(bearer(org.adminKey))).body.qr;
    expect((await simPost(`/sim/sessions/${s.body.id}/scan`, { phoneNumber: phone.split('@')[0], qr })).status).toBe(200);
    return s.body.id as string;
  };

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, { engine: 'baileys', sim: { SIM_QR_INTERVAL_MS: '60000', LOG_LEVEL: 'info', ...debugLogs }, gateway: gatewayTuning }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('WhatsApp Web Group Admin Inc');
    ids.a = await pair('Admin', A);
    ids.b = await pair('Joiner', B, { receiveStatus: true });
    // two first logins, each uploading 812 pre-keys, on a shared machine
    await Promise.all([waitStatus(ids.a, 'working', 90000), waitStatus(ids.b, 'working', 90000)]);
    // the contacts exist on the network (NOT_ON_WHATSAPP does not)
    for (const phone of [ALICE, BOB, CAROL]) expect((await simPost('/sim/contacts', { phoneNumber: phone.split('@')[0] })).status).toBe(200);
    const created = await api().post(`/api/v1/sessions/${ids.a}/groups`).set(bearer(org.adminKey)).send({ name: 'Admin team', participants: [ALICE] });
    expect(created.status).toBe(201);
    groupJid = created.body.groupJid;
  }, 180_000);

  afterAll(async () => {
    if (process.env.WHATSAPP_WEB_E2E_LOG) writeFileSync(process.env.WHATSAPP_WEB_E2E_LOG, `${gateway?.output()}\n---- simulator ----\n${sim?.output()}`);
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('reads the group fresh from the network (w:g2 query): members with their admin flags', async () => {
    const res = await api().get(groupPath('a')).set(bearer(org.adminKey));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      groupJid,
      subject: 'Admin team',
      description: '',
      ownerJid: A,
      participants: 2,
      isAnnounce: false,
      isLocked: false,
      participantList: [
        { jid: A, isAdmin: true, isSuperAdmin: true },
        { jid: ALICE, isAdmin: false, isSuperAdmin: false },
      ],
      pictureUrl: null,
    });
    // the read reached the network through the front door, counted as the sim door counts it
    expect((await onNetwork()).metadataReads).toBeGreaterThanOrEqual(1);
  });

  it('changes subject, description and settings (one w:g2 IQ each): the answer, the network, and group.update with the actor', async () => {
    for (const change of [{ subject: 'Renamed team' }, { description: 'the rules' }, { isAnnounce: true }, { isLocked: true }]) {
      const res = await api().patch(groupPath('a')).set(bearer(org.adminKey)).send(change);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject(change);
      await eventsUntil<Update>('a', 'group.update', (p) => p.some((e) => isDeepStrictEqual(e, { groupJid, changes: change, actor: A })), `group.update ${JSON.stringify(change)}`);
    }
    expect(await onNetwork()).toMatchObject({ subject: 'Renamed team', description: 'the rules', isAnnounce: true, isLocked: true });
    // unlocked and open again for what follows, in one PATCH (two IQs, two notifications)
    const reopened = await api().patch(groupPath('a')).set(bearer(org.adminKey)).send({ isAnnounce: false, isLocked: false });
    expect(reopened.status).toBe(200);
    expect(await onNetwork()).toMatchObject({ isAnnounce: false, isLocked: false });
    await pendingNone('a');
  });

  it('adds, promotes, demotes and removes, answered per participant with WhatsApp\'s codes; group.participants with the actor', async () => {
    const change = async (action: string, participants: string[]) => {
      const res = await api().post(groupPath('a', '/participants')).set(bearer(org.adminKey)).send({ action, participants });
      expect(res.status).toBe(200);
      return res.body.data.map((r: { jid: string; status: string }) => [r.jid, r.status]);
    };
    expect(await change('add', [BOB, CAROL, ALICE, NOT_ON_WHATSAPP])).toEqual([[BOB, 'ok'], [CAROL, 'ok'], [ALICE, 'already'], [NOT_ON_WHATSAPP, 'not_on_whatsapp']]);
    await participantEvent('a', { groupJid, action: 'add', participants: [BOB, CAROL], actor: A });
    expect(await change('promote', [BOB])).toEqual([[BOB, 'ok']]);
    await participantEvent('a', { groupJid, action: 'promote', participants: [BOB], actor: A });
    expect(await change('promote', [BOB, NOT_ON_WHATSAPP])).toEqual([[BOB, 'already'], [NOT_ON_WHATSAPP, 'not_in_group']]);
    const read = await api().get(groupPath('a')).set(bearer(org.adminKey));
    expect(read.body.participantList).toEqual([
      { jid: A, isAdmin: true, isSuperAdmin: true },
      { jid: ALICE, isAdmin: false, isSuperAdmin: false },
      { jid: BOB, isAdmin: true, isSuperAdmin: false },
      { jid: CAROL, isAdmin: false, isSuperAdmin: false },
    ]);
    expect(await change('demote', [BOB, A])).toEqual([[BOB, 'ok'], [A, 'not_admin']]);
    await participantEvent('a', { groupJid, action: 'demote', participants: [BOB], actor: A });
    expect(await change('remove', [CAROL])).toEqual([[CAROL, 'ok']]);
    await participantEvent('a', { groupJid, action: 'remove', participants: [CAROL], actor: A });
    expect(await onNetwork()).toMatchObject({ participants: [A, ALICE, BOB], admins: [A], superAdmins: [A] });
    await pendingNone('a');
    // the stored group followed the notifications
    const stored = (await api().get(`/api/v1/sessions/${ids.a}/groups`).set(bearer(org.adminKey))).body.data.find((g: { groupJid: string }) => g.groupJid === groupJid);
    expect(stored).toMatchObject({ participants: 3 });
  });

  it('a second session joins by the admin\'s invite; as a member who is not admin it is refused (409, not_admin per participant); a revoked code is 404', async () => {
    const invite = await api().get(groupPath('a', '/invite')).set(bearer(org.adminKey));
    expect(invite.status).toBe(200);
    expect(invite.body).toEqual({ code: (await onNetwork()).inviteCode, url: `https://chat.whatsapp.com/${invite.body.code}` });

    const joined = await api().post(`/api/v1/sessions/${ids.b}/groups:join`).set(bearer(org.adminKey)).send({ code: invite.body.url });
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ groupJid, subject: 'Renamed team', participants: 4 });
    const expected = { groupJid, action: 'add', participants: [B], actor: B };
    await participantEvent('a', expected);
    await participantEvent('b', expected);

    const before = await onNetwork();
    const patch = await api().patch(groupPath('b')).set(bearer(org.adminKey)).send({ isAnnounce: true });
    expect(patch.status).toBe(409);
    expect(patch.body.error.details).toMatchObject({ reason: 'not_admin' });
    const add = await api().post(groupPath('b', '/participants')).set(bearer(org.adminKey)).send({ action: 'add', participants: [CAROL] });
    expect(add.status).toBe(200);
    expect(add.body.data).toEqual([{ jid: CAROL, status: 'not_admin' }]);
    expect((await api().get(groupPath('b', '/invite')).set(bearer(org.adminKey))).status).toBe(409);
    const after = await onNetwork();
    expect([after.participants, after.isAnnounce]).toEqual([before.participants, before.isAnnounce]);

    const revoked = await api().post(groupPath('a', '/invite:revoke')).set(bearer(org.adminKey));
    expect(revoked.status).toBe(200);
    expect(revoked.body.code).not.toBe(invite.body.code);
    expect((await onNetwork()).inviteCode).toBe(revoked.body.code);
    const stale = await api().post(`/api/v1/sessions/${ids.b}/groups:join`).set(bearer(org.adminKey)).send({ code: invite.body.code });
    expect(stale.status).toBe(404);
  });

  it('the second session leaves (204): both sessions see it with the leaver as actor, the network\'s group follows', async () => {
    const left = await api().post(groupPath('b', ':leave')).set(bearer(org.adminKey));
    expect(left.status).toBe(204);
    const expected = { groupJid, action: 'remove', participants: [B], actor: B };
    await participantEvent('a', expected);
    await participantEvent('b', expected);
    expect((await onNetwork()).participants).toEqual([A, ALICE, BOB]);
    await pendingNone('b');
  });

  it('sets the group picture (w:profile:picture with the group as target): the network keeps the JPEG and the group shows where it is', async () => {
    const res = await api().put(groupPath('a', '/picture')).set(bearer(org.adminKey)).send({ media: { base64: PNG, mimetype: 'image/png' } });
    expect(res.status).toBe(204);
    const kept = (await onNetwork()).pictureSha256;
    expect(kept).toMatch(/^[0-9a-f]{64}$/);
    const read = await api().get(groupPath('a')).set(bearer(org.adminKey));
    expect(read.body.pictureUrl).toMatch(/\/sim\/media\/[0-9a-f]+$/);
    // what the network serves there is the JPEG Baileys made of the PNG
    const served = await fetch(simUrl + read.body.pictureUrl);
    expect(served.headers.get('content-type')).toBe('image/jpeg');
  });

  it('a status posted with sender keys to status@broadcast: the audience decrypts it, the network records it, and the audience\'s session gets status.received', async () => {
    const posted = await api()
      .post(`/api/v1/sessions/${ids.a}/status`)
      .set(bearer(org.adminKey))
      .send({ type: 'text', text: 'Open until 8 pm', backgroundColor: '#1f6feb', audience: [B, ALICE] });
    expect(posted.status).toBe(202);
    const sent = await waitFor(async () => {
      const m = (await api().get(`/api/v1/sessions/${ids.a}/messages/${posted.body.id}`).set(bearer(org.adminKey))).body;
      return m.status === 'sent' ? m : null;
    }, 20000, 'the status to be sent');
    const recorded = (await simGet(`/sim/messages?sessionId=${ids.a}`)).data.find((m: { id: string }) => m.id === sent.waMessageId);
    expect(recorded).toMatchObject({ to: 'status@broadcast', type: 'text', text: 'Open until 8 pm', status: { backgroundColor: '#1f6feb' } });
    // each contact of the audience decrypted it (its phone took the sender key, then the skmsg)
    expect([...recorded.status.audience].sort()).toEqual([B, ALICE].sort());
    const statuses = (await simGet(`/sim/statuses?sessionId=${ids.a}`)).data;
    expect(statuses).toEqual([expect.objectContaining({ id: sent.waMessageId, from: A, deliveredTo: [ids.b] })]);

    type Status = { waMessageId: string; from: string; type: string; text: string };
    const seen = await eventsUntil<Status>('b', 'status.received', (p) => p.some((s) => s.waMessageId === sent.waMessageId), 'B to see A\'s status');
    expect(seen.find((s) => s.waMessageId === sent.waMessageId)).toMatchObject({ from: A, type: 'text', text: 'Open until 8 pm', media: null });
  });

  it('a contact\'s status reaches the device; status.received only where receiveStatus is on', async () => {
    const dave = jid('15557772005');
    for (const id of [ids.a, ids.b]) expect((await simPost(`/sim/sessions/${id}/status`, { from: dave, text: `story for ${id}`, backgroundColor: '#ff8800' })).status).toBe(200);
    type Status = { from: string; type: string; text: string };
    const seen = await eventsUntil<Status>('b', 'status.received', (p) => p.some((s) => s.from === dave), 'B to see dave\'s status');
    expect(seen.filter((s) => s.from === dave)).toEqual([expect.objectContaining({ from: dave, type: 'text', text: `story for ${ids.b}` })]);
    // A took its copy (decrypted and acknowledged it) but announces nothing: receiveStatus is off
    await pendingNone('a');
    expect(await storedEvents(ids.a, 'status.received')).toEqual([]);
  });
});
