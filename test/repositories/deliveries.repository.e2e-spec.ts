import { DataSource } from 'typeorm';
import type { EventEnvelope } from '@app/contracts';
import { AttemptRecord, DeliveriesRepository, DeliveryAttemptsRepository, DeliveryLogRepository, EventsRepository, newId, OutboxRows } from '@app/database';
import { createWebhookRow } from '../support/receivers';
import { closeTestDataSource, seedOrganization, testDataSource, testDb } from '../support/seed';

/** The delivery log's statements against real PostgreSQL, as the dispatcher and the API run them. */
describe('DeliveriesRepository', () => {
  let db: DataSource;
  let deliveries: DeliveriesRepository;
  let log: DeliveryLogRepository;
  let attempts: DeliveryAttemptsRepository;
  let events: EventsRepository;
  let orgId: string;

  const envelope = (): EventEnvelope => ({ id: newId('evt'), event: 'message.received', organizationId: orgId, sessionId: null, timestamp: Date.now(), payload: { text: 'hi' } });
  const publish = async (...envs: EventEnvelope[]) => events.insertOutbox(new OutboxRows(envs, envs.map((e) => JSON.stringify(e))));
  const hook = () => createWebhookRow(db, null, { organizationId: orgId, url: 'https://receiver.example/hook' });
  const newDelivery = (webhookId: string, e: EventEnvelope) => ({ deliveryId: newId('dlv'), webhookId, eventId: e.id, organizationId: orgId, eventType: e.event });
  const outcome = (deliveryId: string, attemptNo: number, over: Partial<AttemptRecord> = {}): AttemptRecord => ({
    deliveryId, attemptNo, status: 'delivered', statusCode: 200, error: null, snippet: null, durationMs: 12, startedAt: Date.now(), nextAttemptAt: null, ...over,
  });

  beforeAll(async () => {
    db = await testDataSource();
    deliveries = new DeliveriesRepository(await testDb());
    log = new DeliveryLogRepository(await testDb());
    attempts = new DeliveryAttemptsRepository(await testDb());
    events = new EventsRepository(await testDb());
    orgId = (await seedOrganization('Repositories')).id;
  });

  afterAll(() => closeTestDataSource());

  it('inserts fresh rows claimed, records their outcomes after their calls, and leaves a pair that has a row alone', async () => {
    const webhookId = await hook();
    const [a, b, c] = [envelope(), envelope(), envelope()];
    await publish(a, b, c);
    const done = newDelivery(webhookId, a);
    const failed = newDelivery(webhookId, b);
    const slow = newDelivery(webhookId, c);
    const notCreated = await deliveries.insertFirstRows([{ delivery: done }, { delivery: failed }, { delivery: slow }], [a.id, b.id], 5000);
    expect(notCreated.size).toBe(0);
    expect((await log.listByWebhook(webhookId, {}, 10)).map((d) => [d.status, d.attempts])).toEqual([['delivering', 1], ['delivering', 1], ['delivering', 1]]);
    await deliveries.recordAttempts([
      outcome(done.deliveryId, 1),
      outcome(failed.deliveryId, 1, { status: 'pending', statusCode: 500, error: 'receiver answered 500', nextAttemptAt: Date.now() + 60_000 }),
    ]);
    const byId = new Map((await log.listByWebhook(webhookId, {}, 10)).map((d) => [d.id, d]));
    expect(byId.get(done.deliveryId)).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
    expect(byId.get(done.deliveryId)!.deliveredAt).toBeInstanceOf(Date);
    expect(byId.get(failed.deliveryId)).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'receiver answered 500' });
    expect(byId.get(slow.deliveryId)).toMatchObject({ status: 'delivering', attempts: 1 });
    expect(await attempts.listOfDelivery(done.deliveryId)).toEqual([expect.objectContaining({ attemptNo: 1, statusCode: 200, durationMs: 12 })]);
    expect(await attempts.listOfDelivery(slow.deliveryId)).toEqual([]);

    // the same pair again (a takeover of an event already written): nothing is written
    const again = newDelivery(webhookId, a);
    expect(await deliveries.insertFirstRows([{ delivery: again }], [], 5000)).toEqual(new Set([again.deliveryId]));
    expect(await log.findOfWebhook(webhookId, again.deliveryId)).toBeNull();
  });

  it('claims an attempt once, reports a live lease to a second claimer, and records its outcome', async () => {
    const webhookId = await hook();
    const e = envelope();
    await publish(e);
    const deliveryId = (await log.insertPending(newDelivery(webhookId, e)))!;
    expect(deliveryId).toMatch(/^dlv_/);
    const [claimed, stale] = await deliveries.claim([{ deliveryId, attemptNo: 1 }, { deliveryId: 'dlv_missing', attemptNo: 1 }], 60_000);
    expect(claimed).toMatchObject({ kind: 'claimed', deliveryId, webhookId, attemptBase: 0, envelope: e });
    expect(stale).toEqual({ kind: 'gone' });
    const [second] = await deliveries.claim([{ deliveryId, attemptNo: 1 }], 60_000);
    expect(second.kind).toBe('leased');
    expect(second.kind === 'leased' && second.leasedUntil).toBeGreaterThan(Date.now());
    expect(await deliveries.renewLeases([{ deliveryId, attemptNo: 1 }, { deliveryId, attemptNo: 2 }], 60_000)).toEqual(new Set([deliveryId]));

    await deliveries.recordAttempts([outcome(deliveryId, 1, { status: 'dead', statusCode: 410, error: 'receiver answered 410' })]);
    expect(await log.findOfWebhook(webhookId, deliveryId)).toMatchObject({ status: 'dead', attempts: 1, lastStatusCode: 410 });
    expect(await deliveries.countDead()).toBeGreaterThanOrEqual(1);

    // a replay starts a fresh budget; a delivery in progress is not reset
    expect(await log.resetForReplay(webhookId, deliveryId)).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await log.resetForReplay(webhookId, deliveryId)).toBeNull();
    const [replayed] = await deliveries.claim([{ deliveryId, attemptNo: 2 }], 60_000);
    expect(replayed).toMatchObject({ kind: 'claimed', attemptBase: 1 });
    await deliveries.abandon(deliveryId, 2, 'webhook was deleted');
    expect(await log.findOfWebhook(webhookId, deliveryId)).toMatchObject({ status: 'dead', lastError: 'webhook was deleted' });
  });

  it('finds deliveries that are overdue or whose lease ran out, and not the others', async () => {
    const webhookId = await hook();
    const [a, b, c] = [envelope(), envelope(), envelope()];
    await publish(a, b, c);
    const overdue = newDelivery(webhookId, a);
    const later = newDelivery(webhookId, b);
    const abandoned = newDelivery(webhookId, c);
    // claims whose lease is already over; two of them recorded, due long ago and later
    await deliveries.insertFirstRows([{ delivery: overdue }, { delivery: later }, { delivery: abandoned }], [], -1000);
    await deliveries.recordAttempts([
      outcome(overdue.deliveryId, 1, { status: 'pending', nextAttemptAt: Date.now() - 60_000 }),
      outcome(later.deliveryId, 1, { status: 'pending', nextAttemptAt: Date.now() + 60_000 }),
    ]);
    const due = new Map<string, unknown>();
    for (let after = ''; ; ) {
      const page = await deliveries.findDue(after, 2000, 100);
      for (const d of page) due.set(d.id, d);
      if (page.length < 100) break;
      after = page[page.length - 1].id;
    }
    expect(due.get(overdue.deliveryId)).toEqual({ id: overdue.deliveryId, status: 'pending', attempts: 1 });
    expect(due.get(abandoned.deliveryId)).toEqual({ id: abandoned.deliveryId, status: 'delivering', attempts: 1 });
    expect(due.has(later.deliveryId)).toBe(false);
  });

  it('inserts claimed rows for the webhooks that still exist and records the events fanned out', async () => {
    const kept = await hook();
    const deleted = await hook();
    await db.query(`DELETE FROM webhooks WHERE id = $1`, [deleted]);
    const e = envelope();
    await publish(e);
    const rows = [newDelivery(deleted, e), newDelivery(kept, e)];
    const created = await deliveries.insertClaimed(rows, [e.id], 5000);
    expect(created).toEqual([rows[1].deliveryId]);
    expect(await log.findIdByPair(kept, e.id)).toBe(rows[1].deliveryId);
    expect(await log.findIdByPair(deleted, e.id)).toBeNull();
    expect(await events.findNotFannedOut({ lo: '0', hi: '9223372036854775807' }, e.id.slice(0, -1), 1000)).not.toContainEqual(expect.objectContaining({ id: e.id }));
    // the pair has its row: a second fan-out creates nothing
    expect(await deliveries.insertClaimed([newDelivery(kept, e)], [e.id], 5000)).toEqual([]);
  });

  it('hands many claimed attempts back in one statement, and makes an open breaker\'s parked ones due now when it closes', async () => {
    const webhookId = await hook();
    const [a, b, c, d] = [envelope(), envelope(), envelope(), envelope()];
    await publish(a, b, c, d);
    const [soon, parkedOpen, farRetry, gone] = [newDelivery(webhookId, a), newDelivery(webhookId, b), newDelivery(webhookId, c), newDelivery(webhookId, d)];
    await deliveries.insertFirstRows([soon, parkedOpen, farRetry, gone].map((delivery) => ({ delivery })), [a.id, b.id, c.id, d.id], 5000);
    const now = Date.now();
    const handedBack = await deliveries.postponeMany([
      { deliveryId: soon.deliveryId, attemptNo: 1, dueAt: now + 2_000 },
      { deliveryId: parkedOpen.deliveryId, attemptNo: 1, dueAt: now + 40_000 },
      { deliveryId: farRetry.deliveryId, attemptNo: 1, dueAt: now + 3_600_000 },
      // not held by attempt 2: left alone
      { deliveryId: gone.deliveryId, attemptNo: 2, dueAt: now + 2_000 },
    ]);
    expect([...handedBack].sort()).toEqual([soon.deliveryId, parkedOpen.deliveryId, farRetry.deliveryId].sort());
    const before = new Map((await log.listByWebhook(webhookId, {}, 10)).map((r) => [r.id, r]));
    expect(before.get(parkedOpen.deliveryId)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(before.get(gone.deliveryId)).toMatchObject({ status: 'delivering', attempts: 1 });
    // released within 60 s: the two due within it are due now, the one due in an hour keeps its time
    const released = await deliveries.dueNowOfWebhook(webhookId, 60_000);
    expect(released.map((r) => r.id).sort()).toEqual([soon.deliveryId, parkedOpen.deliveryId].sort());
    expect(released.every((r) => r.status === 'pending' && r.attempts === 0)).toBe(true);
    const after = new Map((await log.listByWebhook(webhookId, {}, 10)).map((r) => [r.id, r]));
    expect(after.get(parkedOpen.deliveryId)!.nextAttemptAt!.getTime()).toBeLessThan(now + 2_000);
    expect(Math.abs(after.get(farRetry.deliveryId)!.nextAttemptAt!.getTime() - (now + 3_600_000))).toBeLessThan(2);
    // nothing left to release
    expect(await deliveries.dueNowOfWebhook(webhookId, 60_000)).toEqual([]);
  });

  it('hands a claimed attempt back (pending, its number unused, due later or parked) and resumes parked rows', async () => {
    const webhookId = await hook();
    const [a, b] = [envelope(), envelope()];
    await publish(a, b);
    const later = newDelivery(webhookId, a);
    const parked = newDelivery(webhookId, b);
    await deliveries.insertFirstRows([{ delivery: later }, { delivery: parked }], [a.id, b.id], 5000);
    const due = Date.now() + 60_000;
    expect(await deliveries.postpone(later.deliveryId, 1, due)).toBe(true);
    // parked (no due time) while its webhook is switched off
    await db.query(`UPDATE webhooks SET active = false WHERE id = $1`, [webhookId]);
    expect(await deliveries.postpone(parked.deliveryId, 1, null)).toBe(true);
    await db.query(`UPDATE webhooks SET active = true WHERE id = $1`, [webhookId]);
    // no longer held by attempt 1: a second hand-back finds nothing
    expect(await deliveries.postpone(later.deliveryId, 1, due)).toBe(false);
    const byId = new Map((await log.listByWebhook(webhookId, {}, 10)).map((d) => [d.id, d]));
    expect(byId.get(later.deliveryId)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(Math.abs(byId.get(later.deliveryId)!.nextAttemptAt!.getTime() - due)).toBeLessThan(2);
    expect(byId.get(parked.deliveryId)).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: null });
    // a parked row is due for nothing until resumed; resuming makes every pending row due now (the handed-back one
    // too, whatever its due time), then the job of its attempt 1 claims it
    const resumed = await deliveries.resumeParked(webhookId);
    expect(resumed.expired).toBe(0);
    expect(resumed.due.map((d) => d.id).sort()).toEqual([later.deliveryId, parked.deliveryId].sort());
    const dueNow = new Map((await log.listByWebhook(webhookId, {}, 10)).map((d) => [d.id, d.nextAttemptAt!.getTime()]));
    expect(dueNow.get(later.deliveryId)!).toBeLessThan(due - 50_000);
    expect(dueNow.get(parked.deliveryId)!).toBeLessThan(due - 50_000);
    const [claimedAgain] = await deliveries.claim([{ deliveryId: parked.deliveryId, attemptNo: 1 }], 5000);
    expect(claimedAgain).toMatchObject({ kind: 'claimed', deliveryId: parked.deliveryId });
    await deliveries.ping();
  });

  it('writes parked rows (switched-off webhook) fresh and claimed, due now once the webhook is active again, and gives old parked rows up on re-enabling', async () => {
    const webhookId = await createWebhookRow(db, null, { organizationId: orgId, url: 'https://receiver.example/off', active: false });
    const [a, b, c] = [envelope(), envelope(), envelope()];
    await publish(a, b, c);
    const fresh = newDelivery(webhookId, a);
    const claimed = newDelivery(webhookId, b);
    await deliveries.insertFirstRows([{ delivery: fresh, parked: true }], [a.id], 5000);
    expect(await deliveries.insertClaimed([claimed], [b.id], 5000, new Set([claimed.deliveryId]))).toEqual([claimed.deliveryId]);
    for (const d of await log.listByWebhook(webhookId, {}, 10)) {
      expect(d).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: null, lastError: expect.stringContaining('parked') });
    }
    expect(await attempts.listOfDelivery(fresh.deliveryId)).toEqual([]);
    // the fresh one is old by now (a 1 ms bound): given up, dead and replayable; the claimed one too
    await db.query(`UPDATE webhooks SET active = true WHERE id = $1`, [webhookId]);
    const resumed = await deliveries.resumeParked(webhookId, 1);
    expect(resumed).toEqual({ due: [], expired: 2 });
    const gone = await log.listByWebhook(webhookId, {}, 10);
    expect(gone.map((d) => [d.status, d.lastError])).toEqual([
      ['dead', expect.stringContaining('parked for more than 0 s')],
      ['dead', expect.stringContaining('parked for more than 0 s')],
    ]);
    // a row parked by a dispatcher whose cache still said "off" after the webhook was re-enabled is due now
    const late = newDelivery(webhookId, c);
    await deliveries.insertFirstRows([{ delivery: late, parked: true }], [c.id], 5000);
    const [row] = (await log.listByWebhook(webhookId, {}, 10)).filter((d) => d.id === late.deliveryId);
    expect(row).toMatchObject({ status: 'pending', attempts: 0 });
    expect(row.nextAttemptAt).not.toBeNull();
  });

  it('makes due a parked row whose webhook is active (a fan-out that parked it raced the re-enabling), and leaves a disabled webhook\'s parked rows alone', async () => {
    // the race: the fan-out's statement began while the webhook was off and committed after resumeParked had run
    const racedHook = await createWebhookRow(db, null, { organizationId: orgId, url: 'https://receiver.example/raced', active: false });
    const offHook = await createWebhookRow(db, null, { organizationId: orgId, url: 'https://receiver.example/still-off', active: false });
    const [a, b] = [envelope(), envelope()];
    await publish(a, b);
    const raced = newDelivery(racedHook, a);
    const off = newDelivery(offHook, b);
    await deliveries.insertFirstRows([{ delivery: raced, parked: true }, { delivery: off, parked: true }], [a.id, b.id], 5000);
    await db.query(`UPDATE webhooks SET active = true WHERE id = $1`, [racedHook]);
    // younger than the grace: its statement may still be deciding (the database is shared with other files: only
    // this file's rows are looked at)
    await deliveries.unparkActive(60_000, 100);
    expect((await log.listByWebhook(racedHook, {}, 10))[0]).toMatchObject({ status: 'pending', nextAttemptAt: null });
    expect(await deliveries.unparkActive(0, 100)).toBeGreaterThanOrEqual(1);
    const [racedRow] = await log.listByWebhook(racedHook, {}, 10);
    expect(racedRow).toMatchObject({ status: 'pending', attempts: 0 });
    expect(racedRow.nextAttemptAt).not.toBeNull();
    expect((await deliveries.findDue('', -60_000, 1000)).map((d) => d.id)).toContain(raced.deliveryId);
    const [offRow] = await log.listByWebhook(offHook, {}, 10);
    expect(offRow).toMatchObject({ status: 'pending', nextAttemptAt: null });
  });

  it('writes an outcome rerun with the same attempt id once (a statement rerun after an outage whose first run committed)', async () => {
    const webhookId = await hook();
    const e = envelope();
    await publish(e);
    const d = newDelivery(webhookId, e);
    await deliveries.insertFirstRows([{ delivery: d }], [e.id], 5000);
    const ids = [newId('att')];
    await deliveries.recordAttempts([outcome(d.deliveryId, 1)], ids);
    await deliveries.recordAttempts([outcome(d.deliveryId, 1)], ids);
    expect(await attempts.listOfDelivery(d.deliveryId)).toHaveLength(1);
    expect((await log.findOfWebhook(webhookId, d.deliveryId))!.status).toBe('delivered');
  });
});
