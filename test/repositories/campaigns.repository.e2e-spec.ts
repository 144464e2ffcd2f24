import type { DataSource } from 'typeorm';
import { CampaignMessage } from '@app/contracts';
import { CampaignsRepository, MessagesRepository, MessageQueueRepository, newId, SessionsRepository } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession } from './rows';

/**
 * A media campaign's file in PostgreSQL (issue 43): stored once with the campaign, read by every recipient's message
 * through the one read of an outbound message's bytes (`MessagesRepository.mediaOf`), forgotten when the campaign can
 * send nothing more, and gone with its session.
 */
describe('CampaignsRepository: a media campaign\'s file (PostgreSQL)', () => {
  let db: DataSource;
  let campaigns: CampaignsRepository;
  let messages: MessagesRepository;
  let queue: MessageQueueRepository;

  beforeAll(async () => {
    db = await testDataSource();
    campaigns = new CampaignsRepository(await testDb());
    messages = new MessagesRepository(await testDb());
    queue = new MessageQueueRepository(await testDb());
  });
  afterAll(() => closeTestDataSource());

  const hasMedia = async (campaignId: string) => (await db.query('SELECT 1 FROM campaign_media WHERE campaign_id = $1', [campaignId])).length > 0;
  const bytes = Buffer.from(Array.from({ length: 70000 }, (_, i) => (i * 31) % 256));
  const message: CampaignMessage = {
    type: 'image', text: 'Hi {{name}}', media: { mimetype: 'image/png', size: bytes.length, filename: null, sha256: 'x' }, location: null, contact: null, poll: null,
  };

  async function mediaCampaign(recipients = 3) {
    const organizationId = await newOrganization(db);
    const session = await newSession(db, organizationId);
    const row = await campaigns.create(
      { id: newId('cmp'), organizationId, sessionId: session.id, name: 'menu', message, window: null, pacing: { minDelayMs: 0, maxDelayMs: 0, typing: false }, warmup: null, skipNotOnWhatsApp: false, startAt: Date.now() },
      Array.from({ length: recipients }, (_, i) => ({ to: `1555000${i}@s.whatsapp.net`, variables: { name: `N${i}` } })),
      bytes,
    );
    return { organizationId, sessionId: session.id, campaignId: row.id, row };
  }

  /** A recipient's message as the scheduler stores it: the campaign's description, its own caption, no bytes. */
  async function campaignMessage(c: { organizationId: string; sessionId: string; campaignId: string }, i: number) {
    const id = newId('msg');
    await queue.insertOutbound(
      {
        id, organizationId: c.organizationId, sessionId: c.sessionId, waMessageId: `W-${id}`, direction: 'out', chatJid: `1555000${i}@s.whatsapp.net`, from: null,
        type: 'image', media: { mimetype: 'image/png', size: bytes.length, filename: null, caption: `Hi N${i}` }, status: 'queued', campaignId: c.campaignId,
      },
      null,
    );
    return id;
  }

  it('stores the bytes once for all recipients; each recipient\'s message reads them; a message with bytes of its own reads its own', async () => {
    const c = await mediaCampaign(3);
    expect(c.row.message).toEqual(message);
    const ids = [await campaignMessage(c, 0), await campaignMessage(c, 1), await campaignMessage(c, 2)];
    const stored = await db.query(
      `SELECT (SELECT count(*)::int FROM campaign_media WHERE campaign_id = $1) AS campaign,
              (SELECT count(*)::int FROM message_media WHERE message_id = ANY($2::text[])) AS messages`,
      [c.campaignId, ids],
    );
    expect(stored).toEqual([{ campaign: 1, messages: 0 }]);
    for (const id of ids) expect((await messages.mediaOf(id))!.equals(bytes)).toBe(true);

    const own = newId('msg');
    await queue.insertOutbound(
      { id: own, organizationId: c.organizationId, sessionId: c.sessionId, waMessageId: `W-${own}`, direction: 'out', chatJid: '15559999@s.whatsapp.net', from: null,
        type: 'image', media: { mimetype: 'image/png', size: 3, filename: null, caption: null }, status: 'queued' },
      Buffer.from('own'),
    );
    expect((await messages.mediaOf(own))!.toString()).toBe('own');
    // no such message: none
    expect(await messages.mediaOf(newId('msg'))).toBeNull();
  });

  it('forgets the bytes when the campaign is completed or cancelled (then a message of it has none)', async () => {
    const done = await mediaCampaign(1);
    const id = await campaignMessage(done, 0);
    await (await testDb()).transaction((tx) => campaigns.afterStep(tx, done.campaignId, { nextSendAt: null }));
    expect(await hasMedia(done.campaignId)).toBe(true);
    await (await testDb()).transaction((tx) => campaigns.afterStep(tx, done.campaignId, { nextSendAt: null, status: 'completed' }));
    expect(await hasMedia(done.campaignId)).toBe(false);
    expect(await messages.mediaOf(id)).toBeNull();

    const cancelled = await mediaCampaign(1);
    await (await testDb()).transaction((tx) => campaigns.changeStatus(tx, cancelled.campaignId, ['scheduled'], 'paused'));
    expect(await hasMedia(cancelled.campaignId)).toBe(true);
    await (await testDb()).transaction((tx) => campaigns.changeStatus(tx, cancelled.campaignId, ['paused'], 'cancelled'));
    expect(await hasMedia(cancelled.campaignId)).toBe(false);
  });

  it('goes with its session', async () => {
    const c = await mediaCampaign(1);
    await new SessionsRepository(await testDb()).delete(c.sessionId);
    expect(await db.query(`SELECT 1 FROM campaign_media WHERE campaign_id = $1`, [c.campaignId])).toHaveLength(0);
  });
});
