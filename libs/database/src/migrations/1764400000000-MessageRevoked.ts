import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `member_acks` (a group message we sent): each member's furthest receipt, `{"<member jid>": "read"}`; the row's own
 * status is the step every member has reached (issue 19 item 12).
 *
 * A message deleted for everyone on the network ("delete for everyone", `message.revoked`) is marked, not removed:
 * `revoked_at` is when the gateway learned it. The row keeps its content; the log and the API show the mark.
 */
export class MessageRevoked1764400000000 implements MigrationInterface {
  name = 'MessageRevoked1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN revoked_at timestamptz`);
    await q.query(`ALTER TABLE messages ADD COLUMN member_acks jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN member_acks`);
    await q.query(`ALTER TABLE messages DROP COLUMN revoked_at`);
  }
}
