import type { DataSource } from 'typeorm';
import type { EntityManager } from 'typeorm';
import { MessagesRepository, newId, NewMessage, SessionsRepository } from '@app/database';
import { closeTestDataSource, testDataSource } from '../support/seed';
import { newOrganization, newSession } from './rows';

describe('MessagesRepository status changes (PostgreSQL)', () => {
  let db: DataSource;
  let messages: MessagesRepository;
  let sessions: SessionsRepository;
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
    sessions = new SessionsRepository(db);
    orgId = await newOrganization(db);
    sessionId = (await newSession(db, orgId)).id;
  });
  afterAll(() => closeTestDataSource());

  const order = () => ({ next: (tx: EntityManager) => sessions.nextMessageSeq(sessionId, tx) });

  it('markSent returns the sent row once and drops the media bytes of a media message', async () => {
    const text = (await messages.insertOutbound(outbound(), null, order()))!;
    const sent = await messages.markSent(text.id, 5_000, Buffer.from('raw'));
    expect(sent).toMatchObject({ id: text.id, status: 'sent', sentAt: 5_000, waMessageId: text.waMessageId });
    expect(await messages.markSent(text.id, 6_000, null)).toBeNull();
    expect(await messages.rawOf(sessionId, text.waMessageId)).toEqual(Buffer.from('raw'));

    const image = (await messages.insertOutbound(outbound({ type: 'image', text: null, media: { mimetype: 'image/png', size: 3, filename: null, caption: null } }), Buffer.from('png'), order()))!;
    expect(await messages.mediaOf(image.id)).toEqual(Buffer.from('png'));
    expect((await messages.markSent(image.id, 5_000, null))?.status).toBe('sent');
    expect(await messages.mediaOf(image.id)).toBeNull();
  });

  it('markFailed returns the failed row once, and never moves a sent one', async () => {
    const queued = (await messages.insertOutbound(outbound(), null, order()))!;
    expect(await messages.markFailed(queued.id, 'expired')).toMatchObject({ id: queued.id, status: 'failed', error: 'expired' });
    expect(await messages.markFailed(queued.id, 'again')).toBeNull();
    const sent = (await messages.insertOutbound(outbound(), null, order()))!;
    await messages.markSent(sent.id, 1, null);
    expect(await messages.markFailed(sent.id, 'late')).toBeNull();
  });

  it('applyAck moves a sent message forward only and returns the moved row', async () => {
    const m = (await messages.insertOutbound(outbound(), null, order()))!;
    expect(await messages.applyAck(sessionId, m.waMessageId, 'delivered')).toBeNull();
    await messages.markSent(m.id, 1, null);
    expect(await messages.applyAck(sessionId, m.waMessageId, 'read')).toMatchObject({ id: m.id, status: 'read' });
    expect(await messages.applyAck(sessionId, m.waMessageId, 'delivered')).toBeNull();
    expect(await messages.applyAck(sessionId, m.waMessageId, 'played')).toMatchObject({ id: m.id, status: 'played' });
  });

  it('drains in acceptance (commit) order, not id order, when a later id commits first', async () => {
    // a fresh session, so nothing queued by the other tests is ahead
    sessionId = (await newSession(db, orgId)).id;
    // ids minted in one millisecond are not ordered by their random part: order them explicitly
    const [lowId, highId] = [newId('msg'), newId('msg')].sort();
    const earlyId = outbound({ id: lowId });
    const lateId = outbound({ id: highId });
    // the request that minted the later id commits first: it is the first accepted
    const first = (await messages.insertOutbound(lateId, null, order()))!;
    const second = (await messages.insertOutbound(earlyId, null, order()))!;
    expect(second.id < first.id).toBe(true);
    expect((await messages.nextQueued(sessionId))?.id).toBe(first.id);
    await messages.markSent(first.id, 1, null);
    expect((await messages.nextQueued(sessionId))?.id).toBe(second.id);
  });

  it('a racing accept waits for the one holding the session number, so numbers follow commits', async () => {
    sessionId = (await newSession(db, orgId)).id;
    let releaseA!: () => void;
    const held = new Promise<void>((resolve) => (releaseA = resolve));
    const a = outbound();
    const b = outbound();
    const insertA = messages.insertOutbound(a, null, {
      next: async (tx) => {
        const n = await sessions.nextMessageSeq(sessionId, tx);
        await held; // A keeps its transaction (and the session row) open
        return n;
      },
    });
    await new Promise((r) => setTimeout(r, 50));
    let bDone = false;
    const insertB = messages.insertOutbound(b, null, order()).then((row) => ((bDone = true), row));
    await new Promise((r) => setTimeout(r, 200));
    expect(bDone).toBe(false); // B waits for A's number to commit
    releaseA();
    await Promise.all([insertA, insertB]);
    expect((await messages.nextQueued(sessionId))?.id).toBe(a.id);
  });
});
