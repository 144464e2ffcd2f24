import IORedis, { Redis } from 'ioredis';
import { EventPublisher } from '@app/events';
import { assertRunning, waitFor } from './support/processes';
import { PrivateServices, startPrivateServices } from './support/private-services';
import { createWebhookRow, Receiver, settledDeliveryCounts, startDispatcherProcess, startReceiver } from './support/receivers';
import { closeTestDataSource, seedOrganization, testDataSource, testDb } from './support/seed';
import { buildOpaque } from './support/opaque-event';

/**
 * Issue 23 item 3: PostgreSQL restarted (fast shutdown: every connection ends with 57P01) while 5,000 deliveries are
 * queued. Nothing is lost, duplicates stay within 0.1 % (each with the event's request id: the receiver dedupes),
 * and every POST has its attempt row. A private PostgreSQL and Redis (test/support/private-services.ts).
 */
describe('webhook delivery through a PostgreSQL restart', () => {
  let services: PrivateServices;
  let redis: Redis;
  let receiver: Receiver;
  let dispatcher: Awaited<ReturnType<typeof startDispatcherProcess>> | null = null;
  const EVENTS = 5000;

  beforeAll(async () => {
    services = await startPrivateServices('gw_webhook_restart');
    redis = new IORedis(process.env.REDIS_URL!);
    receiver = await startReceiver();
    receiver.respondWith(async () => {
      await new Promise((r) => setTimeout(r, 10));
      return { status: 200 };
    });
  }, 120_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await receiver?.close();
    await redis?.quit();
    await closeTestDataSource();
    await services?.stopAll();
  });

  it('loses nothing, duplicates at most 0.1 % and records every POST', async () => {
    const db = await testDataSource();
    const org = await seedOrganization('PostgreSQL restart');
    const hook = await createWebhookRow(db, null, {
      organizationId: org.id, url: `${receiver.url}/restart`, events: ['message.received'], retryPolicy: { policy: 'constant', delaySeconds: 1, attempts: 30 },
    });
    // the default request timeout: leases (timeout + 2 s) outlast the restart, as in production
    dispatcher = await startDispatcherProcess({ WEBHOOK_TIMEOUT_MS: '15000' });
    const publisher = new EventPublisher(await testDb(), redis, process.env.REDIS_KEY_PREFIX!);
    const events = Array.from({ length: EVENTS }, (_, i) => buildOpaque(publisher, { event: 'message.received', organizationId: org.id, sessionId: null, payload: { i } }));
    for (let i = 0; i < EVENTS; i += 500) await publisher.publishEnvelopes(events.slice(i, i + 500));
    // the deliveries are queued (stream read ahead, POSTs under way): restart PostgreSQL in the middle
    await waitFor(() => receiver.distinctIds('/restart').size >= EVENTS / 5, 60000, 'deliveries under way');
    await closeTestDataSource();
    await services.pg.restart();

    const figures = await settledDeliveryCounts(await testDataSource(), receiver, '/restart', hook, events);
    expect({ figures, withinTenthOfAPercent: figures.duplicates <= EVENTS * 0.001 }).toEqual({ figures, withinTenthOfAPercent: true });
    // every POST has its attempt row, and no attempt row lacks its POST
    expect(figures.attemptRows).toBe(figures.posts);
    assertRunning(dispatcher);
  }, 300_000);
});
