import { Injectable } from '@nestjs/common';
import { Db, type Tx } from '../pg';

/** A leader acted on a term it no longer holds (expired, or taken over): nothing of the action was written. */
export class LeadershipLostError extends Error {
  constructor(
    readonly name: string,
    readonly term: number,
  ) {
    super(`leadership of ${name} (term ${term}) is lost`);
  }
}

/** `clock_timestamp() + ttl`: every expiry is PostgreSQL's clock, so the candidates' clocks never disagree about it. */
const EXPIRY = `clock_timestamp() + $3 * interval '1 millisecond'`;

/**
 * `leader_leases`: one row per election (migration LeaderLeases), the lease of its leader: `holder`, `term` (bumped by
 * every takeover) and `expires_at`. A lease is taken when the row is new or expired, renewed only by its holder in its
 * term before it expires, and every leader action runs in `fenced`, which checks the term is still the holder's and
 * keeps anyone from taking the lease over until the action commits.
 *
 * Locks: `fenced` holds FOR KEY SHARE on the row, which a renewal (a plain update of non-key columns) does not wait
 * for, and which a takeover (FOR UPDATE SKIP LOCKED) skips; so a takeover never lands in the middle of an action of
 * the old term, and the old leader's renewals never queue behind its own actions.
 */
@Injectable()
export class LeaderLeasesRepository {
  constructor(private readonly db: Db) {}

  /** Takes the lease when it is free or expired (a new term): the term, or null while another holder's lease runs. */
  async take(name: string, holder: string, ttlMs: number): Promise<number | null> {
    const rows = await this.db.query<{ term: string }>(
      `WITH fresh AS (
         INSERT INTO leader_leases (name, holder, term, expires_at) VALUES ($1, $2, 1, ${EXPIRY})
         ON CONFLICT (name) DO NOTHING
         RETURNING term
       ),
       lapsed AS (
         SELECT name FROM leader_leases WHERE name = $1 AND expires_at <= clock_timestamp() FOR UPDATE SKIP LOCKED
       ),
       taken AS (
         UPDATE leader_leases l SET holder = $2, term = l.term + 1, expires_at = ${EXPIRY}
         FROM lapsed WHERE l.name = lapsed.name
         RETURNING l.term
       )
       SELECT term FROM fresh UNION ALL SELECT term FROM taken`,
      [name, holder, ttlMs],
    );
    return rows[0] ? Number(rows[0].term) : null;
  }

  /** Extends the holder's lease of `term` by `ttlMs` from now; false when it has expired or another term began. */
  async renew(name: string, holder: string, ttlMs: number, term: number): Promise<boolean> {
    const rows = await this.db.query<unknown>(
      `UPDATE leader_leases SET expires_at = ${EXPIRY}
       WHERE name = $1 AND holder = $2 AND term = $4 AND expires_at > clock_timestamp()
       RETURNING name`,
      [name, holder, ttlMs, term],
    );
    return rows.length > 0;
  }

  /** Ends the holder's lease of `term` now, so another candidate takes it at its next try. */
  async resign(name: string, holder: string, term: number): Promise<void> {
    await this.db.query(`UPDATE leader_leases SET expires_at = clock_timestamp() WHERE name = $1 AND holder = $2 AND term = $3 AND expires_at > clock_timestamp()`, [
      name,
      holder,
      term,
    ]);
  }

  /**
   * Runs `work` in a transaction that first checks the lease of `term` is the holder's and unexpired (else
   * LeadershipLostError, nothing written) and holds the row until the commit, so no takeover commits meanwhile. The
   * transaction may sit idle for `idleMs` at most (PostgreSQL ends it then): a leader stopped in the middle of an
   * action cannot hold the row, and so the leadership, any longer than that.
   */
  async fenced<T>(name: string, holder: string, term: number, idleMs: number, work: (manager: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      // the timeout is set in the same statement that checks and locks the row (no row: nothing to set, and we throw)
      const rows = await tx.query<unknown>(
        `SELECT set_config('idle_in_transaction_session_timeout', $4, true) FROM leader_leases
         WHERE name = $1 AND holder = $2 AND term = $3 AND expires_at > clock_timestamp()
         FOR KEY SHARE`,
        [name, holder, term, String(Math.max(1, Math.round(idleMs)))],
      );
      if (rows.length === 0) throw new LeadershipLostError(name, term);
      return work(tx);
    });
  }
}
