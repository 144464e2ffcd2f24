import { DataSource } from 'typeorm';
import { EventEnvelope } from '@app/contracts';
import { CampaignsRepository, Db, GENERIC_PLANS, poolSettings, MessagesRepository, MessageQueueRepository, MessageAcksRepository, newId, NewMessage, OutboxRows, serviceSession, SessionsRepository, toMessageView } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession, ownedSession } from './rows';

describe('MessagesRepository status changes (PostgreSQL)', () => {
  let db: DataSource;
  let messages: MessagesRepository;
  let queue: MessageQueueRepository;
  let acks: MessageAcksRepository;
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
    messages = new MessagesRepository(await testDb());
    queue = new MessageQueueRepository(await testDb());
    acks = new MessageAcksRepository(await testDb());
    orgId = await newOrganization(db);
    sessionId = (await newSession(db, orgId)).id;
  });
  afterAll(() => closeTestDataSource());

  it('keeps an outbound message\'s send options (forward source, poll vote, link preview) for the gateway, null otherwise', async () => {
    const key = { waMessageId: '3EB0ORIGINAL', chatJid: '15550009999@s.whatsapp.net', fromMe: true, participant: null };
    const forward = (await queue.insertOutbound(outbound({ sendOptions: { forwardOf: key } }), null))!;
    expect(forward.sendOptions).toEqual({ forwardOf: key });
    const vote = (await queue.insertOutbound(outbound({ type: 'pollVote', text: null, sendOptions: { pollVote: { poll: key, options: ['a'] } } }), null))!;
    const plain = (await queue.insertOutbound(outbound(), null))!;
    expect(plain.sendOptions).toBeNull();
    const queued = (await queue.nextQueued(sessionId, 100)).messages;
    expect(queued.find((m) => m.id === vote.id)?.sendOptions).toEqual({ pollVote: { poll: key, options: ['a'] } });
    expect(queued.find((m) => m.id === forward.id)?.sendOptions).toEqual({ forwardOf: key });
    // the Message resource does not show them
    expect(toMessageView(forward)).not.toHaveProperty('sendOptions');
    for (const m of [forward, vote, plain]) await queue.markFailed(m.id, 'done with it');
  });

  it('markSentMany drops the media bytes of the media messages of a batch, whichever form of the statement it runs', async () => {
    const image = { type: 'image' as const, text: null, media: { mimetype: 'image/png', size: 3, filename: null, caption: null } };
    const [a, b] = [(await queue.insertOutbound(outbound(), null))!, (await queue.insertOutbound(outbound(), null))!];
    // texts only: the form without the media delete
    expect([...(await queue.markSentMany([{ id: a.id, sentAt: 1, raw: null, media: false }, { id: b.id, sentAt: 1, raw: null, media: false }])).keys()]).toEqual([a.id, b.id]);
    const text = (await queue.insertOutbound(outbound(), null))!;
    const photo = (await queue.insertOutbound(outbound(image), Buffer.from('png')))!;
    const moved = await queue.markSentMany([{ id: text.id, sentAt: 2, raw: null, media: false }, { id: photo.id, sentAt: 2, raw: null, media: true }]);
    expect([...moved.keys()].sort()).toEqual([text.id, photo.id].sort());
    expect(await messages.mediaOf(photo.id)).toBeNull();
    expect((await messages.findById(photo.id))?.status).toBe('sent');
  });

  it('markSent moves a queued row once and drops the media bytes of a media message', async () => {
    const text = (await queue.insertOutbound(outbound(), null))!;
    expect(await queue.markSent(text.id, 5_000, Buffer.from('raw'))).toEqual({ heldAck: null });
    expect(await messages.findById(text.id)).toMatchObject({ id: text.id, status: 'sent', sentAt: 5_000, waMessageId: text.waMessageId });
    expect(await queue.markSent(text.id, 6_000, null)).toBeNull();
    expect(await messages.rawOf(sessionId, text.waMessageId)).toEqual(Buffer.from('raw'));

    const image = (await queue.insertOutbound(outbound({ type: 'image', text: null, media: { mimetype: 'image/png', size: 3, filename: null, caption: null } }), Buffer.from('png')))!;
    expect(await messages.mediaOf(image.id)).toEqual(Buffer.from('png'));
    expect(await queue.markSent(image.id, 5_000, null)).toEqual({ heldAck: null });
    expect((await messages.findById(image.id))?.status).toBe('sent');
    expect(await messages.mediaOf(image.id)).toBeNull();
  });

  it('markSent writes its outbox rows in the same statement, only when the row moved, with the updatedAt given', async () => {
    const queued = (await queue.insertOutbound(outbound(), null))!;
    const updatedAt = queued.createdAt + 1234;
    const message = toMessageView({ ...queued, status: 'sent', sentAt: 7_000, updatedAt });
    const envelope = (id: string): EventEnvelope<object> => ({ id, event: 'message.sent', organizationId: orgId, sessionId, timestamp: 1, payload: { message } });
    const outbox = (id: string) => new OutboxRows([envelope(id)], [JSON.stringify(envelope(id))]);
    const [first, second] = [newId('evt'), newId('evt')];
    expect(await queue.markSent(queued.id, 7_000, null, updatedAt, outbox(first))).toEqual({ heldAck: null });
    const sent = await messages.findById(queued.id);
    expect(sent).toMatchObject({ status: 'sent', sentAt: 7_000, updatedAt });
    // the Message built before the statement is the row it recorded
    expect(toMessageView(sent!)).toEqual(message);
    const stored = async (id: string) => (await db.query(`SELECT type, session_id, envelope FROM events WHERE id = $1`, [id]))[0];
    expect(await stored(first)).toEqual({ type: 'message.sent', session_id: sessionId, envelope: envelope(first) });
    // not queued any more: nothing moves, no event
    expect(await queue.markSent(queued.id, 8_000, null, updatedAt, outbox(second))).toBeNull();
    expect(await stored(second)).toBeUndefined();
  });

  it('markFailed returns the failed row once, and never moves a sent one', async () => {
    const queued = (await queue.insertOutbound(outbound(), null))!;
    expect(await queue.markFailed(queued.id, 'expired')).toMatchObject({ id: queued.id, status: 'failed', error: 'expired' });
    expect(await queue.markFailed(queued.id, 'again')).toBeNull();
    const sent = (await queue.insertOutbound(outbound(), null))!;
    await queue.markSent(sent.id, 1, null);
    expect(await queue.markFailed(sent.id, 'late')).toBeNull();
  });

  it('the record of a send moves a campaign message a pause or a cancel withdrew while it was being sent (the network has it), never a scheduled send', async () => {
    const campaigns = new CampaignsRepository(await testDb());
    const campaign = await campaigns.create(
      { id: newId('cmp'), organizationId: orgId, sessionId, name: 'withdrawn', message: { type: 'text', text: 'Hi', location: null, contact: null, poll: null, media: null }, window: null, pacing: { minDelayMs: 0, maxDelayMs: 0, typing: false }, warmup: null, skipNotOnWhatsApp: false, startAt: Date.now() },
      [{ to: '15550009998@s.whatsapp.net', variables: null }, { to: '15550009997@s.whatsapp.net', variables: null }],
    );
    const paused = (await queue.insertOutbound(outbound({ campaignId: campaign.id }), null))!;
    // a pause withdrew it (scheduled, no send_at) after its sender read it: the send's record still lands
    expect(await queue.withdrawCampaignQueued(campaign.id, 'scheduled')).toEqual([paused.id]);
    expect(await queue.markSent(paused.id, 1, null)).toEqual({ heldAck: null });
    expect(await messages.findById(paused.id)).toMatchObject({ status: 'sent' });
    // a cancel's withdrawal (cancelled): the same
    const cancelled = (await queue.insertOutbound(outbound({ campaignId: campaign.id }), null))!;
    expect(await queue.withdrawCampaignQueued(campaign.id, 'cancelled')).toEqual([cancelled.id]);
    expect(await queue.markSentMany([{ id: cancelled.id, sentAt: 2, raw: null, media: false }])).toEqual(new Map([[cancelled.id, { heldAck: null }]]));
    expect(await messages.findById(cancelled.id)).toMatchObject({ status: 'sent' });
    // once only; and a scheduled send (not a campaign's) or one cancelled by DELETE is never recorded sent
    expect(await queue.markSent(cancelled.id, 3, null)).toBeNull();
    const scheduled = (await queue.insertOutbound(outbound({ status: 'scheduled', sendAt: Date.now() + 60_000 }), null))!;
    expect(await queue.markSent(scheduled.id, 1, null)).toBeNull();
    await queue.cancelScheduled(await ownedSession(orgId, sessionId), scheduled.id);
    expect(await queue.markSent(scheduled.id, 1, null)).toBeNull();
    expect(await messages.findById(scheduled.id)).toMatchObject({ status: 'cancelled' });
  });

  it('applyAck moves a sent message forward only and returns the moved row', async () => {
    const m = (await queue.insertOutbound(outbound(), null))!;
    await queue.markSent(m.id, 1, null);
    expect(await acks.applyAck(sessionId, m.waMessageId, 'read')).toEqual({ moved: expect.objectContaining({ id: m.id, status: 'read' }) });
    expect(await acks.applyAck(sessionId, m.waMessageId, 'delivered')).toBeNull();
    expect(await acks.applyAck(sessionId, m.waMessageId, 'played')).toEqual({ moved: expect.objectContaining({ id: m.id, status: 'played' }) });
    expect(await acks.applyAck(sessionId, 'not-a-message', 'read')).toBeNull();
  });

  it('a receipt for a queued message is kept on its row (the highest), handed back by markSent, then applied once', async () => {
    const m = (await queue.insertOutbound(outbound(), null))!;
    expect(await acks.applyAck(sessionId, m.waMessageId, 'read')).toEqual({ held: true });
    // a lower one changes nothing; the row is still queued, unchanged
    expect(await acks.applyAck(sessionId, m.waMessageId, 'delivered')).toBeNull();
    expect(await messages.findById(m.id)).toMatchObject({ status: 'queued', updatedAt: m.updatedAt });
    // a gateway that stops here leaves nothing to apply yet: the row is not sent
    expect(await acks.heldAcksOf(sessionId)).toEqual([]);
    expect(await queue.markSent(m.id, 1, null)).toEqual({ heldAck: 'read' });
    // recorded sent, not yet applied (a crash here): the next holder finds it
    expect(await acks.heldAcksOf(sessionId)).toEqual([{ waMessageId: m.waMessageId, status: 'read' }]);
    expect(await acks.applyAck(sessionId, m.waMessageId, 'read')).toEqual({ moved: expect.objectContaining({ status: 'read' }) });
    expect(await acks.heldAcksOf(sessionId)).toEqual([]);
    // a lower receipt on the way keeps the higher kept one for later
    const n = (await queue.insertOutbound(outbound(), null))!;
    await acks.applyAck(sessionId, n.waMessageId, 'played');
    await queue.markSent(n.id, 1, null);
    expect(await acks.applyAck(sessionId, n.waMessageId, 'delivered')).toEqual({ moved: expect.objectContaining({ status: 'delivered' }) });
    expect(await acks.heldAcksOf(sessionId)).toEqual([{ waMessageId: n.waMessageId, status: 'played' }]);
  });

  it('drains in acceptance (commit) order, not id order, when a later id commits first', async () => {
    // a fresh session, so nothing queued by the other tests is ahead
    sessionId = (await newSession(db, orgId)).id;
    // ids minted in one millisecond are not ordered by their random part: order them explicitly
    const [lowId, highId] = [newId('msg'), newId('msg')].sort();
    const earlyId = outbound({ id: lowId });
    const lateId = outbound({ id: highId });
    // the request that minted the later id commits first: it is the first accepted
    const first = (await queue.insertOutbound(lateId, null))!;
    const second = (await queue.insertOutbound(earlyId, null))!;
    expect(second.id < first.id).toBe(true);
    expect((await queue.nextQueued(sessionId, 32)).messages.map((m) => m.id)).toEqual([first.id, second.id]);
    expect((await queue.nextQueued(sessionId, 1)).messages[0]?.id).toBe(first.id);
    await queue.markSent(first.id, 1, null);
    expect((await queue.nextQueued(sessionId, 1)).messages[0]?.id).toBe(second.id);
  });

  it('reads the session\'s presenceTyping with the head of its queue', async () => {
    const session = await newSession(db, orgId, { presenceTyping: true });
    sessionId = session.id;
    expect(await queue.nextQueued(sessionId, 32)).toEqual({ messages: [], presenceTyping: false });
    const queued = (await queue.insertOutbound(outbound(), null))!;
    expect(await queue.nextQueued(sessionId, 32)).toEqual({ messages: [queued], presenceTyping: true });
    await new SessionsRepository(await testDb()).patchSettings(session, { presenceTyping: false });
    expect((await queue.nextQueued(sessionId, 32)).presenceTyping).toBe(false);
  });

  it('a racing accept waits for the one holding the session number, so numbers follow commits', async () => {
    sessionId = (await newSession(db, orgId)).id;
    let releaseA!: () => void;
    const held = new Promise<void>((resolve) => (releaseA = resolve));
    let aInserted!: () => void;
    const aIn = new Promise<void>((resolve) => (aInserted = resolve));
    const a = outbound();
    const b = outbound();
    // A's accept runs inside a transaction kept open: the session row stays locked until it commits
    const insertA = (await testDb()).transaction(async (tx) => {
      const row = await queue.insertOutbound(a, null, tx);
      aInserted();
      await held;
      return row;
    });
    await aIn;
    let bDone = false;
    const insertB = queue.insertOutbound(b, null).then((row) => ((bDone = true), row));
    await new Promise((r) => setTimeout(r, 200));
    expect(bDone).toBe(false); // B waits for A's number to commit
    releaseA();
    await Promise.all([insertA, insertB]);
    expect((await queue.nextQueued(sessionId, 1)).messages[0]?.id).toBe(a.id);
  });

  it('an accept takes its number without writing the session row (no dead version of it per message)', async () => {
    sessionId = (await newSession(db, orgId)).id;
    const version = async () => (await db.query('SELECT xmin::text AS v FROM sessions WHERE id = $1', [sessionId]))[0].v as string;
    const before = await version();
    await queue.insertOutbound(outbound(), null);
    await db.query(`UPDATE sessions SET status = 'working' WHERE id = $1`, [sessionId]);
    const working = await version();
    expect(working).not.toBe(before); // the probe sees a write of the row
    expect((await queue.insertAcceptedMany(orgId, sessionId, [{ message: outbound(), media: null }], ['working'])).rows.size).toBe(1);
    await queue.insertOutboundMany(await ownedSession(orgId, sessionId), [{ message: outbound(), media: null }, { message: outbound(), media: null }]);
    expect(await version()).toBe(working);
    const seqs: Array<{ seq: number }> = await db.query('SELECT seq::int AS seq FROM messages WHERE session_id = $1 ORDER BY seq', [sessionId]);
    expect(seqs.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
  });

  it('an accept that conflicts (idempotency key, waMessageId) writes nothing, media included, and returns null', async () => {
    sessionId = (await newSession(db, orgId)).id;
    const first = (await queue.insertOutbound(outbound({ idempotencyKey: 'k-1' }), null))!;
    expect(first.idempotencyKey).toBe('k-1');
    const image = { type: 'image' as const, text: null, media: { mimetype: 'image/png', size: 3, filename: null, caption: null } };
    const repeat = outbound({ idempotencyKey: 'k-1', ...image });
    expect(await queue.insertOutbound(repeat, Buffer.from('png'))).toBeNull();
    expect(await messages.findById(repeat.id)).toBeNull();
    expect(await messages.mediaOf(repeat.id)).toBeNull();
    expect(await queue.insertOutbound(outbound({ waMessageId: first.waMessageId }), null)).toBeNull();
    // the numbers the conflicts took are skipped: the next accept still drains after the first
    const next = (await queue.insertOutbound(outbound(), null))!;
    expect((await queue.nextQueued(sessionId, 1)).messages[0]?.id).toBe(first.id);
    await queue.markSent(first.id, 1, null);
    expect((await queue.nextQueued(sessionId, 1)).messages[0]?.id).toBe(next.id);
  });

  it('insertOutboundMany numbers a batch consecutively in its order, stores media of inserted rows only, skips conflicts', async () => {
    const ownSession = await newSession(db, orgId);
    const own = ownSession.id;
    const one = (over: Partial<NewMessage> = {}) => outbound({ sessionId: own, ...over });
    const before = (await queue.insertOutbound(one({ idempotencyKey: 'taken' }), null))!;
    const batch = [
      { message: one({ text: 'a', mentions: ['15550008888@s.whatsapp.net', 'quote"and\\slash'] }), media: null },
      { message: one({ type: 'image', text: null, media: { mimetype: 'image/png', size: 3, filename: null, caption: 'c' } }), media: Buffer.from('png') },
      // conflicts with the earlier row: nothing written, its media neither, its number skipped
      { message: one({ idempotencyKey: 'taken', type: 'image', text: null, media: { mimetype: 'image/png', size: 3, filename: null, caption: null } }), media: Buffer.from('xyz') },
      { message: one({ type: 'location', text: null, location: { latitude: 1, longitude: 2, name: null, address: null }, idempotencyKey: 'fresh' }), media: null },
    ];
    const rows = await queue.insertOutboundMany(ownSession, batch);
    expect([...rows.keys()]).toEqual([batch[0].message.id, batch[1].message.id, batch[3].message.id]);
    expect(rows.get(batch[0].message.id)).toMatchObject({ status: 'queued', direction: 'out', text: 'a', mentions: ['15550008888@s.whatsapp.net', 'quote"and\\slash'] });
    expect(rows.get(batch[1].message.id)?.media).toEqual({ mimetype: 'image/png', size: 3, filename: null, caption: 'c' });
    expect(rows.get(batch[3].message.id)).toMatchObject({ location: { latitude: 1, longitude: 2, name: null, address: null }, idempotencyKey: 'fresh' });
    expect(await messages.mediaOf(batch[1].message.id)).toEqual(Buffer.from('png'));
    expect(await messages.mediaOf(batch[2].message.id)).toBeNull();
    const seqs: Array<{ id: string; seq: number }> = await db.query('SELECT id, seq::int AS seq FROM messages WHERE session_id = $1 ORDER BY seq', [own]);
    expect(seqs.map((r) => r.id)).toEqual([before.id, batch[0].message.id, batch[1].message.id, batch[3].message.id]);
    expect(seqs.map((r) => r.seq - seqs[0].seq)).toEqual([0, 1, 2, 4]);
    expect((await queue.nextQueued(own, 10)).messages.map((m) => m.id)).toEqual(seqs.map((r) => r.id));
    const next = (await queue.insertOutbound(one(), null))!;
    expect((await db.query('SELECT seq::int AS seq FROM messages WHERE id = $1', [next.id]))[0].seq).toBe(seqs[0].seq + 5);

    // the batch's keys: found within the window, released after it
    const found = await messages.findByIdempotencyKeys(ownSession, ['taken', 'fresh', 'unknown'], 24 * 3600 * 1000);
    expect([...found.keys()].sort()).toEqual(['fresh', 'taken']);
    expect(found.get('taken')?.id).toBe(before.id);
    await db.query(`UPDATE messages SET created_at = now() - interval '25 hours' WHERE id = $1`, [before.id]);
    await messages.releaseIdempotencyKeys(ownSession, ['taken', 'fresh'], 24 * 3600 * 1000);
    expect([...(await messages.findByIdempotencyKeys(ownSession, ['taken', 'fresh'], 24 * 3600 * 1000)).keys()]).toEqual(['fresh']);
    expect((await messages.findById(before.id))?.idempotencyKey).toBeNull();
    expect(await queue.insertOutboundMany(ownSession, [])).toEqual(new Map());
  });

  it('insertAcceptedMany stores a group with consecutive numbers in its order, from the session\'s own jid, only from a sendable session of the organization', async () => {
    const sendable = ['working', 'reconnecting'];
    const own = await newSession(db, orgId, { status: 'working', waJid: '15550004444@s.whatsapp.net', gatewayId: 'gw-spec' });
    const one = (over: Partial<NewMessage> = {}) => ({ message: outbound({ sessionId: own.id, from: null, ...over }), media: null as Buffer | null });
    const seqOf = async (id: string) => ((await db.query('SELECT seq::int AS seq FROM messages WHERE id = $1', [id]))[0]?.seq as number | undefined) ?? null;
    const before = (await queue.insertOutbound(one({ from: own.waJid }).message, null))!;

    // the later of two messages to one chat has the lower id (ids minted in one millisecond are not ordered)
    const [lowId, highId] = [newId('msg'), newId('msg')].sort();
    const group = [
      one({ id: highId, text: 'a' }),
      one({ id: lowId, type: 'image', text: null, media: { mimetype: 'image/png', size: 3, filename: null, caption: null } }),
      one({ text: 'c', chatJid: '15550007777@s.whatsapp.net' }),
    ];
    group[1].media = Buffer.from('png');
    const accepted = await queue.insertAcceptedMany(orgId, own.id, group, sendable);
    expect(accepted.gatewayId).toBe('gw-spec');
    expect([...accepted.rows.keys()].sort()).toEqual(group.map((g) => g.message.id).sort());
    for (const g of group) expect(accepted.rows.get(g.message.id)).toMatchObject({ status: 'queued', direction: 'out', from: own.waJid });
    expect(await messages.mediaOf(group[1].message.id)).toEqual(Buffer.from('png'));
    const base = (await seqOf(before.id))!;
    expect(await Promise.all(group.map((g) => seqOf(g.message.id)))).toEqual([base + 1, base + 2, base + 3]);
    // each chat kept current by the group's last message to it, by the group's order
    const chats: Array<{ jid: string; last_message_id: string }> = await db.query('SELECT jid, last_message_id FROM chats WHERE session_id = $1 ORDER BY jid', [own.id]);
    expect(chats).toEqual([
      { jid: '15550007777@s.whatsapp.net', last_message_id: group[2].message.id },
      { jid: '15550009999@s.whatsapp.net', last_message_id: group[1].message.id },
    ]);

    // a conflict of one row (its waMessageId is stored) leaves it out, keeps the others, its number unused
    const mixed = [one({ text: 'x' }), one({ waMessageId: before.waMessageId }), one({ text: 'z' })];
    const some = await queue.insertAcceptedMany(orgId, own.id, mixed, sendable);
    expect([...some.rows.keys()].sort()).toEqual([mixed[0].message.id, mixed[2].message.id].sort());
    expect(some.gatewayId).toBe('gw-spec');
    expect(await Promise.all(mixed.map((g) => seqOf(g.message.id)))).toEqual([base + 4, null, base + 6]);
    expect((await queue.nextQueued(own.id, 10)).messages.map((m) => m.id)).toEqual([before.id, ...group.map((g) => g.message.id), mixed[0].message.id, mixed[2].message.id]);

    // another organization's, a stopped or a missing session: the whole group refused, nothing written, no number taken
    const stranger = await newOrganization(db, 'Stranger');
    const stopped = await newSession(db, orgId, { status: 'stopped', gatewayId: 'gw-spec' });
    const refusedOf = (sessionId: string) => [one({ sessionId, text: 'r1' }), one({ sessionId, text: 'r2' })];
    for (const [organizationId, sessionId] of [[stranger, own.id], [orgId, stopped.id], [orgId, newId('ses')]]) {
      const refused = refusedOf(sessionId);
      expect(await queue.insertAcceptedMany(organizationId, sessionId, refused, sendable)).toEqual({ rows: new Map(), gatewayId: null });
      for (const r of refused) expect(await messages.findById(r.message.id)).toBeNull();
    }
    // the stopped session never took a number: it has no counter row
    const seqs: Array<{ session_id: string; message_seq: number }> = await db.query(
      'SELECT session_id, message_seq::int AS message_seq FROM session_message_seqs WHERE session_id = ANY($1)',
      [[own.id, stopped.id]],
    );
    expect(seqs).toEqual([{ session_id: own.id, message_seq: base + 6 }]);
    expect(await queue.insertAcceptedMany(orgId, own.id, [], sendable)).toEqual({ rows: new Map(), gatewayId: null });
  });

  it('applyEdit replaces a text or a caption once, returning the previous one; unknown, unchanged or revoked: null', async () => {
    const inbound = (over: Partial<NewMessage>) => outbound({ direction: 'in', status: 'received', ...over });
    const text = (await messages.insert(inbound({ text: 'helo' })))!;
    const edited = await messages.applyEdit(serviceSession(sessionId), text.waMessageId, 'hello');
    expect(edited).toEqual({ row: expect.objectContaining({ id: text.id, text: 'hello', revokedAt: null, editedAt: expect.any(Number) }), previousText: 'helo' });
    expect(text.editedAt).toBeNull();
    expect((await messages.findById(text.id))?.text).toBe('hello');
    expect(await messages.applyEdit(serviceSession(sessionId), text.waMessageId, 'hello')).toBeNull();
    expect(await messages.applyEdit(serviceSession(sessionId), 'NOT-STORED', 'x')).toBeNull();

    const image = (await messages.insert(inbound({ type: 'image', text: null, media: { mimetype: 'image/jpeg', size: 3, filename: null, caption: 'old' } })))!;
    expect(await messages.applyEdit(serviceSession(sessionId), image.waMessageId, 'new')).toEqual({ row: expect.objectContaining({ text: null, media: expect.objectContaining({ caption: 'new', mimetype: 'image/jpeg' }) }), previousText: 'old' });

    const revoked = await messages.markRevoked(serviceSession(sessionId), text.waMessageId);
    expect(revoked).toMatchObject({ id: text.id, revokedAt: expect.any(Number) });
    expect(await messages.applyEdit(serviceSession(sessionId), text.waMessageId, 'after delete')).toBeNull();
  });

  it('applyReaction keeps one reaction per reactor (the latest), removes it with "", and answers null when nothing changed', async () => {
    const row = (await messages.insert(outbound({ direction: 'in', status: 'received' })))!;
    expect(row.reactions).toEqual([]);
    const a = '15550000001@s.whatsapp.net';
    const b = '15550000002@s.whatsapp.net';
    expect((await messages.applyReaction(sessionId, row.waMessageId, a, '👍'))?.reactions).toEqual([{ from: a, emoji: '👍' }]);
    expect((await messages.applyReaction(sessionId, row.waMessageId, b, '❤️'))?.reactions).toEqual([{ from: a, emoji: '👍' }, { from: b, emoji: '❤️' }]);
    expect(await messages.applyReaction(sessionId, row.waMessageId, b, '❤️')).toBeNull();
    expect((await messages.applyReaction(sessionId, row.waMessageId, a, '😂'))?.reactions).toEqual([{ from: b, emoji: '❤️' }, { from: a, emoji: '😂' }]);
    expect((await messages.applyReaction(sessionId, row.waMessageId, b, ''))?.reactions).toEqual([{ from: a, emoji: '😂' }]);
    expect(await messages.applyReaction(sessionId, row.waMessageId, b, '')).toBeNull();
    expect(await messages.applyReaction(sessionId, 'NOT-STORED', a, '👍')).toBeNull();
    expect((await messages.findById(row.id))?.reactions).toEqual([{ from: a, emoji: '😂' }]);
  });

  it('applyPollVote keeps each voter\'s latest vote on a poll, and only on a poll', async () => {
    const poll = (await messages.insert(outbound({ type: 'poll', text: null, poll: { name: 'Lunch?', options: ['Yes', 'No'], selectableCount: 1 } })))!;
    const voter = '15550000001@s.whatsapp.net';
    expect((await messages.applyPollVote(sessionId, poll.waMessageId, voter, ['Yes']))?.pollVotes).toEqual([{ voter, options: ['Yes'] }]);
    expect(await messages.applyPollVote(sessionId, poll.waMessageId, voter, ['Yes'])).toBeNull();
    expect((await messages.applyPollVote(sessionId, poll.waMessageId, voter, ['No']))?.pollVotes).toEqual([{ voter, options: ['No'] }]);
    const text = (await messages.insert(outbound({})))!;
    expect(await messages.applyPollVote(sessionId, text.waMessageId, voter, ['Yes'])).toBeNull();
  });

  it('markRevoked marks a stored message once (the revoked_at column) and ignores an unknown one', async () => {
    const row = (await messages.insert(outbound({ direction: 'in', status: 'received' })))!;
    expect(row.revokedAt).toBeNull();
    const first = await messages.markRevoked(serviceSession(sessionId), row.waMessageId);
    expect(first?.revokedAt).toEqual(expect.any(Number));
    expect((await messages.findById(row.id))?.revokedAt).toBe(first?.revokedAt);
    expect(await messages.markRevoked(serviceSession(sessionId), row.waMessageId)).toBeNull();
    expect(await messages.markRevoked(serviceSession(sessionId), 'NOT-STORED')).toBeNull();
  });

  it('applyMemberAck keeps each member forward only and moves the message to the step every member reached', async () => {
    const [bob, carol] = ['15550002222@s.whatsapp.net', '15550003333@s.whatsapp.net'];
    const members = [bob, carol];
    const row = (await queue.insertOutbound(outbound({ chatJid: '120363000000000001@g.us' }), null))!;
    // queued: the member's receipt is kept, the status waits for the send to be recorded
    expect(await acks.applyMemberAck(sessionId, row.waMessageId, bob, 'delivered', members)).toEqual({ row: expect.objectContaining({ status: 'queued', memberAcks: { [bob]: 'delivered' } }), moved: false });
    await queue.markSent(row.id, 5_000, null);
    expect(await acks.applyMemberAck(sessionId, row.waMessageId, bob, 'read', members)).toMatchObject({ row: { status: 'sent', memberAcks: { [bob]: 'read' } }, moved: false });
    expect(await acks.applyMemberAck(sessionId, row.waMessageId, bob, 'delivered', members)).toBeNull();
    expect(await acks.applyMemberAck(sessionId, row.waMessageId, carol, 'delivered', members)).toMatchObject({ row: { status: 'delivered' }, moved: true });
    expect(await acks.applyMemberAck(sessionId, row.waMessageId, carol, 'read', members)).toMatchObject({ row: { status: 'read', memberAcks: { [bob]: 'read', [carol]: 'read' } }, moved: true });
    expect((await messages.findById(row.id))?.status).toBe('read');
    // no members known: kept per member, the message does not move
    const other = (await queue.insertOutbound(outbound({ chatJid: '120363000000000001@g.us' }), null))!;
    await queue.markSent(other.id, 5_000, null);
    expect(await acks.applyMemberAck(sessionId, other.waMessageId, bob, 'read', [])).toMatchObject({ row: { status: 'sent' }, moved: false });
    expect(await acks.applyMemberAck(sessionId, 'NOT-STORED', bob, 'read', members)).toBeNull();
  });

  it('updateMediaRef replaces an inbound media reference (a re-upload), and nothing else', async () => {
    const old = { engine: 'baileys', mediaType: 'image', directPath: '/v/t62/old', mediaKey: 'a2V5', url: null } as const;
    const fresh = { ...old, directPath: '/v/t62/new', url: 'https://mmg.whatsapp.net/v/t62/new' };
    const media = { mimetype: 'image/jpeg', size: 3, filename: null, caption: null };
    const image = (await messages.insert(outbound({ direction: 'in', status: 'received', type: 'image', text: null, media, mediaRef: old })))!;
    expect(await messages.updateMediaRef(image.id, fresh)).toBe(true);
    expect(await messages.findById(image.id)).toMatchObject({ id: image.id, mediaRef: fresh, media, status: 'received' });
    // an outbound row, a row without media and an unknown id are left alone
    const out = (await queue.insertOutbound(outbound({ type: 'image', text: null, media }), Buffer.from('png')))!;
    expect(await messages.updateMediaRef(out.id, fresh)).toBe(false);
    const text = (await messages.insert(outbound({ direction: 'in', status: 'received' })))!;
    expect(await messages.updateMediaRef(text.id, fresh)).toBe(false);
    expect((await messages.findById(text.id))?.mediaRef).toBeNull();
    expect(await messages.updateMediaRef('msg_unknown', fresh)).toBe(false);
  });
});

