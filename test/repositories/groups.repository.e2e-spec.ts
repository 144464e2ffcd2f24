import type { DataSource } from 'typeorm';
import type { BaileysEventMap, GroupMetadata, GroupParticipant } from '@whiskeysockets/baileys';
import { GroupFacts, GroupsRepository, serviceSession } from '@app/database';
import type { EngineEvent } from '../../apps/gateway/src/engine/engine.interface';
import { groupInfoFrom, groupMetadataFrom, groupParticipantsFrom } from '../../apps/gateway/src/engine/baileys/baileys-mapping';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
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
    groups = new GroupsRepository(await testDb());
    orgId = await newOrganization(db);
  });
  afterAll(() => closeTestDataSource());

  it('an upsert of a known group refreshes its fields and keeps its id', async () => {
    const session = await newSession(db, orgId);
    await groups.upsert(orgId, session.id, facts('111@g.us'));
    const [before] = (await groups.pageOfSession(session, { limit: 10 })).rows;

    await groups.upsert(orgId, session.id, facts('111@g.us', { subject: 'Renamed', description: 'about', participants: [OWNER, 'a@s.whatsapp.net', 'b@s.whatsapp.net', 'c@s.whatsapp.net', 'd@s.whatsapp.net'], isAnnounce: true, isLocked: true }));
    const page = await groups.pageOfSession(session, { limit: 10 });
    expect(page.rows).toHaveLength(1);
    expect(page.rows[0]).toMatchObject({ id: before.id, subject: 'Renamed', description: 'about', participants: 5, isAnnounce: true, isLocked: true });
  });

  it('pages the groups of one session of one organization', async () => {
    const session = await newSession(db, orgId);
    const other = await newSession(db, orgId);
    for (const jid of ['1@g.us', '2@g.us', '3@g.us']) await groups.upsert(orgId, session.id, facts(jid));
    await groups.upsert(orgId, other.id, facts('1@g.us'));

    const first = await groups.pageOfSession(session, { limit: 2 });
    const second = await groups.pageOfSession(session, { limit: 2, cursor: first.nextCursor! });
    expect([...first.rows, ...second.rows].map((g) => g.groupJid).sort()).toEqual(['1@g.us', '2@g.us', '3@g.us']);
    expect(second.nextCursor).toBeNull();
  });

  it('applies the changes an admin made on the network and keeps the member list and its count in step', async () => {
    const session = await newSession(db, orgId);
    await groups.upsert(orgId, session.id, facts('9@g.us', { description: 'kept' }));
    await groups.applyChanges(session.id, '9@g.us', { subject: 'New', isLocked: true });
    await groups.addParticipants(session, '9@g.us', ['c@s.whatsapp.net', 'a@s.whatsapp.net', 'c@s.whatsapp.net']);
    let [g] = (await groups.pageOfSession(session, { limit: 10 })).rows;
    expect(g).toMatchObject({ subject: 'New', description: 'kept', isAnnounce: false, isLocked: true, participants: 4 });
    expect((await groups.metadataOf(session.id, '9@g.us'))?.participants.sort()).toEqual([OWNER, 'a@s.whatsapp.net', 'b@s.whatsapp.net', 'c@s.whatsapp.net'].sort());

    await groups.removeParticipants(session, '9@g.us', ['a@s.whatsapp.net', 'x@s.whatsapp.net']);
    [g] = (await groups.pageOfSession(session, { limit: 10 })).rows;
    expect(g.participants).toBe(3);
    expect(await groups.metadataOf(session.id, '9@g.us')).toEqual({
      groupJid: '9@g.us', subject: 'New', description: 'kept', ownerJid: OWNER, isAnnounce: false, isLocked: true,
      participants: expect.arrayContaining([OWNER, 'b@s.whatsapp.net', 'c@s.whatsapp.net']),
      // stored without the network's own form (as the simulator reports groups)
      network: null,
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
    await groups.addParticipants(session, '5@g.us', ['n@s.whatsapp.net']);
    await groups.removeParticipants(session, '5@g.us', ['p@s.whatsapp.net', 'q@s.whatsapp.net', 'r@s.whatsapp.net']);
    const [g] = (await groups.pageOfSession(session, { limit: 10 })).rows;
    expect(g.participants).toBe(0);

    await groups.upsert(orgId, session.id, facts('5@g.us'));
    expect((await groups.metadataOf(session.id, '5@g.us'))?.participants).toHaveLength(3);
  });

  describe('group administration: rights, picture, freshness (docs/groups.md)', () => {
    const A = 'a@s.whatsapp.net';
    const B = 'b@s.whatsapp.net';
    const refreshFacts = { groupJid: '77@g.us', subject: 'Team', description: 'd', ownerJid: OWNER, participants: [OWNER, A, B], isAnnounce: false, isLocked: true };

    it('a fresh read stores rights, picture and when; notifications keep the rights in step; forget and expire', async () => {
      const session = await newSession(db, orgId);
      expect(await groups.storedOf(session, '77@g.us')).toBeNull();
      const before = Date.now();
      await groups.refresh(session, { ...refreshFacts, admins: [OWNER, A], superAdmins: [OWNER], pictureUrl: 'https://pps.example/p.jpg' });
      const stored = await groups.storedOf(session, '77@g.us');
      expect(stored).toMatchObject({ ...refreshFacts, participantCount: 3, admins: [OWNER, A], superAdmins: [OWNER], pictureUrl: 'https://pps.example/p.jpg' });
      expect(stored!.refreshedAt).toBeGreaterThanOrEqual(before - 1000);

      await groups.setParticipantsAdmin(session, '77@g.us', [B], 'admin');
      expect((await groups.storedOf(session, '77@g.us'))!.admins.sort()).toEqual([OWNER, A, B].sort());
      // a demotion never takes a super admin's rights; a removal takes every right of the member
      await groups.setParticipantsAdmin(session, '77@g.us', [A, OWNER], null);
      expect((await groups.storedOf(session, '77@g.us'))!.admins.sort()).toEqual([OWNER, B].sort());
      await groups.removeParticipants(session, '77@g.us', [B]);
      expect(await groups.storedOf(session, '77@g.us')).toMatchObject({ participants: [OWNER, A], participantCount: 2, admins: [OWNER] });
      // an upsert that does not say who the admins are keeps them
      await groups.upsert(orgId, session.id, facts('77@g.us', { participants: [OWNER, A] }));
      expect((await groups.storedOf(session, '77@g.us'))!.admins).toEqual([OWNER]);

      await groups.expire(session, '77@g.us');
      expect((await groups.storedOf(session, '77@g.us'))!.refreshedAt).toBeNull();
      await groups.forget(session, '77@g.us');
      expect(await groups.storedOf(session, '77@g.us')).toBeNull();
    });

    it('a whole-group refresh from the network (Baileys) says who the admins are, by number where it can', async () => {
      const session = await newSession(db, orgId);
      await groups.upsert(orgId, session.id, facts('79@g.us', { participants: [OWNER, A, B], admins: [OWNER], superAdmins: [OWNER] }));
      await groups.applyChanges(session.id, '79@g.us', { subject: 'x' });
      expect((await groups.storedOf(session, '79@g.us'))!.admins).toEqual([OWNER]);
      await groups.applyChanges(session.id, '79@g.us', {}, {
        addressingMode: 'lid',
        participants: [
          { id: '1@lid', phoneNumber: OWNER, admin: 'superadmin' },
          { id: '2@lid', phoneNumber: A, admin: 'admin' },
          { id: B, admin: null },
        ],
      });
      expect(await groups.storedOf(session, '79@g.us')).toMatchObject({ admins: [OWNER, A], superAdmins: [OWNER] });
    });

    it('a fresh read keeps the network form while the members are the same, and forgets it when they are not', async () => {
      const session = await newSession(db, orgId);
      const network = { addressingMode: 'pn' as const, participants: [{ id: OWNER }, { id: A }, { id: B }] };
      await groups.upsert(orgId, session.id, facts('78@g.us', { participants: [OWNER, A, B], network }));
      const read = { ...refreshFacts, groupJid: '78@g.us', admins: [OWNER], superAdmins: [OWNER], pictureUrl: null };
      await groups.refresh(session, { ...read, participants: [B, A, OWNER] });
      expect((await groups.metadataOf(session.id, '78@g.us'))!.network).toEqual(network);
      await groups.refresh(session, { ...read, participants: [OWNER, A] });
      expect((await groups.metadataOf(session.id, '78@g.us'))!.network).toBeNull();
    });
  });

  describe('the network form of a group (what Baileys is answered for a group send)', () => {
    const GROUP = '120363000000000077@g.us';
    const OWN = '491701234567@s.whatsapp.net';
    const OWN_LID = '98765432109876@lid';
    const ALICE = '15550001111@s.whatsapp.net';
    const ALICE_LID = '11111111111111@lid';
    const BOB = '15550002222@s.whatsapp.net';
    const BOB_LID = '22222222222222@lid';
    const LID_MODE = 'lid' as GroupMetadata['addressingMode'];
    const PN_MODE = 'pn' as GroupMetadata['addressingMode'];

    /** Baileys' groupMetadata() of a LID-addressed group whose members' numbers are all known. */
    const lidGroup: GroupMetadata = {
      id: GROUP,
      addressingMode: LID_MODE,
      subject: 'Team',
      owner: OWN_LID,
      ownerPn: OWN,
      announce: false,
      restrict: false,
      participants: [
        { id: OWN_LID, phoneNumber: OWN, admin: 'superadmin' },
        { id: ALICE_LID, phoneNumber: ALICE, admin: null },
      ],
    };

    /** Baileys' event through the engine's mapping into the repository, as the gateway does it. */
    async function apply(sessionId: string, update: BaileysEventMap['group-participants.update']): Promise<void> {
      const event = groupParticipantsFrom(update) as Extract<EngineEvent, { type: 'group-participants' }>;
      if (event.action === 'add') await groups.addParticipants(serviceSession(sessionId), event.groupJid, event.participants, event.network);
      if (event.action === 'remove') await groups.removeParticipants(serviceSession(sessionId), event.groupJid, event.participants, event.network);
      if (event.action === 'promote' || event.action === 'demote') {
        await groups.setParticipantsAdmin(serviceSession(sessionId), event.groupJid, event.participants, event.action === 'promote' ? 'admin' : null, event.network);
      }
    }

    /** What cachedGroupMetadata answers Baileys from the stored row. */
    async function answer(sessionId: string): Promise<GroupMetadata | undefined> {
      const stored = await groups.metadataOf(sessionId, GROUP);
      return stored ? groupMetadataFrom(stored) : undefined;
    }

    it('a LID group is stored with numbers for the API and answered lid with its LIDs for a send', async () => {
      const session = await newSession(db, orgId);
      await groups.upsert(orgId, session.id, groupInfoFrom(lidGroup, OWN));
      expect((await groups.metadataOf(session.id, GROUP))?.participants).toEqual([OWN, ALICE]);
      const [row] = (await groups.pageOfSession(session, { limit: 10 })).rows;
      expect(row).not.toHaveProperty('network');
      expect(row.participants).toBe(2);

      const meta = await answer(session.id);
      expect(meta?.addressingMode).toBe(LID_MODE);
      expect(meta?.participants).toEqual(lidGroup.participants);
    });

    it('members added, promoted, demoted and removed keep the answer what the network would give', async () => {
      const session = await newSession(db, orgId);
      await groups.upsert(orgId, session.id, groupInfoFrom(lidGroup, OWN));

      await apply(session.id, { id: GROUP, author: OWN_LID, action: 'add', participants: [{ id: BOB_LID, phoneNumber: BOB, admin: null }] });
      // a repeated add (a re-delivered notification) replaces, never duplicates
      await apply(session.id, { id: GROUP, author: OWN_LID, action: 'add', participants: [{ id: BOB_LID, phoneNumber: BOB, admin: null }] });
      let meta = await answer(session.id);
      expect(meta?.addressingMode).toBe(LID_MODE);
      expect(meta?.participants.map((p: GroupParticipant) => p.id)).toEqual([OWN_LID, ALICE_LID, BOB_LID]);
      expect((await groups.metadataOf(session.id, GROUP))?.participants.sort()).toEqual([OWN, ALICE, BOB].sort());

      await apply(session.id, { id: GROUP, author: OWN_LID, action: 'promote', participants: [{ id: BOB_LID, phoneNumber: BOB }] });
      meta = await answer(session.id);
      expect(meta?.participants).toEqual([
        { id: OWN_LID, phoneNumber: OWN, admin: 'superadmin' },
        { id: ALICE_LID, phoneNumber: ALICE, admin: null },
        { id: BOB_LID, phoneNumber: BOB, admin: 'admin' },
      ]);
      await apply(session.id, { id: GROUP, author: OWN_LID, action: 'demote', participants: [{ id: BOB_LID, phoneNumber: BOB }] });
      expect((await answer(session.id))?.participants[2]).toEqual({ id: BOB_LID, phoneNumber: BOB, admin: null });

      // Alice leaves, named by her LID
      await apply(session.id, { id: GROUP, author: ALICE_LID, action: 'remove', participants: [{ id: ALICE_LID, phoneNumber: ALICE }] });
      meta = await answer(session.id);
      expect(meta?.participants.map((p: GroupParticipant) => p.id)).toEqual([OWN_LID, BOB_LID]);
      expect(meta?.addressingMode).toBe(LID_MODE);
      // Bob removed by number only (a source that does not know the LID): his LID entry goes too
      await groups.removeParticipants(session, GROUP, [BOB]);
      expect((await answer(session.id))?.participants.map((p: GroupParticipant) => p.id)).toEqual([OWN_LID]);
      const [row] = (await groups.pageOfSession(session, { limit: 10 })).rows;
      expect(row.participants).toBe(1);
    });

    it('a phone-number-addressed group stays pn with numbers through member changes', async () => {
      const session = await newSession(db, orgId);
      const pnGroup: GroupMetadata = { ...lidGroup, addressingMode: PN_MODE, owner: OWN, ownerPn: undefined, participants: [{ id: OWN, lid: OWN_LID, admin: 'superadmin' }, { id: ALICE, admin: null }] };
      await groups.upsert(orgId, session.id, groupInfoFrom(pnGroup, OWN));
      await apply(session.id, { id: GROUP, author: OWN, action: 'add', participants: [{ id: BOB, lid: BOB_LID, admin: null }] });
      // named by the LID the group told for him
      await apply(session.id, { id: GROUP, author: OWN, action: 'promote', participants: [{ id: BOB_LID, phoneNumber: BOB }] });
      await apply(session.id, { id: GROUP, author: OWN, action: 'remove', participants: [{ id: ALICE }] });
      const meta = await answer(session.id);
      expect(meta?.addressingMode).toBe(PN_MODE);
      expect(meta?.participants).toEqual([
        { id: OWN, lid: OWN_LID, admin: 'superadmin' },
        { id: BOB, lid: BOB_LID, admin: 'admin' },
      ]);
    });

    it('what cannot be kept right is forgotten, never guessed: the engine then asks the network', async () => {
      const session = await newSession(db, orgId);
      await groups.upsert(orgId, session.id, groupInfoFrom(lidGroup, OWN));
      // members added by a source that does not say how the network names them
      await groups.addParticipants(session, GROUP, [BOB]);
      expect((await groups.metadataOf(session.id, GROUP))?.network).toBeNull();
      expect(await answer(session.id)).toBeUndefined();
      // and it stays unknown until the network tells the whole group again
      await apply(session.id, { id: GROUP, author: OWN_LID, action: 'add', participants: [{ id: '33@lid', phoneNumber: '15550003333@s.whatsapp.net' }] });
      await apply(session.id, { id: GROUP, author: OWN_LID, action: 'promote', participants: [{ id: ALICE_LID, phoneNumber: ALICE }] });
      await apply(session.id, { id: GROUP, author: OWN_LID, action: 'remove', participants: [{ id: ALICE_LID, phoneNumber: ALICE }] });
      expect(await answer(session.id)).toBeUndefined();
      expect((await groups.metadataOf(session.id, GROUP))?.participants.sort()).toEqual([OWN, BOB, '15550003333@s.whatsapp.net'].sort());
      await groups.upsert(orgId, session.id, groupInfoFrom(lidGroup, OWN));
      expect((await answer(session.id))?.addressingMode).toBe(LID_MODE);

      // a refresh without a network form (the simulator) forgets the stored one
      await groups.upsert(orgId, session.id, facts(GROUP));
      expect((await groups.metadataOf(session.id, GROUP))?.network).toBeNull();
    });

    it('a whole-group refresh (groups.update) replaces the network form and leaves the member list to the member events', async () => {
      const session = await newSession(db, orgId);
      // a row from before the network form was kept
      await groups.upsert(orgId, session.id, facts(GROUP, { participants: [OWN, ALICE] }));
      const refreshed = groupInfoFrom({ ...lidGroup, participants: [...lidGroup.participants, { id: BOB_LID, phoneNumber: BOB, admin: null }] }, OWN).network!;
      await groups.applyChanges(session.id, GROUP, { subject: 'Refreshed' }, refreshed);
      const stored = await groups.metadataOf(session.id, GROUP);
      expect(stored).toMatchObject({ subject: 'Refreshed', participants: [OWN, ALICE] });
      expect((await answer(session.id))?.participants.map((p: GroupParticipant) => p.id)).toEqual([OWN_LID, ALICE_LID, BOB_LID]);
      // a change of a few fields keeps it
      await groups.applyChanges(session.id, GROUP, { isLocked: true });
      expect((await answer(session.id))?.addressingMode).toBe(LID_MODE);
      // a group the session does not know is not created by a refresh
      await groups.applyChanges(session.id, '404@g.us', { subject: 'x' }, refreshed);
      expect(await groups.metadataOf(session.id, '404@g.us')).toBeNull();
    });
  });
});
