import type { DataSource } from 'typeorm';
import { MessagesRepository, newId, SessionsRepository, StatusPostsRepository } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession } from './rows';

describe('StatusPostsRepository (PostgreSQL)', () => {
  let db: DataSource;
  let posts: StatusPostsRepository;
  let orgId: string;

  beforeAll(async () => {
    db = await testDataSource();
    posts = new StatusPostsRepository(await testDb());
    orgId = await newOrganization(db);
  });
  afterAll(() => closeTestDataSource());

  it('keeps a post’s audience and background by message id; a second write for the id changes nothing', async () => {
    const session = await newSession(db, orgId);
    const id = newId('msg');
    await posts.record(id, session, { audience: ['15550001@s.whatsapp.net', '15550002@s.whatsapp.net'], backgroundColor: '#112233' });
    await posts.record(id, session, { audience: ['15550009@s.whatsapp.net'], backgroundColor: null });
    expect(await posts.optionsOf(id)).toEqual({ audience: ['15550001@s.whatsapp.net', '15550002@s.whatsapp.net'], backgroundColor: '#112233' });
    expect(await posts.optionsOf(newId('msg'))).toBeNull();
  });

  it('goes with its session', async () => {
    const session = await newSession(db, orgId);
    const id = newId('msg');
    await posts.record(id, session, { audience: ['15550001@s.whatsapp.net'], backgroundColor: null });
    await new SessionsRepository(await testDb()).delete(session.id);
    expect(await posts.optionsOf(id)).toBeNull();
  });

  it('the default audience is the session’s 1:1 chats in its log, most recent first (MessagesRepository.contactChatJids)', async () => {
    const session = await newSession(db, orgId);
    const messages = new MessagesRepository(await testDb());
    const at = Date.now();
    const chats = ['15550001@s.whatsapp.net', '120363000000000001@g.us', '15550002@s.whatsapp.net', '15550001@s.whatsapp.net'];
    for (const [i, chatJid] of chats.entries()) {
      await messages.insert({
        id: newId('msg'), organizationId: orgId, sessionId: session.id, waMessageId: `W${i}`, direction: 'in', chatJid,
        from: chatJid, type: 'text', text: 'hi', status: 'received', createdAt: at + i * 1000,
      });
    }
    expect(await messages.contactChatJids(session, 10)).toEqual(['15550001@s.whatsapp.net', '15550002@s.whatsapp.net']);
    expect(await messages.contactChatJids(session, 1)).toEqual(['15550001@s.whatsapp.net']);
  });
});
