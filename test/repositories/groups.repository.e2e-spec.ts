import type { DataSource } from 'typeorm';
import { GroupFacts, GroupsRepository } from '@app/database';
import { closeTestDataSource, testDataSource } from '../support/seed';
import { newOrganization, newSession } from './rows';

const facts = (groupJid: string, over: Partial<GroupFacts> = {}): GroupFacts => ({
  groupJid,
  subject: 'Team',
  description: '',
  ownerJid: '4917000@s.whatsapp.net',
  participants: 3,
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

    await groups.upsert(orgId, session.id, facts('111@g.us', { subject: 'Renamed', description: 'about', participants: 5, isAnnounce: true, isLocked: true }));
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

  it('applies the changes an admin made on the network and moves the member count, never below zero', async () => {
    const session = await newSession(db, orgId);
    await groups.upsert(orgId, session.id, facts('9@g.us', { description: 'kept' }));
    await groups.applyChanges(session.id, '9@g.us', { subject: 'New', isLocked: true });
    await groups.addParticipants(session.id, '9@g.us', 2);
    let [g] = (await groups.pageOfSession(orgId, session.id, { limit: 10 })).rows;
    expect(g).toMatchObject({ subject: 'New', description: 'kept', isAnnounce: false, isLocked: true, participants: 5 });
    await groups.addParticipants(session.id, '9@g.us', -9);
    [g] = (await groups.pageOfSession(orgId, session.id, { limit: 10 })).rows;
    expect(g.participants).toBe(0);
  });
});
