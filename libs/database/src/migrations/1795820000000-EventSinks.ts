import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Event sinks (issue 41, CONTRACT 15): a RabbitMQ exchange or a NATS JetStream subject is a destination beside
 * webhooks, in the same table, so the delivery log (`deliveries.webhook_id`), the breaker columns, the quota and the
 * dispatchers' cache serve every kind. `kind` says how a delivery is made; `target` holds the broker-side address
 * (exchange and routing key, or subject). A sink's `url` is stored without its password, which is kept in
 * `secret_encrypted` (AES-256-GCM, libs/crypto) as a webhook's HMAC secret is.
 */
export class EventSinks1795820000000 implements MigrationInterface {
  name = 'EventSinks1795820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks
      ADD COLUMN kind text NOT NULL DEFAULT 'http' CHECK (kind IN ('http', 'amqp', 'nats')),
      ADD COLUMN target jsonb NOT NULL DEFAULT '{}'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM webhooks WHERE kind <> 'http'`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN kind, DROP COLUMN target`);
  }
}
