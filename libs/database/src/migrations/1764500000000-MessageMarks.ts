import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a conversation shows on a message besides its content (the dashboard's inbox, `GET …/messages`):
 * `edited_at` (the last edit, from the network or the API), `reactions` (`[{from, emoji}]`, one per reactor, the
 * latest; a removed reaction is dropped) and `poll_votes` (`[{voter, options}]` on a poll, each voter's latest vote).
 * Nullable: most messages have none of them, and an absent value costs nothing on the insert path.
 */
export class MessageMarks1764500000000 implements MigrationInterface {
  name = 'MessageMarks1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN IF NOT EXISTS edited_at timestamptz`);
    await q.query(`ALTER TABLE messages ADD COLUMN reactions jsonb`);
    await q.query(`ALTER TABLE messages ADD COLUMN poll_votes jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN poll_votes`);
    await q.query(`ALTER TABLE messages DROP COLUMN reactions`);
    await q.query(`ALTER TABLE messages DROP COLUMN edited_at`);
  }
}
