import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { MediaBlobsRepository, MessagesRepository, newId, SessionsRepository } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession } from './rows';

describe('MediaBlobsRepository (PostgreSQL)', () => {
  let db: DataSource;
  let blobs: MediaBlobsRepository;
  let messages: MessagesRepository;

  beforeAll(async () => {
    db = await testDataSource();
    blobs = new MediaBlobsRepository(await testDb());
    messages = new MessagesRepository(await testDb());
  });
  afterAll(() => closeTestDataSource());

  const blob = (text: string) => {
    const bytes = Buffer.from(text);
    return { mimetype: 'image/jpeg', size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), bytes };
  };
  /** an inbound media message of a fresh session, as the gateway stores it */
  async function inboundMessage(organizationId: string, sessionId?: string) {
    const session = sessionId ?? (await newSession(db, organizationId)).id;
    const id = newId('msg');
    await messages.insert({
      id, organizationId, sessionId: session, waMessageId: `W-${id}`, direction: 'in', chatJid: '15550001@s.whatsapp.net', from: '15550001@s.whatsapp.net',
      type: 'image', media: { mimetype: 'image/jpeg', size: 5, filename: null, caption: null }, mediaRef: { engine: 'sim', mediaId: id }, status: 'received', createdAt: Date.now(),
    });
    return { organizationId, sessionId: session, messageId: id };
  }

  it('keeps the bytes of a message once (the first write stands) and returns them only to its session and organization', async () => {
    const org = await newOrganization(db);
    const key = await inboundMessage(org);
    expect(await blobs.has(key.messageId)).toBe(false);
    expect(await blobs.put(key, blob('first'))).toBe(true);
    expect(await blobs.put(key, blob('second'))).toBe(false);
    expect(await blobs.get(key)).toEqual(blob('first'));
    expect(await blobs.has(key.messageId)).toBe(true);
    expect(await blobs.get({ ...key, sessionId: newId('ses') })).toBeNull();
    expect(await blobs.get({ ...key, organizationId: newId('org') })).toBeNull();
  });

  it('keeps bytes unchanged, every byte value included', async () => {
    const key = await inboundMessage(await newOrganization(db));
    const bytes = Buffer.from(Array.from({ length: 70000 }, (_, i) => (i * 31) % 256));
    await blobs.put(key, { mimetype: 'video/mp4', size: bytes.length, sha256: 'x', bytes });
    expect((await blobs.get(key))!.bytes.equals(bytes)).toBe(true);
  });

  it('refuses bytes of a message that does not exist (deleted while its download ran)', async () => {
    const org = await newOrganization(db);
    const session = await newSession(db, org);
    await expect(blobs.put({ organizationId: org, sessionId: session.id, messageId: newId('msg') }, blob('orphan'))).rejects.toThrow(/foreign key/);
  });

  it('goes with its message, its session and its organization', async () => {
    const org = await newOrganization(db);
    const a = await inboundMessage(org);
    const b = await inboundMessage(org);
    await blobs.put(a, blob('a'));
    await blobs.put(b, blob('b'));
    await new SessionsRepository(await testDb()).delete(a.sessionId);
    expect(await blobs.has(a.messageId)).toBe(false);
    expect(await blobs.has(b.messageId)).toBe(true);
    await db.query('DELETE FROM organizations WHERE id = $1', [org]);
    expect(await blobs.has(b.messageId)).toBe(false);
  });

  it('deletes one message, a session or an organization on request', async () => {
    const org = await newOrganization(db);
    const other = await newOrganization(db);
    const a1 = await inboundMessage(org);
    const a2 = await inboundMessage(org, a1.sessionId);
    const b = await inboundMessage(org);
    const c = await inboundMessage(other);
    for (const k of [a1, a2, b, c]) await blobs.put(k, blob(`bytes of ${k.messageId}`));
    expect(await db.query('SELECT count(*)::int AS n FROM media_blobs WHERE session_id = $1', [a1.sessionId])).toEqual([{ n: 2 }]);
    expect(await blobs.deleteMessage(a2.messageId)).toBe(true);
    expect(await blobs.deleteMessage(a2.messageId)).toBe(false);
    expect(await blobs.deleteSession(a1.sessionId)).toBe(1);
    expect(await blobs.has(b.messageId)).toBe(true);
    expect(await blobs.deleteOrganization(org)).toBe(1);
    expect(await blobs.has(b.messageId)).toBe(false);
    expect(await blobs.has(c.messageId)).toBe(true);
  });
});
