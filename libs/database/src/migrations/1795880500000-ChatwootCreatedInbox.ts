import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A Chatwoot integration connected without `inboxId` (CONTRACT 16: it is optional): the dispatcher creates an
 * API-channel inbox whose webhook is the integration's URL and stores its id here (`inbox_id`). The API writes what
 * the creation needs: the inbox's name (after the session) and the webhook URL, encrypted as it carries the
 * integration's secret. And receipts (`message.ack`) reach every integration: the agents' messages get their ticks.
 */
export class ChatwootCreatedInbox1795880500000 implements MigrationInterface {
  name = 'ChatwootCreatedInbox1795880500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chatwoot_integrations ADD COLUMN inbox_id bigint, ADD COLUMN inbox_name text, ADD COLUMN inbox_webhook_url_encrypted text`);
    await q.query(`UPDATE webhooks SET events = array_append(events, 'message.ack') WHERE kind = 'chatwoot' AND NOT ('message.ack' = ANY(events))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE webhooks SET events = array_remove(events, 'message.ack') WHERE kind = 'chatwoot'`);
    await q.query(`ALTER TABLE chatwoot_integrations DROP COLUMN inbox_id, DROP COLUMN inbox_name, DROP COLUMN inbox_webhook_url_encrypted`);
  }
}
