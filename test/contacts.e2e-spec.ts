import type { INestApplication } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:contacts-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '4000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { sessionProbes, storedEvents } from './support/session-probes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the API and the simulator, asserted field by field
type Json = any;

const OWN_PHONE = '15553000001';
const ANA = '15553000100';
const ANA_JID = `${ANA}@s.whatsapp.net`;
const BEN = '15553000200';
const BEN_JID = `${BEN}@s.whatsapp.net`;
const NOBODY = '15553009999';
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** a 1×1 PNG, and a second picture with other bytes */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const OTHER_PICTURE = Buffer.concat([PNG, Buffer.from('second picture')]);

/**
 * Contacts, profile and presence end to end (CONTRACT 12) on the sim engine: the API in-process, a gateway and the
 * network simulator as processes. The simulator's control API plays the contacts (accounts with a name, an about text,
 * a picture) and shows what the account did (its blocklist, profile and presence log).
 */
describe('contacts, profile and presence (API → gateway → simulator)', () => {
  let app: INestApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let org: SeededOrg;
  let other: SeededOrg;
  let sessionId: string;
  const gatewayId = `gw-contacts-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const { get: simGet, post: simPostRaw } = simControl(() => simUrl);
  const simPost = async (path: string, body: object = {}): Promise<Json> => {
    const res = await simPostRaw(path, body);
    const json = await res.json();
    if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const probes = sessionProbes(api, () => org.adminKey);
  const waitStatus = (id: string, status: string) => probes.waitStatus(id, status, 15000);
  const path = (rest: string) => `/api/v1/sessions/${sessionId}${rest}`;
  const asAdmin = { ...bearer('') };
  const account = (): Promise<Json> => simGet(`/sim/sessions/${sessionId}/account`);
  const presenceLog = async (): Promise<Json[]> => (await simGet(`/sim/sessions/${sessionId}/presence-log`)).data;
  const eventsOf = async (type: string): Promise<Json[]> => (await storedEvents(sessionId, type)).map((e) => e.payload);
  const listContacts = async (): Promise<Json[]> => {
    const res = await api().get(path('/contacts?limit=100')).set(bearer(org.adminKey));
    expect(res.status).toBe(200);
    return res.body.data;
  };

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, { sim: { SIM_QR_INTERVAL_MS: '60000' }, gateway: { RECONNECT_BASE_DELAY_MS: '100' } }));
    app = await createApiApp();
    await app.init();
    org = await seedOrganization('Contacts');
    other = await seedOrganization('Contacts stranger');
    Object.assign(asAdmin, bearer(org.adminKey));
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'contacts' });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    await waitStatus(sessionId, 'scan_qr_code');
    await simPost(`/sim/sessions/${sessionId}/scan`, { phoneNumber: OWN_PHONE });
    await waitStatus(sessionId, 'working');
    // two accounts on the network: Ana with a name, an about text and a picture; Ben bare
    await simPost('/sim/contacts', { phoneNumber: ANA, name: 'Ana', about: 'Out surfing', pictureBase64: PNG.toString('base64'), pictureMimetype: 'image/png' });
    await simPost('/sim/contacts', { phoneNumber: BEN });
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('checks numbers in order: those on WhatsApp with their jid and lid (stored as contacts), the others null', async () => {
    const inputs = [`+1 555 300 0100`, NOBODY, BEN_JID];
    const res = await api().post(path('/contacts:check')).set(asAdmin).send({ numbers: inputs });
    expect(res.status).toBe(200);
    expect(res.body.data.map((d: Json) => d.input)).toEqual(inputs);
    expect(res.body.data[0]).toMatchObject({ exists: true, jid: ANA_JID, lid: expect.stringMatching(/^\d+@lid$/) });
    expect(res.body.data[1]).toEqual({ input: NOBODY, exists: false, jid: null, lid: null });
    expect(res.body.data[2]).toMatchObject({ exists: true, jid: BEN_JID });
    const stored = await listContacts();
    expect(stored.map((c) => c.jid).sort()).toEqual([ANA_JID, BEN_JID]);
    expect(stored.find((c) => c.jid === ANA_JID)).toEqual({
      jid: ANA_JID, lid: res.body.data[0].lid, phoneNumber: ANA, name: null, pushName: null, verifiedName: null, isBusiness: false, blocked: false,
    });
  });

  it('keeps push names current: an inbound message carries the sender’s name, a change of it on the network reaches the device', async () => {
    await simPost(`/sim/sessions/${sessionId}/inbound`, { from: ANA_JID, text: 'hi there' });
    await waitFor(async () => (await listContacts()).find((c) => c.jid === ANA_JID && c.pushName === 'Ana'), 10000, 'Ana’s push name from her message');

    const renamed = await simPost('/sim/contacts', { phoneNumber: ANA, name: 'Ana María', isBusiness: true });
    expect(renamed.delivered).toEqual([sessionId]);
    const contact = await waitFor(async () => (await listContacts()).find((c) => c.jid === ANA_JID && c.pushName === 'Ana María'), 10000, 'the new name');
    expect(contact.isBusiness).toBe(true);
  });

  it('shows one contact with its about text and picture from the network, by any form of its jid; 404 for a number not on WhatsApp', async () => {
    const res = await api().get(path(`/contacts/${encodeURIComponent('+1 555-300-0100')}`)).set(asAdmin);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jid: ANA_JID, pushName: 'Ana María', about: 'Out surfing', blocked: false });
    const picture = await fetch(res.body.pictureUrl);
    expect(picture.status).toBe(200);
    expect(sha256(Buffer.from(await picture.arrayBuffer()))).toBe(sha256(PNG));

    const byLid = await api().get(path(`/contacts/${res.body.lid}`)).set(asAdmin);
    expect(byLid.status).toBe(200);
    expect(byLid.body.jid).toBe(ANA_JID);

    const bare = await api().get(path(`/contacts/${BEN}`)).set(asAdmin);
    expect(bare.status).toBe(200);
    expect(bare.body).toMatchObject({ jid: BEN_JID, about: null, pictureUrl: null });

    const nobody = await api().get(path(`/contacts/${NOBODY}`)).set(asAdmin);
    expect(nobody.status).toBe(404);
    expect(nobody.body.error.code).toBe('not_found');
  });

  it('blocks and unblocks: the network’s account shows it, the contact says so, and each change is one stored event', async () => {
    const blocked = await api().post(path(`/contacts/${BEN}:block`)).set(asAdmin);
    expect(blocked.status).toBe(200);
    expect(blocked.body).toMatchObject({ jid: BEN_JID, blocked: true });
    expect((await account()).blocked).toEqual([BEN_JID]);
    expect((await listContacts()).find((c) => c.jid === BEN_JID)?.blocked).toBe(true);
    const events = await eventsOf('contact.blocked');
    expect(events).toEqual([{ contact: blocked.body }]);

    // blocking again changes nothing on the network: no second event
    expect((await api().post(path(`/contacts/${BEN_JID}:block`)).set(asAdmin)).status).toBe(200);
    expect(await eventsOf('contact.blocked')).toHaveLength(1);

    const unblocked = await api().post(path(`/contacts/${BEN}:unblock`)).set(asAdmin);
    expect(unblocked.status).toBe(200);
    expect(unblocked.body.blocked).toBe(false);
    expect((await account()).blocked).toEqual([]);
    expect(await eventsOf('contact.unblocked')).toEqual([{ contact: unblocked.body }]);

    const nobody = await api().post(path(`/contacts/${NOBODY}:block`)).set(asAdmin);
    expect(nobody.status).toBe(404);
  });

  it('shows presences to chats and to the account’s contacts: each lands in the network’s presence log', async () => {
    for (const presence of ['composing', 'recording', 'paused']) {
      expect((await api().post(path(`/chats/${ANA}/presence`)).set(asAdmin).send({ presence })).status).toBe(204);
    }
    expect((await api().post(path('/presence')).set(asAdmin).send({ presence: 'available' })).status).toBe(204);
    expect((await api().post(path('/presence')).set(asAdmin).send({ presence: 'unavailable' })).status).toBe(204);
    const log = await presenceLog();
    expect(log.filter((e) => e.type === 'presence').map((e) => [e.chatJid, e.presence])).toEqual([
      [ANA_JID, 'composing'],
      [ANA_JID, 'recording'],
      [ANA_JID, 'paused'],
    ]);
    expect(log.filter((e) => e.type === 'account-presence').map((e) => e.presence)).toEqual(['available', 'unavailable']);
  });

  it('subscribes to a contact’s presence: the network answers with it, and later changes follow, as presence.update events', async () => {
    expect((await api().post(path(`/contacts/${ANA}/presence:subscribe`)).set(asAdmin)).status).toBe(204);
    expect((await presenceLog()).filter((e) => e.type === 'presence-subscribe').map((e) => e.jid)).toEqual([ANA_JID]);
    await waitFor(async () => (await eventsOf('presence.update')).find((p) => p.jid === ANA_JID && p.presence === 'unavailable'), 10000, 'Ana’s current presence');
    await simPost(`/sim/sessions/${sessionId}/presence`, { jid: ANA_JID, presence: 'available' });
    await waitFor(async () => (await eventsOf('presence.update')).find((p) => p.jid === ANA_JID && p.presence === 'available'), 10000, 'Ana online');
  });

  it('round-trips the profile: name and about, a picture (its bytes on the network), its removal', async () => {
    const before = await api().get(path('/profile')).set(asAdmin);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ jid: `${OWN_PHONE}@s.whatsapp.net`, name: null, about: null, pictureUrl: null });

    const patched = await api().patch(path('/profile')).set(asAdmin).send({ name: 'Support desk', about: 'Replies within a day' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Support desk', about: 'Replies within a day' });
    expect(await account()).toMatchObject({ name: 'Support desk', about: 'Replies within a day', pictureSha256: null, chats: {} });
    expect((await api().patch(path('/profile')).set(asAdmin).send({ about: '' })).body).toMatchObject({ name: 'Support desk', about: '' });

    const put = await api().put(path('/profile/picture')).set(asAdmin).send({ media: { base64: OTHER_PICTURE.toString('base64'), mimetype: 'image/png' } });
    expect(put.status).toBe(200);
    expect(put.body.pictureUrl).toEqual(expect.any(String));
    expect((await account()).pictureSha256).toBe(sha256(OTHER_PICTURE));
    const served = await fetch(put.body.pictureUrl);
    expect(sha256(Buffer.from(await served.arrayBuffer()))).toBe(sha256(OTHER_PICTURE));
    expect((await api().get(path('/profile')).set(asAdmin)).body.pictureUrl).toBe(put.body.pictureUrl);

    const removed = await api().delete(path('/profile/picture')).set(asAdmin);
    expect(removed.status).toBe(200);
    expect(removed.body.pictureUrl).toBeNull();
    expect((await account()).pictureSha256).toBeNull();
  });

  it('refuses bad input with 422 naming the field, and changes nothing', async () => {
    const fieldsOf = async (req: Promise<Json>) => {
      const res = await req;
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      return Object.keys(res.body.error.details.fields);
    };
    const eventsBefore = (await eventsOf('contact.blocked')).length;
    const accountBefore = await account();
    expect(await fieldsOf(api().post(path('/contacts:check')).set(asAdmin).send({ numbers: [] }))).toEqual(['numbers']);
    expect(await fieldsOf(api().post(path('/contacts:check')).set(asAdmin).send({ numbers: Array.from({ length: 51 }, () => BEN) }))).toEqual(['numbers']);
    expect(await fieldsOf(api().post(path('/contacts:check')).set(asAdmin).send({ numbers: ['not a number'] }))).toEqual(['numbers']);
    expect(await fieldsOf(api().post(path('/contacts/not-a-jid:block')).set(asAdmin))).toEqual(['jid']);
    expect(await fieldsOf(api().post(path('/contacts/120363000000000000@g.us:block')).set(asAdmin))).toEqual(['jid']);
    expect(await fieldsOf(api().get(path('/contacts/someone')).set(asAdmin))).toEqual(['jid']);
    expect(await fieldsOf(api().post(path(`/chats/${ANA}/presence`)).set(asAdmin).send({ presence: 'available' }))).toEqual(['presence']);
    expect(await fieldsOf(api().post(path('/presence')).set(asAdmin).send({ presence: 'composing' }))).toEqual(['presence']);
    expect(await fieldsOf(api().patch(path('/profile')).set(asAdmin).send({}))).toEqual(['body']);
    expect(await fieldsOf(api().patch(path('/profile')).set(asAdmin).send({ name: 'x'.repeat(26) }))).toEqual(['name']);
    expect(await fieldsOf(api().put(path('/profile/picture')).set(asAdmin).send({ media: { base64: PNG.toString('base64'), mimetype: 'text/plain' } }))).toEqual([
      'media.mimetype',
    ]);
    expect(await fieldsOf(api().put(path('/profile/picture')).set(asAdmin).send({ media: { mimetype: 'image/png' } }))).toEqual(['media.url']);
    expect((await eventsOf('contact.blocked')).length).toBe(eventsBefore);
    expect(await account()).toEqual(accountBefore);
  });

  it('answers 404 for another organization’s session, whatever the operation', async () => {
    const stranger = bearer(other.adminKey);
    const calls = [
      api().get(path('/contacts')).set(stranger),
      api().post(path('/contacts:check')).set(stranger).send({ numbers: [ANA] }),
      api().get(path(`/contacts/${ANA}`)).set(stranger),
      api().post(path(`/contacts/${ANA}:block`)).set(stranger),
      api().post(path(`/chats/${ANA}/presence`)).set(stranger).send({ presence: 'composing' }),
      api().get(path('/profile')).set(stranger),
      api().patch(path('/profile')).set(stranger).send({ name: 'Hijacked' }),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await account()).name).toBe('Support desk');
  });

  it('answers 409 once the session is stopped; a stored contact is still shown as last seen', async () => {
    expect((await api().post(`/api/v1/sessions/${sessionId}:stop`).set(asAdmin)).status).toBe(200);
    await waitStatus(sessionId, 'stopped');
    const calls = [
      api().post(path('/contacts:check')).set(asAdmin).send({ numbers: [ANA] }),
      api().post(path(`/contacts/${ANA}:block`)).set(asAdmin),
      api().post(path('/presence')).set(asAdmin).send({ presence: 'available' }),
      api().post(path(`/contacts/${ANA}/presence:subscribe`)).set(asAdmin),
      api().get(path('/profile')).set(asAdmin),
      api().delete(path('/profile/picture')).set(asAdmin),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'conflict', details: { status: 'stopped' } });
    }
    const stored = await api().get(path(`/contacts/${ANA}`)).set(asAdmin);
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ jid: ANA_JID, pushName: 'Ana María', about: 'Out surfing', pictureUrl: expect.stringContaining(sha256(PNG)) });
    expect((await api().get(path(`/contacts/${NOBODY}`)).set(asAdmin)).status).toBe(404);
  });
});
