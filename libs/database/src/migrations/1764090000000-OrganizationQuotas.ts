import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-organization quota overrides (admin CLI `org:quota`). NULL means the deployment's default (QUOTA_* config),
 * so changing a default reaches every organization that was never given its own figure.
 */
export class OrganizationQuotas1764090000000 implements MigrationInterface {
  name = 'OrganizationQuotas1764090000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE organizations
        ADD COLUMN quota_sessions integer CHECK (quota_sessions >= 0),
        ADD COLUMN quota_webhooks integer CHECK (quota_webhooks >= 0),
        ADD COLUMN quota_api_keys integer CHECK (quota_api_keys >= 0);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE organizations DROP COLUMN quota_sessions, DROP COLUMN quota_webhooks, DROP COLUMN quota_api_keys;`);
  }
}
