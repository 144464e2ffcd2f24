import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A message deleted for everyone on the network ("delete for everyone", `message.revoked`) is marked, not removed:
 * `revoked_at` is when the gateway learned it. The row keeps its content; the log and the API show the mark.
 */
export class MessageRevoked1764400000000 implements MigrationInterface {
  name = 'MessageRevoked1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN revoked_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN revoked_at`);
  }
}