describe('MessagesRepository: a send is recorded by its key, whatever the queue (PostgreSQL)', () => {
  // one connection, so the test can EXPLAIN the statement the repository prepared on it, with the gateway's pool
  // settings (GENERIC_PLANS): generic plans, planned from statistics taken while the queue was empty
  let db: DataSource;
  let pool: Db;
  let queue: MessageQueueRepository;
  beforeAll(async () => {
    db = await testDataSource();
    pool = Db.open(poolSettings(process.env.DATABASE_URL!, { max: 1, ...GENERIC_PLANS }));
    queue = new MessageQueueRepository(pool);
  });
  afterAll(async () => {
    await pool.close();
    await closeTestDataSource();
  });

  it('the record of sends (markSentMany) reads the rows by primary key, not the partial index of the whole queue', async () => {
    const orgId = await newOrganization(db);
    const session = await newSession(db, orgId);
    const sessionId = session.id;
    const message = (over: Partial<NewMessage> = {}): NewMessage => ({
      id: newId('msg'), organizationId: orgId, sessionId, waMessageId: `3EB0${newId('msg').slice(-18)}`, direction: 'out',
      chatJid: '15550009999@s.whatsapp.net', from: null, type: 'text', text: 'hello', status: 'queued', ...over,
    });
    // a history, analyzed while nothing is queued: the queue's index looks empty to the planner
    const history = Array.from({ length: 5000 }, () => ({ message: message({ status: 'read' }), media: null }));
    for (let i = 0; i < history.length; i += 1000) await queue.insertOutboundMany(session, history.slice(i, i + 1000));
    await pool.query('ANALYZE messages');
    const queued = [...(await queue.insertOutboundMany(session, Array.from({ length: 300 }, () => ({ message: message(), media: null })))).keys()];
    const [first, second] = queued;
    expect((await queue.markSentMany([{ id: first, sentAt: 1_000, raw: null }])).has(first)).toBe(true);
    expect((await queue.markFailed(second, 'gone'))?.status).toBe('failed');
    const plan = async (statement: string) => JSON.stringify(await pool.query(`EXPLAIN (FORMAT JSON) ${statement}`));
    const recordPlan = await plan(
      `EXECUTE messages_mark_sent_many(ARRAY['${queued[2]}'], ARRAY[now()], ARRAY[NULL::bytea], ARRAY[NULL::timestamptz], ARRAY[NULL::text], '{}', '{}', '{}', '{}', '{}')`,
    );
    expect(recordPlan).toContain('messages_pkey');
    expect(recordPlan).not.toContain('messages_queued');
    // and the gateway's pool never plans it again per execution (a custom plan for a batch of one, left to choose)
    const [counts] = await pool.query<{ generic: number; custom: number }>(`SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = 'messages_mark_sent_many'`);
    expect(counts.custom).toBe(0);
    expect(counts.generic).toBeGreaterThan(0);
  });
});
