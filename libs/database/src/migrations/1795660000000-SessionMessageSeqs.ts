import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session's message acceptance number moves out of its `sessions` row into a narrow row of its own. Every accept
 * bumped `sessions.message_seq`: a new version of a wide, much-read row per message, whose dead versions every index
 * read of the session walked until they were pruned — the foreign-key check of each message insert, the drain's read
 * of presenceTyping, the API's session reads. Measured with `npm run bench:round-trips` (docs/benchmarks/messages.md):
 * the foreign-key check of a bulk insert cost tens of times more per message than on a session row without that churn.
 * The number keeps its rule (taken under the counter row's lock, held until the accept commits: a visible number
 * means every lower one has committed); the counter row is created by a session's first accept.
 */
export class SessionMessageSeqs1795660000000 implements MigrationInterface {
  name = 'SessionMessageSeqs1795660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE session_message_seqs (
        session_id text PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        message_seq bigint NOT NULL
      );
      INSERT INTO session_message_seqs (session_id, message_seq) SELECT id, message_seq FROM sessions WHERE message_seq > 0;
      ALTER TABLE sessions DROP COLUMN message_seq;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE sessions ADD COLUMN message_seq bigint NOT NULL DEFAULT 0;
      UPDATE sessions s SET message_seq = c.message_seq FROM session_message_seqs c WHERE c.session_id = s.id;
      DROP TABLE session_message_seqs;
    `);
  }
}
