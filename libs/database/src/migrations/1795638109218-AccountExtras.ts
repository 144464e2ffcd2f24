import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * CONTRACT 13 (labels, status, channels):
 * - `sessions.receive_status`: contacts' statuses (stories) are announced as `status.received`; off by default.
 * - `status_posts`: how a status post (a send to status@broadcast, a row of `messages`) goes out: its audience and
 *   background. Written before the message row it describes (same id), read by the gateway when it sends it. No
 *   foreign key to `messages`: the row is written first, and a message that was never inserted (an idempotent repeat
 *   that lost the race) leaves a row nobody reads; it goes with its session.
 */
export class AccountExtras1795638109218 implements MigrationInterface {
  name = 'AccountExtras1795638109218';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN receive_status boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE TABLE status_posts (
      message_id text PRIMARY KEY,
      session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      audience text[] NOT NULL,
      background_color text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE INDEX status_posts_session ON status_posts (session_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE status_posts`);
    await q.query(`ALTER TABLE sessions DROP COLUMN receive_status`);
  }
}
