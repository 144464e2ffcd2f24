import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Chats (CONTRACT 12): one row per (session, chat jid), kept current from the network by the statement that stores
 * each message (ChatsRepository's fragment, composed by MessagesRepository) and by chat updates and history syncs.
 * `last_message_at` orders `GET …/chats` (most recent first); `last_message_id` points at the message log.
 *
 * `messages.from_history`: a message stored from a history sync on pairing (`fromHistory` on the Message view).
 * `sessions.sync_history`: the session setting `syncHistory` (`none`, `recent`, `full`).
 */
export class Chats1795638111850 implements MigrationInterface {
  name = 'Chats1795638111850';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE chats (
        session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        jid text NOT NULL,
        organization_id text NOT NULL,
        name text,
        is_group boolean NOT NULL DEFAULT false,
        unread_count integer NOT NULL DEFAULT 0,
        archived boolean NOT NULL DEFAULT false,
        pinned boolean NOT NULL DEFAULT false,
        muted_until timestamptz,
        last_message_id text,
        last_message_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, jid)
      )`);
    // GET …/chats: most recent first, keyset on (last_message_at, jid)
    await q.query(`CREATE INDEX chats_recent ON chats (session_id, last_message_at DESC NULLS LAST, jid DESC)`);
    await q.query(`ALTER TABLE messages ADD COLUMN from_history boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE sessions ADD COLUMN sync_history text NOT NULL DEFAULT 'none'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP COLUMN sync_history`);
    await q.query(`ALTER TABLE messages DROP COLUMN from_history`);
    await q.query(`DROP TABLE chats`);
  }
}
