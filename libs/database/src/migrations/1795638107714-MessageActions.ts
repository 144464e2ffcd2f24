import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * CONTRACT 12's message actions and send types:
 * - `messages.send_options`: what a queued outbound message needs besides its Message fields (MessageSendOptions:
 *   the message a forward copies, the poll a vote is for, a text's link preview); null for every other message.
 * - `sessions.reject_calls`: the session rejects incoming calls (`call.incoming` still fires, `rejected: true`).
 */
export class MessageActions1795638107714 implements MigrationInterface {
  name = 'MessageActions1795638107714';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN send_options jsonb`);
    await q.query(`ALTER TABLE sessions ADD COLUMN reject_calls boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP COLUMN reject_calls`);
    await q.query(`ALTER TABLE messages DROP COLUMN send_options`);
  }
}
