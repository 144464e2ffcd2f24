import type { AttemptRecord, FirstRow } from '@app/database';
import type { EventRows } from './event-rows';
import { DeliveryLog, DeliveryStore } from './delivery-store';
import { LogHealth } from './log-health';

const outcome = (deliveryId: string): AttemptRecord => ({
  deliveryId,
  attemptNo: 2,
  status: 'delivered',
  statusCode: 200,
  error: null,
  snippet: null,
  durationMs: 3,
  startedAt: 1,
  nextAttemptAt: null,
});

/** PostgreSQL as the store sees it: statements that the test makes fail, by row or for an outage. */
function fakeLog(fails: (ids: string[]) => Error | null) {
  const written: string[][] = [];
  const log = {
    recordAttempts: jest.fn(async (items: AttemptRecord[]) => {
      const ids = items.map((i) => i.deliveryId);
      const err = fails(ids);
      if (err) throw err;
      written.push(ids);
    }),
    insertFirstRows: jest.fn(async (_rows: FirstRow[], _fannedOut: string[], _leaseMs: number) => new Set<string>()),
    claim: jest.fn(),
    renewLeases: jest.fn(),
    abandon: jest.fn(),
    postponeMany: jest.fn(),
  };
  return { log: log as unknown as DeliveryLog, written, calls: log.recordAttempts, inserts: log.insertFirstRows };
}

const fkViolation = () => Object.assign(new Error('insert or update on table "delivery_attempts" violates foreign key constraint'), { code: '23503' });
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** An event waiting for `rows` rows, as its tracker counts them. */
function pendingEvent(eventId: string, rows: number) {
  let left = rows;
  const event: EventRows = { eventId, completedBy: (n) => n === left, written: (n) => void (left -= n), fail: () => undefined };
  return event;
}

const newDelivery = (n: number, eventId: string) => ({ deliveryId: `dlv_${n}`, webhookId: 'whk_1', eventId, organizationId: 'org_1', eventType: 'message.received' });

describe('DeliveryStore', () => {
  it('inserts a fan-out\'s rows claimed in one statement with the events they complete, false for a pair that had a row', async () => {
    const { log, inserts } = fakeLog(() => null);
    inserts.mockImplementation(async () => new Set(['dlv_3']));
    const store = new DeliveryStore(log, 5000, new LogHealth(async () => undefined));
    const [a, b] = [pendingEvent('evt_a', 2), pendingEvent('evt_b', 2)];
    const created = Promise.all([store.insertClaimed(newDelivery(1, 'evt_a'), a), store.insertClaimed(newDelivery(2, 'evt_a'), a), store.insertClaimed(newDelivery(3, 'evt_b'), b)]);
    store.flushSoon();
    expect(await created).toEqual([true, true, false]);
    expect(inserts).toHaveBeenCalledTimes(1);
    const [rows, fannedOut, leaseMs] = inserts.mock.calls[0];
    expect(rows.map((r) => [r.delivery.deliveryId, !!r.parked])).toEqual([['dlv_1', false], ['dlv_2', false], ['dlv_3', false]]);
    // evt_a's rows are all in this statement: it is marked fanned out there; evt_b waits for another row
    expect(fannedOut).toEqual(['evt_a']);
    expect(leaseMs).toBe(5000);
  });

  it('reports a row of a failed batch that still fails alone as not recorded, and records the others', async () => {
    // the batch fails because of one row (its delivery was deleted meanwhile); alone, that row fails again
    const { log, written } = fakeLog((ids) => (ids.includes('dlv_gone') ? fkViolation() : null));
    const store = new DeliveryStore(log, 5000, new LogHealth(async () => undefined));
    const results = await Promise.allSettled([store.record(outcome('dlv_a')), store.record(outcome('dlv_gone')), store.record(outcome('dlv_b'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23503' });
    expect(written).toEqual([['dlv_a'], ['dlv_b']]);
  });

  it('holds a statement through a PostgreSQL outage: the log is marked down, probed, and the rows written once it answers', async () => {
    let up = false;
    const { log, written, calls } = fakeLog(() => (up ? null : refused()));
    let probes = 0;
    const health = new LogHealth(async () => {
      probes++;
      if (!up) throw refused();
    }, 10);
    const states: boolean[] = [];
    health.onChange((w) => states.push(w));
    const store = new DeliveryStore(log, 5000, health, 10_000);
    const recorded = store.record(outcome('dlv_a'));
    await new Promise<void>((resolve) => health.onChange((w) => !w && resolve()));
    expect(health.writable).toBe(false);
    // still down: the probe keeps failing, nothing is reported recorded
    while (probes < 3) await new Promise((r) => setTimeout(r, 5));
    expect(written).toEqual([]);
    up = true;
    await recorded;
    expect(written).toEqual([['dlv_a']]);
    expect(states).toEqual([false, true]);
    expect(calls).toHaveBeenCalledTimes(2);
  });

  it('reports the rows failed once an outage outlasts the hold', async () => {
    const { log, written } = fakeLog(() => refused());
    const health = new LogHealth(async () => Promise.reject(refused()), 5);
    const store = new DeliveryStore(log, 5000, health, 40);
    await expect(store.record(outcome('dlv_a'))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(written).toEqual([]);
    expect(health.writable).toBe(false);
    health.stop();
  });
});
