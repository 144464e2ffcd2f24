import IORedis, { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { CampaignsRepository, type Db, MessageQueueRepository, newId, SessionsRepository } from '@app/database';
import { EventPublisher } from '@app/events';
import type { SendRateLimiter } from '@app/messaging';
import { CampaignScheduler, ScheduledRunner } from '../../apps/gateway/src/campaigns/campaign-scheduler';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession } from './rows';

/**
 * The campaign step against PostgreSQL (issue 43): its next recipient is read without a lock (one statement), so what
 * it then writes of it must hold only while the recipient is still pending. Two schedulers stepping the same campaign
 * (a session between two gateways for a moment) must not give one recipient two messages.
 */
describe('CampaignScheduler: a recipient taken by another step (PostgreSQL)', () => {
  let db: DataSource;
  let pg: Db;
  let redis: Redis;
  let campaigns: CampaignsRepository;

  beforeAll(async () => {
    db = await testDataSource();
    pg = await testDb();
    redis = new IORedis(process.env.REDIS_URL!);
    campaigns = new CampaignsRepository(await testDb());
  });
  afterAll(async () => {
    await redis?.quit();
    await closeTestDataSource();
  });

  const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined } as unknown as Logger;
  const limiter = { tryAccept: async () => ({ accepted: true, retryAfterMs: 0 }), release: async () => undefined } as unknown as SendRateLimiter;

  function scheduler(sessionId: string, onWhatsApp: () => Promise<boolean>): CampaignScheduler {
    const s = new CampaignScheduler({
      campaigns,
      queue: new MessageQueueRepository(pg),
      sessions: new SessionsRepository(pg),
      events: new EventPublisher(pg, redis, process.env.REDIS_KEY_PREFIX!),
      limiter,
      logger,
      optOutKeywords: [],
      maxSleepMs: 1000,
    });
    const runner: ScheduledRunner = { drainQueued: async () => undefined, isWorking: () => true, onWhatsApp };
    s.attach({ activeSessionIds: () => [sessionId], runnerOf: (id) => (id === sessionId ? runner : undefined) });
    return s;
  }

  it('a step whose recipient another step queued meanwhile stores nothing: one message per recipient', async () => {
    const organizationId = await newOrganization(db);
    const session = await newSession(db, organizationId);
    const campaign = await campaigns.create(
      {
        id: newId('cmp'), organizationId, sessionId: session.id, name: 'race', window: null, warmup: null, skipNotOnWhatsApp: true, startAt: Date.now(),
        message: { type: 'text', text: 'Hi {{name}}', media: null, location: null, contact: null, poll: null },
        pacing: { minDelayMs: 0, maxDelayMs: 0, typing: false },
      },
      [{ to: '15550000001@s.whatsapp.net', variables: { name: 'A' } }, { to: '15550000002@s.whatsapp.net', variables: { name: 'B' } }],
    );

    // A reads the first recipient and waits in its number check while B steps the campaign wholly
    let asked!: () => void;
    const aAsked = new Promise<void>((resolve) => (asked = resolve));
    let answer!: (yes: boolean) => void;
    const a = scheduler(session.id, () => {
      asked();
      return new Promise<boolean>((resolve) => (answer = resolve));
    });
    const b = scheduler(session.id, async () => true);
    const aTick = a.tick();
    await aAsked;
    await b.tick();
    answer(true);
    await aTick;

    const messages: Array<{ id: string; chat_jid: string }> = await db.query(`SELECT id, chat_jid FROM messages WHERE campaign_id = $1`, [campaign.id]);
    expect(messages.map((m) => m.chat_jid)).toEqual(['15550000001@s.whatsapp.net']);
    const recipients: Array<{ position: number; status: string; message_id: string | null }> = await db.query(
      `SELECT position, status, message_id FROM campaign_recipients WHERE campaign_id = $1 ORDER BY position`,
      [campaign.id],
    );
    expect(recipients).toEqual([
      { position: 0, status: 'queued', message_id: messages[0].id },
      { position: 1, status: 'pending', message_id: null },
    ]);
    expect((await campaigns.counts(campaign.id)).pending).toBe(1);
  });
});
