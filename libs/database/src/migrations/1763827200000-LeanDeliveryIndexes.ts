import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery log is read by (webhook_id, id DESC) — ids are ULIDs, so that is creation order — and a status filter
 * is applied on that range. Two more indexes cost every fan-out insert and every status update on the hot path
 * without serving a query the others do not: deliveries_webhook duplicates deliveries_webhook_log, and
 * deliveries_webhook_status_log turns each status change into one more index write.
 */
export class LeanDeliveryIndexes1763827200000 implements MigrationInterface {
  name = 'LeanDeliveryIndexes1763827200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX IF EXISTS deliveries_webhook;
      DROP INDEX IF EXISTS deliveries_webhook_status_log;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX deliveries_webhook_status_log ON deliveries (webhook_id, status, id DESC);
      CREATE INDEX deliveries_webhook ON deliveries (webhook_id, created_at DESC, id);
    `);
  }
}
