import { performance } from 'node:perf_hooks';
import type { Tx } from './pg';
import { LeadershipLostError, LeaderLeasesRepository } from './repositories/leader-leases.repository';

export interface PgLeaderLeaseSettings {
  /** the election (one fleet per name) */
  name: string;
  /** this candidate (the gateway id) */
  holder: string;
  /** how long a lease runs unless renewed: a stopped, hung or cut-off leader loses the leadership after it */
  ttlMs: number;
}

/**
 * Leadership as a lease in PostgreSQL (`LeaderLeasesRepository`) with an expiry and a term, so it belongs to a live,
 * working process only: the leader renews it every third of its TTL in the background, and a leader that cannot (a
 * SIGSTOP, a hung event loop, a partition, PostgreSQL unreachable) loses it when it expires; another candidate's next
 * `hold` takes it with a new term. Each action runs `fenced` by the term, so a resumed old leader's first action is
 * refused (LeadershipLostError) and it steps down. Its own view expires first: validity is counted on the monotonic
 * clock from the *start* of the last successful take or renewal, before PostgreSQL's own expiry. It never touches
 * Redis, so a Redis restart does not elect a second leader.
 */
export class PgLeaderLease {
  private term: number | null = null;
  /** monotonic ms until which this process trusts its lease */
  private validUntil = 0;
  private renewer: NodeJS.Timeout | null = null;

  constructor(
    private readonly leases: Pick<LeaderLeasesRepository, 'take' | 'renew' | 'resign' | 'fenced'>,
    private readonly settings: PgLeaderLeaseSettings,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** True while this process holds an unexpired lease (taking it when free or expired); false otherwise. */
  async hold(): Promise<boolean> {
    if (this.term !== null) {
      if (this.clock() < this.validUntil) return true;
      this.lose();
    }
    const { name, holder, ttlMs } = this.settings;
    const startedAt = this.clock();
    const term = await this.leases.take(name, holder, ttlMs).catch(() => null);
    if (term === null) return false;
    this.term = term;
    this.validUntil = startedAt + ttlMs;
    this.renewer = setInterval(() => void this.renew(term), Math.max(1, Math.floor(ttlMs / 3)));
    this.renewer.unref();
    return true;
  }

  /** The term held now (null: none). */
  currentTerm(): number | null {
    return this.term;
  }

  /** Runs a leader's action only while the term is held, and so that no new term begins before it commits. */
  async fenced<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const term = this.term;
    const { name, holder, ttlMs } = this.settings;
    if (term === null || this.clock() >= this.validUntil) {
      this.lose();
      throw new LeadershipLostError(name, term ?? 0);
    }
    try {
      return await this.leases.fenced(name, holder, term, ttlMs, work);
    } catch (err) {
      if (err instanceof LeadershipLostError && this.term === term) this.lose();
      throw err;
    }
  }

  /** Gives the lease up at once (a draining or stopping leader), so another candidate takes it at its next try. */
  async release(): Promise<void> {
    const term = this.term;
    this.lose();
    if (term !== null) await this.leases.resign(this.settings.name, this.settings.holder, term).catch(() => undefined);
  }

  private async renew(term: number): Promise<void> {
    const { name, holder, ttlMs } = this.settings;
    const startedAt = this.clock();
    const renewed = await this.leases.renew(name, holder, ttlMs, term).catch(() => null);
    if (this.term !== term) return;
    if (renewed === true) this.validUntil = Math.max(this.validUntil, startedAt + ttlMs);
    // expired or taken over: lost for good (an error keeps trying until the lease runs out in this process's view)
    else if (renewed === false) this.lose();
  }

  private lose(): void {
    if (this.renewer) clearInterval(this.renewer);
    this.renewer = null;
    this.term = null;
    this.validUntil = 0;
  }
}
