import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * In-flight deliveries carry a lease (status `delivering` until leased_until), so a dispatcher that
 * dies mid-POST is noticed and the attempt is made again. attempt_base counts the attempts made
 * before the current retry budget: a replay starts a fresh budget without renumbering attempts.
 * The indexes serve the delivery log, newest first (ids are ULIDs), optionally by status.
 */
export class DeliveryLease1763740800000 implements MigrationInterface {
  name = 'DeliveryLease1763740800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE deliveries ADD COLUMN leased_until timestamptz;
      ALTER TABLE deliveries ADD COLUMN attempt_base integer NOT NULL DEFAULT 0;
      CREATE INDEX deliveries_webhook_log ON deliveries (webhook_id, id DESC);
      CREATE INDEX deliveries_webhook_status_log ON deliveries (webhook_id, status, id DESC);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX deliveries_webhook_status_log;
      DROP INDEX deliveries_webhook_log;
      ALTER TABLE deliveries DROP COLUMN attempt_base;
      ALTER TABLE deliveries DROP COLUMN leased_until;
    `);
  }
}
