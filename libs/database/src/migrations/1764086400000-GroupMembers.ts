import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The member JIDs of a group, so a gateway answers the engine's group metadata question (Baileys'
 * cachedGroupMetadata, asked on every group send) from PostgreSQL on any gateway, after any restart.
 *
 * `members` is NULL for rows stored before this migration (only their count is known): such a group answers "unknown"
 * and the engine asks the network, until the next refresh from the network stores the list. `participants` stays the
 * count the API shows, kept equal to the list's length whenever the list is known.
 */
export class GroupMembers1764086400000 implements MigrationInterface {
  name = 'GroupMembers1764086400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE groups ADD COLUMN members text[]`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE groups DROP COLUMN members`);
  }
}
