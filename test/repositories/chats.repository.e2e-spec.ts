import type { DataSource } from 'typeorm';
import { ChatsRepository, decodeChatCursor, MessagesRepository, MessageQueueRepository, newId, NewMessage, type OwnedSession } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession } from './rows';

const ALICE = '15550001111@s.whatsapp.net';
const BOB = '15550002222@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';

describe('ChatsRepository (PostgreSQL)', () => {
  let db: DataSource;
  let chats: ChatsRepository;
  let messages: MessagesRepository;
  let queue: MessageQueueRepository;
  let orgId: string;

  const message = (sessionId: string, over: Partial<NewMessage> = {}): NewMessage => ({
    id: newId('msg'),
    organizationId: orgId,
    sessionId,
    waMessageId: `WA${newId('msg').slice(4)}`,
    direction: 'in',
    chatJid: ALICE,
    from: ALICE,
    type: 'text',
    text: 'hi',
    status: 'received',
    ...over,
  });

  /** Every chat of the session, read page by page (two a page) through the cursor. */
  const jidsByPagesOfTwo = async (session: OwnedSession): Promise<string[]> => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await chats.page(session, 2, cursor ? decodeChatCursor(cursor)! : undefined);
      seen.push(...page.rows.map((r) => r.jid));
      cursor = page.nextCursor;
    } while (cursor);
    return seen;
  };

  beforeAll(async () => {
    db = await testDataSource();
    chats = new ChatsRepository(await testDb());
    messages = new MessagesRepository(await testDb());
    queue = new MessageQueueRepository(await testDb());
    orgId = await newOrganization(db);
  });
  afterAll(() => closeTestDataSource());

  it('keeps a chat current from the statement that stores each message: last message, unread count (not with autoRead)', async () => {
    const session = await newSession(db, orgId, { autoRead: false });
    const first = await messages.insert(message(session.id, { createdAt: 1_700_000_000_000 }));
    const second = await messages.insert(message(session.id, { createdAt: 1_700_000_001_000 }));
    // a re-delivery stores nothing and counts nothing
    expect(await messages.insert(message(session.id, { waMessageId: second!.waMessageId }))).toBeNull();
    // our own message is the last one, but not unread
    const mine = await messages.insert(message(session.id, { direction: 'out', status: 'sent', from: null, createdAt: 1_700_000_002_000 }));
    // an older message from a history sync neither counts nor replaces the last one
    await messages.insert(message(session.id, { fromHistory: true, createdAt: 1_600_000_000_000 }));
    const chat = await chats.find(session.id, ALICE);
    expect(chat).toMatchObject({ organizationId: orgId, isGroup: false, unreadCount: 2, lastMessageId: mine!.id, lastMessageAt: 1_700_000_002_000 });
    expect(first).not.toBeNull();

    const reading = await newSession(db, orgId, { autoRead: true });
    await messages.insert(message(reading.id, { chatJid: GROUP, from: BOB }));
    expect(await chats.find(reading.id, GROUP)).toMatchObject({ isGroup: true, unreadCount: 0 });
  });

  it('an accepted send updates its chat in the same statement', async () => {
    const session = await newSession(db, orgId);
    const row = await queue.insertOutbound(message(session.id, { direction: 'out', status: 'queued', chatJid: BOB, from: null }), null);
    expect(await chats.find(session.id, BOB)).toMatchObject({ lastMessageId: row!.id, unreadCount: 0 });
  });

  it('applies state and answers only what changed', async () => {
    const session = await newSession(db, orgId);
    const created = await chats.apply(session, { jid: BOB, archived: true, mutedUntil: 1_900_000_000_000 });
    expect(created.changes).toEqual({ archived: true, mutedUntil: 1_900_000_000_000 });
    expect(created.row).toMatchObject({ jid: BOB, archived: true, pinned: false, mutedUntil: 1_900_000_000_000, lastMessageId: null });
    const again = await chats.apply(session, { jid: BOB, archived: true, pinned: false, name: null });
    expect(again.changes).toEqual({});
    const named = await chats.apply(session, { jid: BOB, name: 'Bob\0', unreadCount: 0, mutedUntil: null });
    expect(named.changes).toEqual({ name: 'Bob', mutedUntil: null });
  });

  it('stores a history batch of chats in one statement, the phone’s state winning, a name it did not send kept', async () => {
    const session = await newSession(db, orgId);
    await chats.apply(session, { jid: ALICE, name: 'Alice' });
    const n = await chats.applyHistory(orgId, session.id, [
      { jid: ALICE, name: null, unreadCount: 3, archived: true, pinned: true, mutedUntil: null },
      { jid: GROUP, name: 'Team', unreadCount: 0, archived: false, pinned: false, mutedUntil: 1_900_000_000_000 },
      { jid: GROUP, name: 'Team (again)', unreadCount: 1, archived: false, pinned: false, mutedUntil: null },
    ]);
    expect(n).toBe(2);
    expect(await chats.find(session.id, ALICE)).toMatchObject({ name: 'Alice', unreadCount: 3, archived: true, pinned: true });
    expect(await chats.find(session.id, GROUP)).toMatchObject({ name: 'Team (again)', isGroup: true, unreadCount: 1 });
  });

  it('pages most recent first, chats without messages last, with an opaque cursor', async () => {
    const session = await newSession(db, orgId);
    const jids = ['15550000001@s.whatsapp.net', '15550000002@s.whatsapp.net', '15550000003@s.whatsapp.net'];
    for (const [i, jid] of jids.entries()) await messages.insert(message(session.id, { chatJid: jid, from: jid, createdAt: 1_700_000_000_000 + i }));
    await chats.apply(session, { jid: '15550000009@s.whatsapp.net', pinned: true });
    await chats.apply(session, { jid: '15550000008@s.whatsapp.net', pinned: true });
    const seen = await jidsByPagesOfTwo(session);
    expect(seen).toEqual([jids[2], jids[1], jids[0], '15550000009@s.whatsapp.net', '15550000008@s.whatsapp.net']);
    expect(decodeChatCursor('not-json')).toBeNull();
    expect((await chats.page(await newSession(db, orgId), 10)).rows).toEqual([]);
  });

  it('pages through chats whose last messages share a microsecond timestamp (one group commit) without skipping any', async () => {
    const session = await newSession(db, orgId);
    const jids = ['15550000011', '15550000012', '15550000013', '15550000014', '15550000015'].map((n) => `${n}@s.whatsapp.net`);
    for (const jid of jids) await messages.insert(message(session.id, { chatJid: jid, from: jid }));
    // the rows of one transaction share now(): a time with microseconds, which a millisecond cursor cannot name
    await db.query(`UPDATE chats SET last_message_at = '2026-11-29 09:49:58.356499+00' WHERE session_id = $1 AND jid <> $2`, [session.id, jids[4]]);
    await db.query(`UPDATE chats SET last_message_at = '2026-11-29 09:49:58.356100+00' WHERE session_id = $1 AND jid = $2`, [session.id, jids[4]]);
    const seen = await jidsByPagesOfTwo(session);
    expect(seen).toEqual([jids[3], jids[2], jids[1], jids[0], jids[4]]);
    // a cursor this list did not make is refused, not read as a time
    expect(decodeChatCursor(Buffer.from(JSON.stringify(['1.5e3', jids[0]])).toString('base64url'))).toBeNull();
  });

  it('keeps the labels a chat carries: added once, removed, and a deleted label leaves every chat', async () => {
    const session = await newSession(db, orgId);
    const labelsOf = async (jid: string) => (await chats.find(session.id, jid))?.labels;
    const updatedAt = async (jid: string) => (await chats.find(session.id, jid))?.updatedAt;
    // a chat not stored yet is created with its label
    await chats.setLabel(orgId, session.id, ALICE, '3', true);
    expect(await labelsOf(ALICE)).toEqual(['3']);
    await chats.setLabel(orgId, session.id, ALICE, '1', true);
    expect(await labelsOf(ALICE)).toEqual(['1', '3']);
    // the same association again changes nothing, not even the row's time
    const before = await updatedAt(ALICE);
    await chats.setLabel(orgId, session.id, ALICE, '1', true);
    expect([await labelsOf(ALICE), await updatedAt(ALICE)]).toEqual([['1', '3'], before]);
    await chats.setLabel(orgId, session.id, BOB, '1', true);
    expect(await labelsOf(BOB)).toEqual(['1']);
    await chats.setLabel(orgId, session.id, ALICE, '3', false);
    expect(await labelsOf(ALICE)).toEqual(['1']);
    const removed = await updatedAt(ALICE);
    await chats.setLabel(orgId, session.id, ALICE, '3', false);
    expect([await labelsOf(ALICE), await updatedAt(ALICE)]).toEqual([['1'], removed]);
    await chats.setLabel(orgId, session.id, GROUP, '2', false);
    expect(await chats.find(session.id, GROUP)).toBeNull();
    expect((await chats.page(session, 10)).rows.map((r) => [r.jid, r.labels])).toEqual([
      [BOB, ['1']],
      [ALICE, ['1']],
    ]);
    // another session's chats keep theirs
    const other = await newSession(db, orgId);
    await chats.setLabel(orgId, other.id, ALICE, '1', true);
    await chats.dropLabel(session.id, '1');
    expect([await labelsOf(ALICE), await labelsOf(BOB)]).toEqual([[], []]);
    expect(await chats.find(other.id, ALICE)).toMatchObject({ labels: ['1'] });
  });
});
