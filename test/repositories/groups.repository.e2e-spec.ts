import type { DataSource } from 'typeorm';
import { GroupFacts, GroupsRepository } from '@app/database';
import { closeTestDataSource, testDataSource } from '../support/seed';
import { newOrganization, newSession } from './rows';

const OWNER = '4917000@s.whatsapp.net';
const facts = (groupJid: string, over: Partial<GroupFacts> = {}): GroupFacts => ({
  groupJid,
  subject: 'Team',
  description: '',
  ownerJid: OWNER,
  participants: [OWNER, 'a@s.whatsapp.net', 'b@s.whatsapp.net'],
  isAnnounce: false,
  isLocked: false,
  ...over,
});

describe('GroupsRepository (PostgreSQL)', () => {
  let db: DataSource;
  let groups: GroupsRepository;
  let orgId: string;

  beforeAll(async () => {
    db = await testDataSource();
    groups = new GroupsRepository(db);
    orgId = await newOrganization(db);
  });
  afterAll(() => closeTestDataSource());

  it('an upsert of a known group refreshes its fields and keeps its id', async () => {
    const session = await newSession(db, orgId);
    await groups.upsert(orgId, session.id, facts('111@g.us'));
    const [before] = (await groups.pageOfSession(orgId, session.id, { limit: 10 })).rows;

    await groups.upsert(orgId, session.id, facts('111@g.us', { subject: 'Renamed', description: 'about', participants: [OWNER, 'a@s.whatsapp.net', 'b@s.whatsapp.net', 'c@s.whatsapp.net', 'd@s.whatsapp.net'], isAnnounce: true, isLocked: true }));
    const page = await groups.pageOfSession(orgId, session.id, { limit: 10 });
    expect(page.rows).toHaveLength(1);
    expect(page.rows[0]).toMatchObject({ id: before.id, subject: 'Renamed', description: 'about', participants: 5, isAnnounce: true, isLocked: true });
  });

  it('pages the groups of one session of one organization', async () => {
    const session = await newSession(db, orgId);
    const other = await newSession(db, orgId);
    for (const jid of ['1@g.us', '2@g.us', '3@g.us']) await groups.upsert(orgId, session.id, facts(jid));
    await groups.upsert(orgId, other.id, facts('1@g.us'));

    const first = await groups.pageOfSession(orgId, session.id, { limit: 2 });
    const second = await groups.pageOfSession(orgId, session.id, { limit: 2, cursor: first.nextCursor! });
    expect([...first.rows, ...second.rows].map((g) => g.groupJid).sort()).toEqual(['1@g.us', '2@g.us', '3@g.us']);
    expect(second.nextCursor).toBeNull();
    expect((await groups.pageOfSession(await newOrganization(db), session.id, { limit: 10 })).rows).toEqual([]);
  });

  it('applies the changes an admin made on the network and keeps the member list and its count in step', async () => {
    const session = await newSession(db, orgId);
    await groups.upsert(orgId, session.id, facts('9@g.us', { description: 'kept' }));
    await groups.applyChanges(session.id, '9@g.us', { subject: 'New', isLocked: true });
    await groups.addParticipants(session.id, '9@g.us', ['c@s.whatsapp.net', 'a@s.whatsapp.net', 'c@s.whatsapp.net']);
    let [g] = (await groups.pageOfSession(orgId, session.id, { limit: 10 })).rows;
    expect(g).toMatchObject({ subject: 'New', description: 'kept', isAnnounce: false, isLocked: true, participants: 4 });
    expect((await groups.metadataOf(session.id, '9@g.us'))?.participants.sort()).toEqual([OWNER, 'a@s.whatsapp.net', 'b@s.whatsapp.net', 'c@s.whatsapp.net'].sort());

    await groups.removeParticipants(session.id, '9@g.us', ['a@s.whatsapp.net', 'x@s.whatsapp.net']);
    [g] = (await groups.pageOfSession(orgId, session.id, { limit: 10 })).rows;
    expect(g.participants).toBe(3);
    expect(await groups.metadataOf(session.id, '9@g.us')).toEqual({
      groupJid: '9@g.us', subject: 'New', description: 'kept', ownerJid: OWNER, isAnnounce: false, isLocked: true,
      participants: expect.arrayContaining([OWNER, 'b@s.whatsapp.net', 'c@s.whatsapp.net']),
    });
    expect((await groups.metadataOf(session.id, '9@g.us'))!.participants).toHaveLength(3);
  });

  it('serves group metadata only for a group of that session whose members are known', async () => {
    const session = await newSession(db, orgId);
    const other = await newSession(db, orgId);
    await groups.upsert(orgId, session.id, facts('5@g.us'));
    expect(await groups.metadataOf(other.id, '5@g.us')).toBeNull();
    expect(await groups.metadataOf(session.id, '6@g.us')).toBeNull();

    // a row stored before member lists were kept knows only its count: the engine must ask the network
    await db.query(`UPDATE groups SET members = NULL, participants = 2 WHERE session_id = $1`, [session.id]);
    expect(await groups.metadataOf(session.id, '5@g.us')).toBeNull();
    await groups.addParticipants(session.id, '5@g.us', ['n@s.whatsapp.net']);
    await groups.removeParticipants(session.id, '5@g.us', ['p@s.whatsapp.net', 'q@s.whatsapp.net', 'r@s.whatsapp.net']);
    const [g] = (await groups.pageOfSession(orgId, session.id, { limit: 10 })).rows;
    expect(g.participants).toBe(0);

    await groups.upsert(orgId, session.id, facts('5@g.us'));
    expect((await groups.metadataOf(session.id, '5@g.us'))?.participants).toHaveLength(3);
  });
});
