import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fleet leadership becomes a lease with an expiry instead of a session advisory lock: a stopped, hung or cut-off
 * leader kept the lock (its connection stayed open) and with it every failover. One row per election: the holder, its
 * term (bumped by every takeover, so a resumed old leader's actions are refused) and when the lease expires, by
 * PostgreSQL's clock only.
 */
export class LeaderLeases1795670037000 implements MigrationInterface {
  name = 'LeaderLeases1795670037000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE leader_leases (
        name text PRIMARY KEY,
        holder text NOT NULL,
        term bigint NOT NULL,
        expires_at timestamptz NOT NULL
      )
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE leader_leases`);
  }
}
