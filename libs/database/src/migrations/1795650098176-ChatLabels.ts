import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The WhatsApp Business labels a chat carries (CONTRACT 13), as label ids: kept by the gateway from the network's
 * label associations (`label.update` assigned / unassigned; a deleted label leaves every chat), shown on `GET …/chats`.
 * The labels themselves (name, color) stay on the account: `GET …/labels` asks it.
 */
export class ChatLabels1795650098176 implements MigrationInterface {
  name = 'ChatLabels1795650098176';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chats ADD COLUMN labels text[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE chats DROP COLUMN labels');
  }
}
