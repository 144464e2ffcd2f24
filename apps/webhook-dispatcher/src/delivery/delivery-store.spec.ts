import type { AttemptRecord } from '@app/database';
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
    insertFirstRows: jest.fn(async () => new Set<string>()),
    claim: jest.fn(),
    renewLeases: jest.fn(),
    abandon: jest.fn(),
    postponeMany: jest.fn(),
  };
  return { log: log as unknown as DeliveryLog, written, calls: log.recordAttempts };
}

const fkViolation = () => Object.assign(new Error('insert or update on table "delivery_attempts" violates foreign key constraint'), { code: '23503' });
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('DeliveryStore', () => {
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
