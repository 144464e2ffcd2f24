import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What group administration (CONTRACT 13) keeps of a group beyond seed 2.2: who its admins and super admins are (in
 * the form of `members`, so the API answers `participantList` from the row when it need not ask the network), its
 * picture URL, and when the network last described it in full (`refreshed_at`: the bound of the read cache of
 * `GET …/groups/{groupJid}`, docs/groups.md). Two text arrays beside `members` rather than a jsonb list: notifications
 * change one member's flag at a time, which is one array operation, and `members` stays the one member list.
 */
export class GroupAdministration1795638441525 implements MigrationInterface {
  name = 'GroupAdministration1795638441525';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE groups ADD COLUMN admins text[] NOT NULL DEFAULT '{}',
      ADD COLUMN super_admins text[] NOT NULL DEFAULT '{}',
      ADD COLUMN picture_url text,
      ADD COLUMN refreshed_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE groups DROP COLUMN admins, DROP COLUMN super_admins, DROP COLUMN picture_url, DROP COLUMN refreshed_at');
  }
}
