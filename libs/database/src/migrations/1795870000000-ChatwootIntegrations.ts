import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Chatwoot integrations (issue 42, CONTRACT 16). The integration is a destination of kind `chatwoot` in the webhooks
 * table (url = Chatwoot's base URL, secret_encrypted = its API access token, target.chatwoot = account, inbox and
 * options), so inbound events reach Chatwoot through the dispatchers' fan-out, delivery log, retries and breaker.
 * At most one per session. Beside it, tables of its own:
 * - chatwoot_integrations: the per-integration secret Chatwoot's webhook calls carry (encrypted), the import state;
 * - chatwoot_conversations: the Chatwoot contact and conversation of each chat of the session;
 * - chatwoot_message_links: WhatsApp message id ↔ Chatwoot message id, so replies, edits, deletes, reactions and
 *   failures resolve, and a redelivered event does not post twice.
 */
export class ChatwootIntegrations1795870000000 implements MigrationInterface {
  name = 'ChatwootIntegrations1795870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT IF EXISTS webhooks_kind_check`);
    await q.query(`ALTER TABLE webhooks ADD CONSTRAINT webhooks_kind_check CHECK (kind IN ('http', 'amqp', 'nats', 'chatwoot'))`);
    await q.query(`CREATE UNIQUE INDEX webhooks_one_chatwoot_per_session ON webhooks (session_id) WHERE kind = 'chatwoot'`);
    await q.query(`CREATE TABLE chatwoot_integrations (
      webhook_id text PRIMARY KEY REFERENCES webhooks(id) ON DELETE CASCADE,
      inbound_secret_encrypted text NOT NULL,
      import_state text NOT NULL DEFAULT 'none' CHECK (import_state IN ('none', 'pending', 'importing', 'imported')),
      imported_messages integer NOT NULL DEFAULT 0,
      import_beat timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE TABLE chatwoot_conversations (
      integration_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
      chat_jid text NOT NULL,
      contact_id bigint NOT NULL,
      conversation_id bigint NOT NULL,
      source_id text NOT NULL,
      contact_name text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (integration_id, chat_jid))`);
    await q.query(`CREATE TABLE chatwoot_message_links (
      integration_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
      link_key text NOT NULL,
      wa_message_id text,
      message_id text,
      chatwoot_message_id bigint NOT NULL,
      conversation_id bigint NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (integration_id, link_key))`);
    await q.query(`CREATE INDEX chatwoot_message_links_by_chatwoot ON chatwoot_message_links (integration_id, chatwoot_message_id)`);
    await q.query(`CREATE INDEX chatwoot_message_links_by_wa ON chatwoot_message_links (integration_id, wa_message_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE chatwoot_message_links`);
    await q.query(`DROP TABLE chatwoot_conversations`);
    await q.query(`DROP TABLE chatwoot_integrations`);
    await q.query(`DELETE FROM webhooks WHERE kind = 'chatwoot'`);
    await q.query(`DROP INDEX webhooks_one_chatwoot_per_session`);
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_kind_check`);
    await q.query(`ALTER TABLE webhooks ADD CONSTRAINT webhooks_kind_check CHECK (kind IN ('http', 'amqp', 'nats'))`);
  }
}
