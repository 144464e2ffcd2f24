import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A webhook's health as the dispatchers see it (issue 23): `failing_since` is set by the first failure after a
 * success and cleared by a success, so "failing continuously for X" holds across dispatcher replicas and restarts;
 * `disabled_at` / `disabled_reason` record that the dispatchers switched the webhook off (`active` false) after
 * `WEBHOOK_DISABLE_AFTER_MS` of it; `rate_limit_per_second` is an optional cap on POSTs to the receiver.
 */
export class WebhookBreaker1764301551000 implements MigrationInterface {
  name = 'WebhookBreaker1764301551000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks
      ADD COLUMN failing_since timestamptz,
      ADD COLUMN disabled_at timestamptz,
      ADD COLUMN disabled_reason text,
      ADD COLUMN rate_limit_per_second integer CHECK (rate_limit_per_second > 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN failing_since, DROP COLUMN disabled_at, DROP COLUMN disabled_reason, DROP COLUMN rate_limit_per_second`);
  }
}
