import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `contacts` (CONTRACT 12): what a session knows of the accounts it talks to, kept current from the network (push names
 * on inbound messages, the engine's contact and blocklist updates, the answers of check, block and profile lookups).
 * One row per (session, jid); `jid` is `<digits>@s.whatsapp.net` when the number is known, the LID otherwise. Bounded
 * per session by ContactsRepository (docs/decisions.md).
 */
export class Contacts1795638066197 implements MigrationInterface {
  name = 'Contacts1795638066197';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE contacts (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        jid text NOT NULL,
        lid text,
        phone_number text,
        name text,
        push_name text,
        is_business boolean NOT NULL DEFAULT false,
        blocked boolean NOT NULL DEFAULT false,
        about text,
        picture_url text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (session_id, jid)
      )`);
    await q.query(`CREATE INDEX contacts_session_lid ON contacts (session_id, lid) WHERE lid IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE contacts`);
  }
}
