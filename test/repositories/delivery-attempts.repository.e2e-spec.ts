import { DataSource } from 'typeorm';
import { DeliveriesRepository, DeliveryAttemptsRepository, DeliveryLogRepository, EventsRepository, newId, OutboxRows } from '@app/database';
import { createWebhookRow } from '../support/receivers';
import { closeTestDataSource, seedOrganization, testDataSource, testDb } from '../support/seed';

/** A delivery's attempts, as the API's delivery detail lists them, against real PostgreSQL. */
describe('DeliveryAttemptsRepository', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = await testDataSource();
  });

  afterAll(() => closeTestDataSource());

  it('lists every attempt of a delivery in order, with what the receiver answered', async () => {
    const deliveries = new DeliveriesRepository(await testDb());
    const orgId = (await seedOrganization('Attempts')).id;
    const webhookId = await createWebhookRow(db, null, { organizationId: orgId, url: 'https://receiver.example/hook' });
    const envelope = { id: newId('evt'), event: 'message.received' as const, organizationId: orgId, sessionId: null, timestamp: Date.now(), payload: {} };
    await new EventsRepository(await testDb()).insertOutbox(new OutboxRows([envelope], [JSON.stringify(envelope)]));
    const deliveryId = (await new DeliveryLogRepository(await testDb()).insertPending({ deliveryId: newId('dlv'), webhookId, eventId: envelope.id, organizationId: orgId, eventType: envelope.event }))!;
    const started = Date.now() - 5000;
    for (const [attemptNo, statusCode] of [[1, 503], [2, 200]] as const) {
      await deliveries.claim([{ deliveryId, attemptNo }], 5000);
      await deliveries.recordAttempts([{
        deliveryId, attemptNo, status: statusCode === 200 ? 'delivered' : 'pending', statusCode,
        error: statusCode === 200 ? null : 'receiver answered 503', snippet: statusCode === 200 ? null : 'busy',
        durationMs: 7, startedAt: started + attemptNo * 1000, nextAttemptAt: statusCode === 200 ? null : Date.now() - 1,
      }]);
    }
    const attempts = await new DeliveryAttemptsRepository(await testDb()).listOfDelivery(deliveryId);
    expect(attempts).toEqual([
      { attemptNo: 1, statusCode: 503, durationMs: 7, error: 'receiver answered 503', responseSnippet: 'busy', startedAt: new Date(started + 1000) },
      { attemptNo: 2, statusCode: 200, durationMs: 7, error: null, responseSnippet: null, startedAt: new Date(started + 2000) },
    ]);
    expect(await new DeliveryAttemptsRepository(await testDb()).listOfDelivery('dlv_unknown')).toEqual([]);
  });
});
