import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A receipt that overtook the record of its send (the recipient's phone answered before `markSent` committed) is kept
 * on the row, not in the gateway's memory: `held_ack` (delivered / read / played, the highest seen) is applied once the
 * row is `sent`, by the same gateway right after, or by the next holder of the session after a crash.
 */
export class MessageHeldAck1764210000000 implements MigrationInterface {
  name = 'MessageHeldAck1764210000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN held_ack text CHECK (held_ack IN ('delivered', 'read', 'played'))`);
    // the few rows a session holder must look at when it takes over
    await q.query(`CREATE INDEX messages_held_acks ON messages (session_id) WHERE held_ack IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX messages_held_acks`);
    await q.query(`ALTER TABLE messages DROP COLUMN held_ack`);
  }
}
