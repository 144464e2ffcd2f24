import type { DataSource } from 'typeorm';
import { LeadershipLostError, LeaderLeasesRepository, newId } from '@app/database';
import { waitFor } from '../support/processes';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';

describe('LeaderLeasesRepository (PostgreSQL)', () => {
  let db: DataSource;
  let leases: LeaderLeasesRepository;
  /** an election of its own per case: the run's database is shared */
  const election = () => `election-${newId('evt')}`;
  const written = async (marker: string) => Number((await db.query(`SELECT count(*) AS n FROM leader_leases WHERE name = $1`, [marker]))[0].n);

  beforeAll(async () => {
    db = await testDataSource();
    leases = new LeaderLeasesRepository(await testDb());
  });
  afterAll(() => closeTestDataSource());

  it('one holder at a time; an expired lease is taken with a new term, and the old term can neither renew nor act', async () => {
    const name = election();
    expect(await leases.take(name, 'gw-a', 60_000)).toBe(1);
    expect(await leases.take(name, 'gw-b', 60_000)).toBeNull();
    // a holder asking again while its lease runs is not a new term either: it renews
    expect(await leases.take(name, 'gw-a', 60_000)).toBeNull();
    expect(await leases.renew(name, 'gw-a', 300, 1)).toBe(true);
    expect(await leases.renew(name, 'gw-b', 300, 1)).toBe(false);

    // gw-a stops renewing (a SIGSTOP): its 300 ms lease lapses and gw-b takes it
    const term = await waitFor(() => leases.take(name, 'gw-b', 60_000), 10_000, 'gw-b to take the lapsed lease');
    expect(term).toBe(2);
    expect(await leases.renew(name, 'gw-a', 60_000, 1)).toBe(false);
    const marker = election();
    await expect(leases.fenced(name, 'gw-a', 1, 5000, (tx) => tx.query(`INSERT INTO leader_leases VALUES ($1, 'x', 0, now())`, [marker]))).rejects.toBeInstanceOf(
      LeadershipLostError,
    );
    expect(await written(marker)).toBe(0);
    await leases.fenced(name, 'gw-b', 2, 5000, (tx) => tx.query(`INSERT INTO leader_leases VALUES ($1, 'x', 0, now())`, [marker]));
    expect(await written(marker)).toBe(1);

    // a resignation frees it at once
    await leases.resign(name, 'gw-b', 2);
    expect(await leases.take(name, 'gw-a', 60_000)).toBe(3);
  });

  it('no takeover while an action of the current term is in flight, even past the expiry; the holder still renews meanwhile', async () => {
    const name = election();
    expect(await leases.take(name, 'gw-a', 300)).toBe(1);
    let finish!: () => void;
    const acting = leases.fenced(name, 'gw-a', 1, 60_000, async (tx) => {
      await tx.query('SELECT 1');
      await new Promise<void>((resolve) => (finish = resolve));
    });
    await waitFor(() => finish !== undefined, 5000, 'the action to start');
    // renewals are not blocked by the action's lock
    expect(await leases.renew(name, 'gw-a', 300, 1)).toBe(true);
    const lapsed = async () => Number((await db.query(`SELECT count(*) AS n FROM leader_leases WHERE name = $1 AND expires_at <= clock_timestamp()`, [name]))[0].n) === 1;
    await waitFor(lapsed, 10_000, 'the lease to lapse');
    expect(await leases.take(name, 'gw-b', 60_000)).toBeNull();
    finish();
    await acting;
    expect(await leases.take(name, 'gw-b', 60_000)).toBe(2);
  });

  it('an action left idle by a stopped leader is ended by PostgreSQL after idleMs, and the lease can be taken over', async () => {
    const name = election();
    expect(await leases.take(name, 'gw-a', 200)).toBe(1);
    let resume!: () => void;
    const stopped = leases.fenced(name, 'gw-a', 1, 500, async (tx) => {
      await new Promise<void>((resolve) => (resume = resolve));
      await tx.query('SELECT 1');
    });
    const outcome = stopped.then(
      () => 'committed',
      () => 'refused',
    );
    await waitFor(() => resume !== undefined, 5000, 'the action to start');
    expect(await waitFor(() => leases.take(name, 'gw-b', 60_000), 10_000, 'gw-b to take the lease once the idle action is ended')).toBe(2);
    // the resumed leader's action fails: its transaction is gone
    resume();
    expect(await outcome).toBe('refused');
  });
});
