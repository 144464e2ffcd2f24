import type { EventEnvelope } from '@app/contracts';
import { DeliveriesRepository, EventsRepository, newId, OutboxRows } from '@app/database';
import { closeTestDataSource, seedOrganization, testDb } from '../support/seed';

/** The outbox, its fan-out records and the reconciler's checkpoint against real PostgreSQL. */
describe('EventsRepository', () => {
  let events: EventsRepository;
  let orgId: string;
  const everything = { lo: '0', hi: '9223372036854775807' };

  const envelope = (): EventEnvelope => ({ id: newId('evt'), event: 'message.received', organizationId: orgId, sessionId: null, timestamp: Date.now(), payload: { text: 'say "hi", {ünïcödé}' } });

  beforeAll(async () => {
    events = new EventsRepository(await testDb());
    orgId = (await seedOrganization('Outbox')).id;
  });

  afterAll(() => closeTestDataSource());

  it('stores each envelope once, as published, and lists the events no fan-out recorded', async () => {
    const [a, b] = [envelope(), envelope()];
    await events.insertOutbox(new OutboxRows([a, b], [a, b].map((e) => JSON.stringify(e))));
    await events.insertOutbox(new OutboxRows([a], [JSON.stringify(a)]));
    const before = a.id < b.id ? a.id : b.id;
    const listed = (await events.findNotFannedOut(everything, before.slice(0, -1), 10_000)).filter((e) => e.id === a.id || e.id === b.id);
    expect(listed.map((e) => e.envelope).sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual([a, b].sort((x, y) => (x.id < y.id ? -1 : 1)));

    // a fan-out statement names `a`: it is no longer a straggler
    await new DeliveriesRepository(await testDb()).insertClaimed([], [a.id], 5000);
    const after = (await events.findNotFannedOut(everything, before.slice(0, -1), 10_000)).map((e) => e.id);
    expect(after).not.toContain(a.id);
    expect(after).toContain(b.id);
  });

  it('leaves events younger than the grace to the stream', async () => {
    const name = `spec-${newId('evt')}`;
    const young = envelope();
    await events.insertOutbox(new OutboxRows([young], [JSON.stringify(young)]));
    // no checkpoint row yet: it is created (at 0) and the pass does nothing
    expect(await events.outboxWindow(name, 3_600_000)).toBeNull();
    const window = (await events.outboxWindow(name, 3_600_000))!;
    expect(window.lo).toBe('0');
    const listed = await events.findNotFannedOut(window, '', 10_000);
    expect(listed.map((e) => e.id)).not.toContain(young.id);
  });

  it('moves a checkpoint up, never down', async () => {
    const name = `spec-${newId('evt')}`;
    await events.outboxWindow(name, 0);
    await events.advanceCheckpoint(name, '1');
    await events.advanceCheckpoint(name, '0');
    expect((await events.outboxWindow(name, 3_600_000))!.lo).toBe('1');
  });
});
