import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The message log (CONTRACT 10): every message a session sent or received. PostgreSQL is the record of an outbound
 * message from the moment it is accepted (status `queued`, its waMessageId fixed); gateways drain a session's queued
 * rows in id order, so a lost Redis signal only delays a send.
 *
 * - `(session_id, wa_message_id)` is unique: an inbound message the network re-delivers is stored once, and an
 *   outbound id is never reused.
 * - `idempotency_key` is unique per session while set (the API clears keys older than 24 h before reusing one).
 * - `raw` is the engine's encoded content (Baileys: proto.Message bytes), kept for retry receipts, quotes and polls.
 * - `message_media` holds an outbound message's bytes until it is sent (inbound media stays on the network and
 *   is streamed on demand through `media_ref`).
 */
export class Messages1764000000000 implements MigrationInterface {
  name = 'Messages1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE messages (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        wa_message_id text NOT NULL,
        direction text NOT NULL CHECK (direction IN ('out', 'in')),
        chat_jid text NOT NULL,
        from_jid text,
        type text NOT NULL,
        text text,
        media jsonb,
        media_ref jsonb,
        location jsonb,
        contact jsonb,
        poll jsonb,
        reaction jsonb,
        quoted_message_id text,
        quoted_wa_message_id text,
        mentions text[] NOT NULL DEFAULT '{}',
        status text NOT NULL,
        error text,
        idempotency_key text,
        raw bytea,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz
      );
      CREATE UNIQUE INDEX messages_session_wa ON messages (session_id, wa_message_id);
      CREATE UNIQUE INDEX messages_idempotency ON messages (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX messages_session ON messages (session_id, id);
      CREATE INDEX messages_queued ON messages (session_id, id) WHERE status = 'queued';

      CREATE TABLE message_media (
        message_id text PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        data bytea NOT NULL
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE message_media; DROP TABLE messages;`);
  }
}
