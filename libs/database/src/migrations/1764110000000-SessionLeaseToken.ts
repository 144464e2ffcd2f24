import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The fencing token of a session's lease (CONTRACT 11). Every lease acquisition increments it, and a gateway's
 * writes to the row are conditional on the token it took, so a holder that lost its lease (paused, partitioned)
 * cannot overwrite what the new holder wrote. It lives in PostgreSQL, not in the Redis lease, so it never goes
 * backwards when Redis restarts empty.
 */
export class SessionLeaseToken1764110000000 implements MigrationInterface {
  name = 'SessionLeaseToken1764110000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN lease_token bigint NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP COLUMN lease_token`);
  }
}
