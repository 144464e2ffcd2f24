import { PgLeaderLease } from './leader-lease';
import { LeadershipLostError } from './repositories/leader-leases.repository';

/** The lease table as one candidate sees it: what `take`, `renew` and `fenced` answer next. */
function setup() {
  let now = 1_000;
  const calls: string[] = [];
  const table = { takeTerm: 1 as number | null, renews: true, fenceHolds: true };
  const leases = {
    take: async () => (calls.push('take'), table.takeTerm),
    renew: async () => (calls.push('renew'), table.renews),
    resign: async (_n: string, _h: string, term: number) => void calls.push(`resign ${term}`),
    fenced: async <T>(_n: string, _h: string, term: number, _idle: number, work: (m: never) => Promise<T>) => {
      calls.push(`fenced ${term}`);
      if (!table.fenceHolds) throw new LeadershipLostError('fleet', term);
      return work(undefined as never);
    },
  };
  const lease = new PgLeaderLease(leases, { name: 'fleet', holder: 'gw-a', ttlMs: 3000 }, () => now);
  return { lease, calls, table, advance: (ms: number) => void (now += ms) };
}

describe('PgLeaderLease', () => {
  it('takes the lease once, then trusts it until a TTL after its last successful take, without asking PostgreSQL each look', async () => {
    const t = setup();
    expect(await t.lease.hold()).toBe(true);
    t.advance(2999);
    expect(await t.lease.hold()).toBe(true);
    expect(t.calls).toEqual(['take']);
    expect(t.lease.currentTerm()).toBe(1);
    await t.lease.release();
  });

  it('a process that could not renew for a TTL (a SIGSTOP) distrusts its lease before acting and competes again, losing to the new holder', async () => {
    const t = setup();
    await t.lease.hold();
    t.advance(3000);
    t.table.takeTerm = null;
    await expect(t.lease.fenced(async () => ['moved'])).rejects.toBeInstanceOf(LeadershipLostError);
    expect(await t.lease.hold()).toBe(false);
    expect(t.calls).toEqual(['take', 'take']);
    expect(t.lease.currentTerm()).toBeNull();
  });

  it('a move refused by PostgreSQL (the term ended) ends the leadership here too', async () => {
    const t = setup();
    await t.lease.hold();
    expect(await t.lease.fenced(async () => ['s1'])).toEqual(['s1']);
    t.table.fenceHolds = false;
    await expect(t.lease.fenced(async () => ['s2'])).rejects.toBeInstanceOf(LeadershipLostError);
    expect(t.lease.currentTerm()).toBeNull();
    t.table.takeTerm = 2;
    expect(await t.lease.hold()).toBe(true);
    expect(t.lease.currentTerm()).toBe(2);
    await t.lease.release();
    expect(t.calls.at(-1)).toBe('resign 2');
  });

  it('release resigns the term held and forgets it; without one it resigns nothing', async () => {
    const t = setup();
    await t.lease.release();
    expect(t.calls).toEqual([]);
    await t.lease.hold();
    await t.lease.release();
    expect(t.calls).toEqual(['take', 'resign 1']);
    expect(t.lease.currentTerm()).toBeNull();
  });
});
