import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session's sends go out in the order they were accepted. A ULID minted before its insert commits does not give
 * that order when several API requests race (a later id can commit first and be sent before an earlier one
 * exists), so every accepted outbound message takes the next `sessions.message_seq` inside its insert's
 * transaction: the session row's lock is held until that commit, so sequence order is commit order, and a visible
 * `seq` means every lower one has committed. The gateway drains by `(seq, id)`.
 */
export class MessageOrder1764100000000 implements MigrationInterface {
  name = 'MessageOrder1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE sessions ADD COLUMN message_seq bigint NOT NULL DEFAULT 0;
      ALTER TABLE messages ADD COLUMN seq bigint;
      UPDATE messages SET seq = 0 WHERE status = 'queued';
      DROP INDEX IF EXISTS messages_queued;
      CREATE INDEX messages_queued ON messages (session_id, seq, id) WHERE status = 'queued';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX IF EXISTS messages_queued;
      CREATE INDEX messages_queued ON messages (session_id, id) WHERE status = 'queued';
      ALTER TABLE messages DROP COLUMN seq;
      ALTER TABLE sessions DROP COLUMN message_seq;
    `);
  }
}
