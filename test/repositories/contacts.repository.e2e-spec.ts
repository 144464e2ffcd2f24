import type { DataSource } from 'typeorm';
import { ContactsRepository, serviceSession } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession } from './rows';

const ANA = '4915550001@s.whatsapp.net';
const BEN = '4915550002@s.whatsapp.net';

describe('ContactsRepository (PostgreSQL)', () => {
  let db: DataSource;
  let contacts: ContactsRepository;
  let orgId: string;

  beforeAll(async () => {
    db = await testDataSource();
    contacts = new ContactsRepository(await testDb());
    orgId = await newOrganization(db);
  });
  afterAll(() => closeTestDataSource());

  it('merges what each source said: a field a source does not name keeps its stored value', async () => {
    const session = await newSession(db, orgId);
    const [first] = await contacts.upsertMany(session, [{ jid: ANA, name: 'Ana (book)', isBusiness: true }]);
    expect(first).toMatchObject({ jid: ANA, phoneNumber: '4915550001', name: 'Ana (book)', pushName: null, isBusiness: true, blocked: false });

    await contacts.upsertMany(session, [{ jid: ANA, pushName: 'Ana\0', lid: '111@lid' }]);
    await contacts.upsertMany(session, [{ jid: ANA, blocked: true, about: 'hi', pictureUrl: null }]);
    const stored = await contacts.find(session, ANA);
    expect(stored).toMatchObject({ id: first.id, name: 'Ana (book)', pushName: 'Ana', lid: '111@lid', isBusiness: true, blocked: true, about: 'hi', pictureUrl: null });
    // by its LID too
    expect((await contacts.find(session, '111@lid'))?.id).toBe(first.id);
  });

  it('moves a contact known by its LID alone to its number once the network names both', async () => {
    const session = await newSession(db, orgId);
    const [byLid] = await contacts.upsertMany(session, [{ jid: '222@lid', lid: '222@lid', pushName: 'Ben' }]);
    expect(byLid.phoneNumber).toBeNull();
    await contacts.upsertMany(session, [{ jid: BEN, lid: '222@lid' }]);
    const page = await contacts.page(session, { limit: 10 });
    expect(page.rows).toHaveLength(1);
    expect(page.rows[0]).toMatchObject({ id: byLid.id, jid: BEN, lid: '222@lid', phoneNumber: '4915550002', pushName: 'Ben' });
  });

  it('pages one session of one organization', async () => {
    const session = await newSession(db, orgId);
    const other = await newSession(db, orgId);
    await contacts.upsertMany(session, [ANA, BEN, '4915550003@s.whatsapp.net'].map((jid) => ({ jid })));
    await contacts.upsertMany(other, [{ jid: ANA }]);
    const first = await contacts.page(session, { limit: 2 });
    const second = await contacts.page(session, { limit: 2, cursor: first.nextCursor! });
    expect([...first.rows, ...second.rows].map((c) => c.jid).sort()).toEqual([ANA, BEN, '4915550003@s.whatsapp.net']);
    expect(second.nextCursor).toBeNull();
    expect(await contacts.find(serviceSession(session.id, await newOrganization(db)), ANA)).toBeNull();
  });

  const countOfSession = async (sessionId: string) => (await db.query('SELECT count(*)::int AS n FROM contacts WHERE session_id = $1', [sessionId]))[0].n as number;

  it('keeps at most the bound of contacts per session, still updating known ones', async () => {
    const session = await newSession(db, orgId);
    const jids = Array.from({ length: 5 }, (_, i) => `49155500${10 + i}@s.whatsapp.net`);
    await contacts.upsertMany(session, jids.slice(0, 2).map((jid) => ({ jid })), undefined, 3);
    const stored = await contacts.upsertMany(session, [...jids.slice(2), jids[0]].map((jid) => ({ jid, pushName: 'x' })), undefined, 3);
    expect(await countOfSession(session.id)).toBe(3);
    expect(stored.map((c) => c.jid).sort()).toEqual([jids[0], jids[2]].sort());
    expect((await contacts.find(session, jids[0]))?.pushName).toBe('x');
  });

  it('marks blocks in a transaction and says which changed (a repeat, or a LID of a stored number, is the same contact)', async () => {
    const session = await newSession(db, orgId);
    await contacts.upsertMany(session, [{ jid: ANA, lid: '333@lid' }]);
    const first = await (await testDb()).transaction((tx) => contacts.markBlocked(session, [{ jid: ANA, blocked: true }, { jid: BEN, blocked: true }], tx));
    expect(first.map(({ row, changed }) => [row.jid, row.blocked, changed]).sort()).toEqual([[ANA, true, true], [BEN, true, true]]);
    const again = await (await testDb()).transaction((tx) => contacts.markBlocked(session, [{ jid: '333@lid', blocked: true }], tx));
    expect(again.map(({ row, changed }) => [row.jid, changed])).toEqual([[ANA, false]]);
    const unblocked = await (await testDb()).transaction((tx) => contacts.markBlocked(session, [{ jid: ANA, blocked: false }], tx));
    expect(unblocked.map(({ row, changed }) => [row.blocked, changed])).toEqual([[false, true]]);
    expect(await countOfSession(session.id)).toBe(2);
  });

  it('a whole blocklist blocks its jids and unblocks every other stored contact', async () => {
    const session = await newSession(db, orgId);
    await contacts.upsertMany(session, [{ jid: ANA, blocked: true }, { jid: BEN }]);
    await contacts.replaceBlocklist(orgId, session.id, [BEN]);
    expect((await contacts.find(session, ANA))?.blocked).toBe(false);
    expect((await contacts.find(session, BEN))?.blocked).toBe(true);
  });
});
