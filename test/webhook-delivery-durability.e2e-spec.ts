import { isolateFleet } from './support/fleet-harness';

// a database and Redis namespace of this file's own: the reconciler fans out every outbox event no stream delivered,
// and the run's shared outbox holds the other files' events for webhooks whose receivers are long gone; in a full run
// that backlog, not the wipe, decided how long recovery took (a 60 s timeout in one clean-clone CI, 4 s alone)
const isolated = isolateFleet('webhook-durability');

import IORedis, { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { EventEnvelope, EventType } from '@app/contracts';
import { EventPublisher } from '@app/events';
import { waitFor } from './support/processes';
import { createWebhookRow, deliveriesOf, notFannedOut, Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { closeTestDataSource, seedOrganization, testDataSource, testDb } from './support/seed';
import { buildOpaque } from './support/opaque-event';

/**
 * CONTRACT 7: nothing is lost when a dispatcher is killed mid-POST or when Redis loses every key.
 * PostgreSQL is the record; receivers dedupe on X-Webhook-Request-Id, so "delivered" means every event id
 * arrived at least once.
 */
describe('webhook delivery durability', () => {
  let db: DataSource;
  let redis: Redis;
  let publisher: EventPublisher;
  let receiver: Receiver;
  let orgId: string;
  const hooks: Record<string, string> = {};
  let dispatcher: Awaited<ReturnType<typeof startDispatcherProcess>> | null = null;
  const prefix = process.env.REDIS_KEY_PREFIX!;

  const burst = async (event: EventType, count: number): Promise<EventEnvelope[]> => {
    const envelopes = Array.from({ length: count }, (_, i) => buildOpaque(publisher, { event, organizationId: orgId, sessionId: null, payload: { i } }));
    for (let i = 0; i < envelopes.length; i += 50) await publisher.publishEnvelopes(envelopes.slice(i, i + 50));
    return envelopes;
  };

  /** Every key of this run, as an operator would wipe them: SCAN MATCH + DEL, never FLUSHALL. */
  /**
   * Deletes every key of the run at once, as a Redis restarted empty loses them (one script: nothing runs between the
   * deletes). A SCAN then DEL from the client, batch by batch, was not that fault: a retry job added between a batch's
   * SCAN and its DEL kept its hash but lost its place in the delayed set, a state no restart leaves (only eviction of
   * single keys does, which BullMQ's Redis must not do: `maxmemory-policy noeviction`, docs/webhook-delivery.md), and
   * the reconciler, seeing the hash, never re-enqueued it (25 of 300 events stuck in 1 of 8 runs).
   */
  const deleteRunKeys = async (): Promise<number> =>
    (await redis.eval(
      `local cursor, n = '0', 0
       repeat
         local r = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
         cursor = r[1]
         for _, k in ipairs(r[2]) do n = n + redis.call('DEL', k) end
       until cursor == '0'
       return n`,
      0,
      `${prefix}:*`,
    )) as number;

  beforeAll(async () => {
    await isolated.create();
    db = await testDataSource();
    redis = new IORedis(process.env.REDIS_URL!);
    publisher = new EventPublisher(await testDb(), redis, prefix);
    receiver = await startReceiver();
    // slow enough that a burst always has POSTs in flight
    receiver.respondWith(async () => {
      await new Promise((r) => setTimeout(r, 15));
      return { status: 200 };
    });
    orgId = (await seedOrganization('Durable')).id;
    const policy = { policy: 'constant' as const, delaySeconds: 1, attempts: 15 };
    hooks.kill = await createWebhookRow(db, null, { organizationId: orgId, url: `${receiver.url}/kill`, events: ['message.sent'], retryPolicy: policy });
    hooks.wipe = await createWebhookRow(db, null, { organizationId: orgId, url: `${receiver.url}/wipe`, events: ['message.ack'], retryPolicy: policy });
    hooks.late = await createWebhookRow(db, null, { organizationId: orgId, url: `${receiver.url}/late`, events: ['presence.update'], retryPolicy: policy });
    hooks.private = await createWebhookRow(db, null, {
      organizationId: orgId, url: `${receiver.url}/private`, events: ['call.incoming'], retryPolicy: { policy: 'constant', delaySeconds: 1, attempts: 1 },
    });
  });

  afterAll(async () => {
    await dispatcher?.stop();
    await receiver.close();
    await redis.quit();
    await closeTestDataSource();
    await isolated.drop();
  });

  // every first POST to /wipe fails on purpose (200 in a row): the webhook's breaker would open and hand attempts
  // back, which is not what this suite is about (test/webhook-fairness.e2e-spec.ts is)
  const start = () => startDispatcherProcess({ WEBHOOK_BREAKER_FAILURES: '100000' });

  const allDelivered = async (webhookId: string, count: number) => {
    const rows = await deliveriesOf(db, webhookId);
    return rows.length === count && rows.every((r) => r.status === 'delivered');
  };

  it('delivers every event of a burst when the dispatcher is SIGKILLed mid-burst and restarted', async () => {
    dispatcher = await start();
    const envelopes = await burst('message.sent', 300);
    await waitFor(() => receiver.distinctIds('/kill').size >= 40, 20000, 'burst under way');
    await dispatcher.kill();
    const before = receiver.distinctIds('/kill').size;
    expect(before).toBeLessThan(300);
    // the killed dispatcher leaves work only others can finish: events not fanned out (their stream entries pending,
    // for a takeover or the reconciler's outbox scan) and rows it had inserted claimed (`delivering` under its lease,
    // for the reconciler once the lease ends), whose calls were not made or not recorded
    const ids = envelopes.map((e) => e.id);
    const [left] = await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND status <> 'delivered'`, [hooks.kill]);
    expect((await notFannedOut(db, ids)) + left.n).toBeGreaterThan(0);
    dispatcher = await start();
    await waitFor(() => receiver.distinctIds('/kill').size === 300, 40000, 'every event delivered after the restart');
    expect(receiver.distinctIds('/kill')).toEqual(new Set(envelopes.map((e) => e.id)));
    await waitFor(() => allDelivered(hooks.kill, 300), 20000, 'every delivery recorded as delivered');
  }, 120_000);

  it('delivers every event when all of the run\'s Redis keys are deleted mid-burst', async () => {
    // every first attempt at /wipe fails: each event's second attempt is a delayed BullMQ job (1 s), and
    // the wipe deletes those jobs with the stream, so only the reconciler can bring them back
    const firstSeen = new Set<string>();
    /** event ids the receiver answered 2xx at /wipe: delivered, as the receiver sees it */
    const answered = new Set<string>();
    receiver.respondWith(async (req) => {
      const id = String(req.headers['x-webhook-request-id']);
      if (req.path === '/wipe' && !firstSeen.has(id)) {
        firstSeen.add(id);
        return { status: 503 };
      }
      await new Promise((r) => setTimeout(r, 15));
      if (req.path === '/wipe') answered.add(id);
      return { status: 200 };
    });
    const first = await burst('message.ack', 200);
    // retries are scheduled (the job is added once the pending row is committed) and not yet due
    await waitFor(async () => (await deliveriesOf(db, hooks.wipe)).filter((d) => d.status === 'pending').length >= 30, 20000, 'retries scheduled');
    await new Promise((r) => setTimeout(r, 100));
    const deleted = await deleteRunKeys();
    expect(deleted).toBeGreaterThan(0);
    const second = await burst('message.ack', 100);
    // every event's first POST failed, so an id seen at the receiver says nothing yet: wait for the 2xx answers
    await waitFor(() => answered.size === 300, 60000, 'every event answered 2xx after the wipe').catch(async (err: Error) => {
      // what a failure needs to be understood: which events are missing, and where their rows are
      const ids = [...first, ...second].map((e) => e.id).filter((id) => !answered.has(id));
      const rows = (await deliveriesOf(db, hooks.wipe)).filter((d) => ids.includes(d.event_id));
      const byStatus = rows.reduce<Record<string, number>>((n, d) => ({ ...n, [`${d.status}/${d.attempts}`]: (n[`${d.status}/${d.attempts}`] ?? 0) + 1 }), {});
      // a retry job's hash left in Redis without its place in a queue (the reconciler sees the hash and adds nothing)
      let hashes = 0;
      for (const row of rows) hashes += (await redis.keys(`${prefix}:*${row.id}*`)).length;
      throw new Error(`${err.message}: ${ids.length} missing (${ids.filter((id) => first.some((e) => e.id === id)).length} of the first burst), seen once ${ids.filter((id) => firstSeen.has(id)).length}, rows ${rows.length} ${JSON.stringify(byStatus)}, not fanned out ${await notFannedOut(db, ids)}, job keys in Redis ${hashes}`);
    });
    expect(answered).toEqual(new Set([...first, ...second].map((e) => e.id)));
    await waitFor(() => allDelivered(hooks.wipe, 300), 20000, 'every delivery recorded as delivered');
    // each event got its failed first try and then a success: the lost retry jobs were put back
    const attempts = (await deliveriesOf(db, hooks.wipe)).map((d) => d.attempts);
    expect(attempts.every((n) => n >= 2)).toBe(true);
  }, 120_000);

  it('fans out an outbox event whose insert commits after later events were fanned out, its stream append lost', async () => {
    // a producer transaction left open: its event's transaction id is below those of every later event
    const late = buildOpaque(publisher, { event: 'presence.update', organizationId: orgId, sessionId: null, payload: { late: true } });
    const producer = db.createQueryRunner();
    await producer.connect();
    await producer.startTransaction();
    await producer.query(`INSERT INTO events (id, organization_id, session_id, type, envelope) VALUES ($1, $2, NULL, $3, $4::jsonb)`, [
      late.id, orgId, late.event, JSON.stringify(late),
    ]);
    // later events go through while the reconciler makes its passes (every 500 ms); by the commit the
    // open event is older than the reconciler's 10 s grace
    const later = await burst('presence.update', 20);
    await waitFor(() => later.every((e) => receiver.distinctIds('/late').has(e.id)), 20000, 'later events delivered');
    await new Promise((r) => setTimeout(r, 11_000));
    await producer.commitTransaction();
    await producer.release();
    // never appended to the stream: only the reconciler's outbox scan can deliver it
    await waitFor(() => receiver.distinctIds('/late').has(late.id), 20000, 'late-committing event delivered');
    expect(await notFannedOut(db, [late.id, ...later.map((e) => e.id)])).toBe(0);
    await waitFor(() => allDelivered(hooks.late, 21), 10000, 'every delivery recorded as delivered');
  }, 60000);

  it('refuses a private target at connect time unless private targets are allowed', async () => {
    await dispatcher!.stop();
    dispatcher = await startDispatcherProcess({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    await burst('call.incoming', 1);
    const [d] = await waitFor(async () => {
      const rows = await deliveriesOf(db, hooks.private);
      return rows[0]?.status === 'dead' ? rows : undefined;
    }, 15000, 'refused delivery');
    expect(d.last_error).toBe('target address 127.0.0.1 is loopback');
    expect(d.last_status_code).toBeNull();
    expect(receiver.at('/private')).toHaveLength(0);
    const metrics = await (await fetch(`${dispatcher.opsUrl}/metrics`)).text();
    expect(metrics).toMatch(/gw_webhook_deliveries_total\{[^}]*outcome="refused"[^}]*\} 1/);
  });
});
