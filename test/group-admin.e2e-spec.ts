import type { INestApplication } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:group-admin-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '5000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { GroupsRepository, SessionsRepository } from '@app/database';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDb } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/**
 * Group administration (issue 21, CONTRACT 13) on the sim engine: three accounts on one simulated network. A creates
 * the group and administers it, B joins by invite from its own session, C is added by A. Rights are WhatsApp's (the
 * simulator refuses a non-admin), every change reaches the other members' sessions as events with the actor, the
 * stored group follows, and a burst of reads reaches the network a bounded number of times.
 */
describe('Group administration against a gateway on the network simulator', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let other: SeededOrg;
  const gatewayId = `gw-groups-${process.pid}`;
  const phones = { a: '15550100001', b: '15550100002', c: '15550100003' };
  const jid = (phone: string) => `${phone}@s.whatsapp.net`;
  const NOT_ON_WHATSAPP = '15550199999@s.whatsapp.net';

  const api = () => request(app.getHttpServer());
  const { get: simGet, post: simPost } = simControl(() => simUrl);
  const { waitStatus } = sessionProbes(api, () => org.adminKey);
  const ids: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };
  let groupJid = '';
  const groupPath = (who: 'a' | 'b' | 'c', suffix = '') => `/api/v1/sessions/${ids[who]}/groups/${groupJid}${suffix}`;

  const pairedSession = async (label: string, phone: string): Promise<string> => {
    const res = await api().post('/api/v1/sessions').set(bearer(org.users.member.token)).send({ label });
    expect(res.status).toBe(201);
    await waitStatus(res.body.id, 'scan_qr_code');
    expect((await simPost(`/sim/sessions/${res.body.id}/scan`, { phoneNumber: phone })).status).toBe(200);
    await waitStatus(res.body.id, 'working');
    return res.body.id;
  };
  /** The session's stored events of a type about our group, once `count` of them are there. */
  const eventsOf = (who: 'a' | 'b' | 'c', type: string, count: number) =>
    waitFor(async () => {
      const events = (await storedEvents(ids[who], type)).filter((e) => e.payload.groupJid === groupJid);
      return events.length >= count ? events : null;
    }, 10000, `${count} ${type} events for session ${who}`);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's control API is untyped JSON
  const onNetwork = async (): Promise<any> => simGet(`/sim/groups/${groupJid}`);

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, { sim: { SIM_QR_INTERVAL_MS: '60000' }, gateway: { RECONNECT_BASE_DELAY_MS: '100' } }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Groups Inc');
    other = await seedOrganization('Other Org');
    ids.a = await pairedSession('admin', phones.a);
    ids.b = await pairedSession('joiner', phones.b);
    ids.c = await pairedSession('added', phones.c);
    const created = await api().post(`/api/v1/sessions/${ids.a}/groups`).set(bearer(org.adminKey)).send({ name: 'Project team' });
    expect(created.status).toBe(201);
    groupJid = created.body.groupJid;
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('reads the group fresh from the network: the creator is its super admin', async () => {
    const res = await api().get(groupPath('a')).set(bearer(org.users.viewer.token));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      groupJid,
      subject: 'Project team',
      description: '',
      ownerJid: jid(phones.a),
      participants: 1,
      isAnnounce: false,
      isLocked: false,
      participantList: [{ jid: jid(phones.a), isAdmin: true, isSuperAdmin: true }],
      pictureUrl: null,
    });
    expect((await onNetwork()).metadataReads).toBe(1);
  });

  it('a second session joins by the admin’s invite; both sessions see the join with the joiner as actor', async () => {
    const invite = await api().get(groupPath('a', '/invite')).set(bearer(org.adminKey));
    expect(invite.status).toBe(200);
    expect(invite.body.code).toBe((await onNetwork()).inviteCode);
    expect(invite.body.url).toBe(`https://chat.whatsapp.com/${invite.body.code}`);

    const joined = await api().post(`/api/v1/sessions/${ids.b}/groups:join`).set(bearer(org.users.member.token)).send({ code: invite.body.url });
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ groupJid, participants: 2 });
    expect(joined.body.participantList).toEqual([
      { jid: jid(phones.a), isAdmin: true, isSuperAdmin: true },
      { jid: jid(phones.b), isAdmin: false, isSuperAdmin: false },
    ]);
    const expected = { groupJid, action: 'add', participants: [jid(phones.b)], actor: jid(phones.b) };
    expect((await eventsOf('a', 'group.participants', 1))[0].payload).toEqual(expected);
    expect((await eventsOf('b', 'group.participants', 1))[0].payload).toEqual(expected);
    // the joiner's session now holds the group
    const listed = await api().get(`/api/v1/sessions/${ids.b}/groups`).set(bearer(org.adminKey));
    expect(listed.body.data.map((g: { groupJid: string }) => g.groupJid)).toEqual([groupJid]);
  });

  it('the admin changes subject and description: the answer, the network, and one group.update per member with the actor', async () => {
    const res = await api().patch(groupPath('a')).set(bearer(org.users.member.token)).send({ subject: 'Renamed', description: 'the rules' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ subject: 'Renamed', description: 'the rules', participants: 2 });
    expect(await onNetwork()).toMatchObject({ subject: 'Renamed', description: 'the rules' });
    const payload = { groupJid, changes: { subject: 'Renamed', description: 'the rules' }, actor: jid(phones.a) };
    expect((await eventsOf('b', 'group.update', 1)).map((e) => e.payload)).toEqual([payload]);
    expect((await eventsOf('a', 'group.update', 1)).map((e) => e.payload)).toEqual([payload]);
    // the member's stored group followed the notification
    const seenByB = await waitFor(async () => {
      const g = (await api().get(groupPath('b')).set(bearer(org.adminKey))).body;
      return g.subject === 'Renamed' ? g : null;
    }, 10000, 'B to see the new subject');
    expect(seenByB.description).toBe('the rules');
  });

  it('a non-admin is refused as WhatsApp refuses it: settings 409, participants per participant, nothing changes', async () => {
    const before = await onNetwork();
    const patch = await api().patch(groupPath('b')).set(bearer(org.adminKey)).send({ isAnnounce: true });
    expect(patch.status).toBe(409);
    expect(patch.body.error).toMatchObject({ code: 'conflict', details: { reason: 'not_admin' } });

    const add = await api().post(groupPath('b', '/participants')).set(bearer(org.adminKey)).send({ action: 'add', participants: [jid(phones.c)] });
    expect(add.status).toBe(200);
    expect(add.body).toEqual({ data: [{ jid: jid(phones.c), status: 'not_admin' }] });
    const remove = await api().post(groupPath('b', '/participants')).set(bearer(org.adminKey)).send({ action: 'remove', participants: [jid(phones.a)] });
    expect(remove.body).toEqual({ data: [{ jid: jid(phones.a), status: 'not_admin' }] });

    const invite = await api().get(groupPath('b', '/invite')).set(bearer(org.adminKey));
    expect(invite.status).toBe(409);
    expect(invite.body.error.details.reason).toBe('not_admin');

    const after = await onNetwork();
    expect(after).toMatchObject({ participants: before.participants, admins: before.admins, isAnnounce: false, subject: before.subject });
  });

  it('the admin adds, promotes and demotes: answered per participant, seen by the members, stored', async () => {
    const add = await api()
      .post(groupPath('a', '/participants'))
      .set(bearer(org.adminKey))
      .send({ action: 'add', participants: [jid(phones.c), NOT_ON_WHATSAPP, jid(phones.b)] });
    expect(add.status).toBe(200);
    expect(add.body.data).toEqual([
      { jid: jid(phones.c), status: 'ok' },
      { jid: NOT_ON_WHATSAPP, status: 'not_on_whatsapp' },
      { jid: jid(phones.b), status: 'already' },
    ]);
    const addEvent = { groupJid, action: 'add', participants: [jid(phones.c)], actor: jid(phones.a) };
    expect((await eventsOf('b', 'group.participants', 2))[1].payload).toEqual(addEvent);
    expect((await eventsOf('c', 'group.participants', 1))[0].payload).toEqual(addEvent);

    const promote = await api().post(groupPath('a', '/participants')).set(bearer(org.adminKey)).send({ action: 'promote', participants: [jid(phones.b), NOT_ON_WHATSAPP] });
    expect(promote.body.data).toEqual([
      { jid: jid(phones.b), status: 'ok' },
      { jid: NOT_ON_WHATSAPP, status: 'not_in_group' },
    ]);
    expect((await eventsOf('b', 'group.participants', 3))[2].payload).toEqual({ groupJid, action: 'promote', participants: [jid(phones.b)], actor: jid(phones.a) });
    expect((await onNetwork()).admins.sort()).toEqual([jid(phones.a), jid(phones.b)].sort());

    // the creator's read right after: answered from the row the change was stored in (no extra network read needed)
    const seen = await api().get(groupPath('a')).set(bearer(org.adminKey));
    expect(seen.body.participantList).toEqual([
      { jid: jid(phones.a), isAdmin: true, isSuperAdmin: true },
      { jid: jid(phones.b), isAdmin: true, isSuperAdmin: false },
      { jid: jid(phones.c), isAdmin: false, isSuperAdmin: false },
    ]);
    // C's session learnt B's promotion from the notification alone
    await waitFor(async () => {
      const rows = await storedEvents(ids.c, 'group.participants');
      return rows.some((e) => e.payload.action === 'promote') ? true : null;
    }, 10000, 'C to see the promotion');

    const demote = await api().post(groupPath('a', '/participants')).set(bearer(org.adminKey)).send({ action: 'demote', participants: [jid(phones.b), jid(phones.c)] });
    expect(demote.body.data).toEqual([
      { jid: jid(phones.b), status: 'ok' },
      { jid: jid(phones.c), status: 'already' },
    ]);
    expect((await onNetwork()).admins).toEqual([jid(phones.a)]);
  });

  it('a locked group refuses a member’s info change; revoking the invite kills the old code', async () => {
    expect((await api().patch(groupPath('a')).set(bearer(org.adminKey)).send({ isLocked: true })).body.isLocked).toBe(true);
    const refused = await api().patch(groupPath('b')).set(bearer(org.adminKey)).send({ subject: 'Hijacked' });
    expect(refused.status).toBe(409);
    expect((await onNetwork()).subject).toBe('Renamed');

    const old = (await onNetwork()).inviteCode;
    const revoked = await api().post(groupPath('a', '/invite:revoke')).set(bearer(org.adminKey));
    expect(revoked.status).toBe(200);
    expect(revoked.body.code).not.toBe(old);
    expect(revoked.body.code).toBe((await onNetwork()).inviteCode);
    const stale = await api().post(`/api/v1/sessions/${ids.c}/groups:join`).set(bearer(org.adminKey)).send({ code: old });
    expect(stale.status).toBe(404);
  });

  it('sets the group picture (the network holds those bytes) and the next read shows it; a non-image is 422 naming the field', async () => {
    const res = await api().put(groupPath('a', '/picture')).set(bearer(org.adminKey)).send({ media: { base64: PNG, mimetype: 'image/png' } });
    expect(res.status).toBe(204);
    expect((await onNetwork()).pictureSha256).toBe(createHash('sha256').update(Buffer.from(PNG, 'base64')).digest('hex'));
    const read = await api().get(groupPath('a')).set(bearer(org.adminKey));
    expect(read.body.pictureUrl).toMatch(/^\/sim\/media\/[0-9a-f]+$/);
    const media = await fetch(simUrl + read.body.pictureUrl);
    expect(Buffer.from(await media.arrayBuffer()).equals(Buffer.from(PNG, 'base64'))).toBe(true);

    const bad = await api().put(groupPath('a', '/picture')).set(bearer(org.adminKey)).send({ media: { base64: PNG, mimetype: 'text/plain' } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.fields).toHaveProperty(['media.mimetype']);
  });

  it('a burst of 20 reads reaches the network at most once', async () => {
    // the stored copy is due for a refresh (as after GROUP_READ_TTL_MS), so the burst finds the cache cold
    await new GroupsRepository(await testDb()).expire((await new SessionsRepository(await testDb()).findInOrganization(org.id, ids.a))!, groupJid);
    const before = (await onNetwork()).metadataReads;
    const reads = await Promise.all(Array.from({ length: 20 }, () => api().get(groupPath('a')).set(bearer(org.adminKey))));
    expect(reads.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(reads.map((r) => JSON.stringify(r.body))).size).toBe(1);
    const after = (await onNetwork()).metadataReads;
    process.stderr.write(`group-admin burst: 20 GETs, ${after - before} network metadata read(s)\n`);
    // one read: concurrent GETs share it, and later ones are answered from the row it stored
    expect(after - before).toBe(1);
  });

  it('a member leaves (204): the others see it with the leaver as actor, its stored group is gone', async () => {
    const res = await api().post(groupPath('b', ':leave')).set(bearer(org.adminKey));
    expect(res.status).toBe(204);
    const leftEvent = { groupJid, action: 'remove', participants: [jid(phones.b)], actor: jid(phones.b) };
    const seen = await waitFor(async () => (await storedEvents(ids.a, 'group.participants')).find((e) => e.payload.action === 'remove') ?? null, 10000, 'A to see B leave');
    expect(seen.payload).toEqual(leftEvent);
    expect((await onNetwork()).participants).toEqual([jid(phones.a), jid(phones.c)]);
    expect((await api().get(`/api/v1/sessions/${ids.b}/groups`).set(bearer(org.adminKey))).body.data).toEqual([]);
    // no longer a member: the network shows it nothing
    expect((await api().get(groupPath('b')).set(bearer(org.adminKey))).status).toBe(404);
  });

  it('another organization gets 404 on every group operation, and nothing changes', async () => {
    const before = await onNetwork();
    const key = bearer(other.adminKey);
    const answers = await Promise.all([
      api().get(groupPath('a')).set(key),
      api().patch(groupPath('a')).set(key).send({ subject: 'Theirs' }),
      api().post(groupPath('a', '/participants')).set(key).send({ action: 'remove', participants: [jid(phones.c)] }),
      api().post(groupPath('a', ':leave')).set(key),
      api().get(groupPath('a', '/invite')).set(key),
      api().post(groupPath('a', '/invite:revoke')).set(key),
      api().post(`/api/v1/sessions/${ids.a}/groups:join`).set(key).send({ code: before.inviteCode }),
      api().put(groupPath('a', '/picture')).set(key).send({ media: { base64: PNG, mimetype: 'image/png' } }),
    ]);
    expect(answers.map((r) => `${r.status} ${r.body.error?.code}`)).toEqual(Array(8).fill('404 not_found'));
    expect(await onNetwork()).toEqual(before);
  });

  it('422 names the field: body, path and code', async () => {
    const key = bearer(org.adminKey);
    const cases: Array<[Promise<{ status: number; body: { error: { details: { fields: Record<string, unknown> } } } }>, string]> = [
      [api().patch(groupPath('a')).set(key).send({ subject: 5 }), 'subject'],
      [api().patch(groupPath('a')).set(key).send({}), 'subject'],
      [api().patch(groupPath('a')).set(key).send({ isAnnounce: 'yes' }), 'isAnnounce'],
      [api().post(groupPath('a', '/participants')).set(key).send({ action: 'kick', participants: [jid(phones.c)] }), 'action'],
      [api().post(groupPath('a', '/participants')).set(key).send({ action: 'add', participants: ['12'] }), 'participants'],
      [api().post(groupPath('a', '/participants')).set(key).send({ action: 'add', participants: [] }), 'participants'],
      [api().get(`/api/v1/sessions/${ids.a}/groups/not-a-group`).set(key), 'groupJid'],
      [api().post(`/api/v1/sessions/${ids.a}/groups:join`).set(key).send({ code: 'not a code!' }), 'code'],
      [api().put(groupPath('a', '/picture')).set(key).send({ media: { mimetype: 'image/png' } }), 'media.url'],
    ];
    for (const [pending, field] of cases) {
      const res = await pending;
      expect(`${res.status} ${Object.keys(res.body.error.details.fields ?? {}).join(',')}`).toBe(`422 ${field}`);
    }
    expect((await onNetwork()).subject).toBe('Renamed');
  });

  it('a stopped session answers its stored group on a read and 409 on a change', async () => {
    // C holds the group from the add notification; a fresh read stores its rights too
    expect((await api().get(groupPath('c')).set(bearer(org.adminKey))).status).toBe(200);
    expect((await api().post(`/api/v1/sessions/${ids.c}:stop`).set(bearer(org.adminKey))).status).toBe(200);
    await waitStatus(ids.c, 'stopped');
    const read = await api().get(groupPath('c')).set(bearer(org.adminKey));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ groupJid, subject: 'Renamed', isLocked: true, participants: 2 });
    const change = await api().patch(groupPath('c')).set(bearer(org.adminKey)).send({ subject: 'Offline' });
    expect(change.status).toBe(409);
    expect(change.body.error).toMatchObject({ code: 'conflict', details: { status: 'stopped' } });
    const join = await api().post(`/api/v1/sessions/${ids.c}/groups:join`).set(bearer(org.adminKey)).send({ code: 'AbC123' });
    expect(join.status).toBe(409);
  });
});
