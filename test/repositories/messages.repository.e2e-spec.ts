import type { DataSource } from 'typeorm';
import { MessagesRepository, newId, NewMessage } from '@app/database';
import { closeTestDataSource, testDataSource } from '../support/seed';
import { newOrganization, newSession } from './rows';

describe('MessagesRepository status changes (PostgreSQL)', () => {
  let db: DataSource;
  let messages: MessagesRepository;
  let orgId: string;
  let sessionId: string;

  const outbound = (over: Partial<NewMessage> = {}): NewMessage => ({
    id: newId('msg'),
    organizationId: orgId,
    sessionId,
    waMessageId: `3EB0${newId('msg').slice(-18)}`,
    direction: 'out',
    chatJid: '15550009999@s.whatsapp.net',
    from: '15550001111@s.whatsapp.net',
    type: 'text',
    text: 'hello',
    status: 'queued',
    ...over,
  });

  beforeAll(async () => {
    db = await testDataSource();
    messages = new MessagesRepository(db);
    orgId = await newOrganization(db);
    sessionId = (await newSession(db, orgId)).id;
  });
  afterAll(() => closeTestDataSource());

  it('markSent returns the sent row once and drops the media bytes of a media message', async () => {
    const text = (await messages.insertOutbound(outbound(), null))!;
    const sent = await messages.markSent(text.id, 5_000, Buffer.from('raw'));
    expect(sent).toMatchObject({ id: text.id, status: 'sent', sentAt: 5_000, waMessageId: text.waMessageId });
    expect(await messages.markSent(text.id, 6_000, null)).toBeNull();
    expect(await messages.rawOf(sessionId, text.waMessageId)).toEqual(Buffer.from('raw'));

    const image = (await messages.insertOutbound(outbound({ type: 'image', text: null, media: { mimetype: 'image/png', size: 3, filename: null, caption: null } }), Buffer.from('png')))!;
    expect(await messages.mediaOf(image.id)).toEqual(Buffer.from('png'));
    expect((await messages.markSent(image.id, 5_000, null))?.status).toBe('sent');
    expect(await messages.mediaOf(image.id)).toBeNull();
  });

  it('markFailed returns the failed row once, and never moves a sent one', async () => {
    const queued = (await messages.insertOutbound(outbound(), null))!;
    expect(await messages.markFailed(queued.id, 'expired')).toMatchObject({ id: queued.id, status: 'failed', error: 'expired' });
    expect(await messages.markFailed(queued.id, 'again')).toBeNull();
    const sent = (await messages.insertOutbound(outbound(), null))!;
    await messages.markSent(sent.id, 1, null);
    expect(await messages.markFailed(sent.id, 'late')).toBeNull();
  });

  it('applyAck moves a sent message forward only and returns the moved row', async () => {
    const m = (await messages.insertOutbound(outbound(), null))!;
    expect(await messages.applyAck(sessionId, m.waMessageId, 'delivered')).toBeNull();
    await messages.markSent(m.id, 1, null);
    expect(await messages.applyAck(sessionId, m.waMessageId, 'read')).toMatchObject({ id: m.id, status: 'read' });
    expect(await messages.applyAck(sessionId, m.waMessageId, 'delivered')).toBeNull();
    expect(await messages.applyAck(sessionId, m.waMessageId, 'played')).toMatchObject({ id: m.id, status: 'played' });
  });
});
