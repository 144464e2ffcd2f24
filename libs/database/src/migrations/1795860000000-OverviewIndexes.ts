import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Overview's hourly figures (`GET /stats/overview`, docs/dashboard.md) read the last 24 h of an organization's
 * messages and deliveries: each a range scan of one index by (organization_id, created_at) instead of a scan of the
 * table. `messages_org_recent` leaves history syncs out (they are not traffic) and carries `direction`, so the count
 * reads the index alone; `deliveries_org_created` serves the delivery outcomes and latency.
 */
export class OverviewIndexes1795860000000 implements MigrationInterface {
  name = 'OverviewIndexes1795860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX messages_org_recent ON messages (organization_id, created_at) INCLUDE (direction) WHERE NOT from_history;
      CREATE INDEX deliveries_org_created ON deliveries (organization_id, created_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX messages_org_recent; DROP INDEX deliveries_org_created;`);
  }
}
