import IORedis, { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { OutboxRows, outboxInsertSql } from '@app/database';
import { EventPublisher } from '@app/events';
import { closeTestDataSource, seedOrganization, testDataSource, testDb } from './support/seed';
import { opaqueEvent } from './support/opaque-event';

/**
 * A state change and its events commit together (the gateway's message statuses rely on it): an event is in the
 * outbox exactly when the change it announces is, and it reaches the stream only after the commit.
 */
describe('EventPublisher.transact', () => {
  let db: DataSource;
  let redis: Redis;
  let publisher: EventPublisher;
  let organizationId: string;
  const prefix = process.env.REDIS_KEY_PREFIX!;

  beforeAll(async () => {
    db = await testDataSource();
    redis = new IORedis(process.env.REDIS_URL!);
    publisher = new EventPublisher(await testDb(), redis, `${prefix}:transact-spec`);
    organizationId = (await seedOrganization('Transact')).id;
  });
  afterAll(async () => {
    await redis.quit();
    await closeTestDataSource();
  });

  const outboxCount = async (label: string) =>
    Number((await db.query(`SELECT count(*) AS n FROM events WHERE envelope->'payload'->>'label' = $1`, [label]))[0].n);
  const changeCount = async (label: string) => Number((await db.query(`SELECT count(*) AS n FROM organizations WHERE name = $1`, [label]))[0].n);
  const streamed = async (label: string) =>
    (await redis.xrange(`${prefix}:transact-spec:events`, '-', '+')).filter(([, fields]) => fields[1].includes(`"label":"${label}"`)).length;

  it('commits the change, its outbox row and then the stream entry', async () => {
    const label = `committed-${Date.now()}`;
    const result = await publisher.transact(async (tx, publish) => {
      await tx.query(`INSERT INTO organizations (id, name) VALUES ($1, $2)`, [`org_tx_${Date.now()}`, label]);
      publish(opaqueEvent({ event: 'webhook.test', organizationId, sessionId: null, payload: { label } }));
      // not visible outside the transaction yet, and not on the stream before the commit
      expect(await outboxCount(label)).toBe(0);
      expect(await streamed(label)).toBe(0);
      return 'done';
    });
    expect(result).toBe('done');
    expect(await changeCount(label)).toBe(1);
    expect(await outboxCount(label)).toBe(1);
    expect(await streamed(label)).toBe(1);
  });

  it('keeps neither the change nor its event when the work fails', async () => {
    const label = `rolled-back-${Date.now()}`;
    await expect(
      publisher.transact(async (tx, publish) => {
        await tx.query(`INSERT INTO organizations (id, name) VALUES ($1, $2)`, [`org_rb_${Date.now()}`, label]);
        publish(opaqueEvent({ event: 'webhook.test', organizationId, sessionId: null, payload: { label } }));
        throw new Error('the change failed after naming its event');
      }),
    ).rejects.toThrow('the change failed');
    expect(await changeCount(label)).toBe(0);
    expect(await outboxCount(label)).toBe(0);
    expect(await streamed(label)).toBe(0);
  });

  it('a stream append that fails after the commit does not fail the transaction: the outbox row is the record (issue 17)', async () => {
    // a Redis nobody answers on: the append fails at once instead of queueing
    const { freePort } = await import('./support/processes');
    const down = new IORedis(`redis://127.0.0.1:${await freePort()}`, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    down.on('error', () => undefined);
    const label = `append-failed-${Date.now()}`;
    try {
      const cut = new EventPublisher(await testDb(), down, `${prefix}:transact-spec`);
      // resolves: the gateway acks the network on this, and the dispatcher's reconciler fans the outbox row out
      await expect(
        cut.transact(async (tx, publish) => {
          await tx.query(`INSERT INTO organizations (id, name) VALUES ($1, $2)`, [`org_af_${Date.now()}`, label]);
          publish(opaqueEvent({ event: 'webhook.test', organizationId, sessionId: null, payload: { label } }));
          return 'stored';
        }),
      ).resolves.toBe('stored');
    } finally {
      down.disconnect();
    }
    expect(await changeCount(label)).toBe(1);
    expect(await outboxCount(label)).toBe(1);
    expect(await streamed(label)).toBe(0);
  });

  describe('withOutbox (the change and its outbox rows in one statement)', () => {
    // a change that writes its events with it, only when it changed something: an organization created once
    const createOnce = (id: string, label: string) => (outbox: OutboxRows) =>
      db
        .query(
          `WITH c AS (INSERT INTO organizations (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id),
                o AS (${outboxInsertSql(3, 'EXISTS (SELECT 1 FROM c)')})
           SELECT id FROM c`,
          [id, label, ...outbox.params],
        )
        .then((rows: Array<{ id: string }>) => rows.length > 0);

    it('writes the change and its outbox row together, then appends to the stream', async () => {
      const label = `one-statement-${Date.now()}`;
      const id = `org_one_${Date.now()}`;
      const result = await publisher.withOutbox([opaqueEvent({ event: 'webhook.test', organizationId, sessionId: null, payload: { label } })], createOnce(id, label));
      expect(result).toBe(true);
      expect(await changeCount(label)).toBe(1);
      expect(await outboxCount(label)).toBe(1);
      expect(await streamed(label)).toBe(1);
    });

    it('writes and appends nothing when the statement changed nothing', async () => {
      const label = `unchanged-${Date.now()}`;
      const result = await publisher.withOutbox([opaqueEvent({ event: 'webhook.test', organizationId, sessionId: null, payload: { label } })], createOnce(organizationId, label));
      expect(result).toBe(false);
      expect(await outboxCount(label)).toBe(0);
      expect(await streamed(label)).toBe(0);
    });
  });
});
