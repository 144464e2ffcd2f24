import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why the session is in its status (the `reason` of its last `session.status` event, e.g.
 * `connect_failed: getaddrinfo ENOTFOUND web.whatsapp.com`), kept on the row so the API can say it in a 409 long
 * after the event went by; the gateway holding the session writes it with every status it records.
 */
export class SessionLastReason1764120000000 implements MigrationInterface {
  name = 'SessionLastReason1764120000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions ADD COLUMN last_reason text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions DROP COLUMN last_reason');
  }
}
