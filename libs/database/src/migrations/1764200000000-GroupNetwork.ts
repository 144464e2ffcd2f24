import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a group send needs, exactly as the network gave it: `{addressingMode?, participants: [{id, phoneNumber?, lid?,
 * admin?}]}` (Baileys' GroupMetadata fields), answered to Baileys' cachedGroupMetadata. `members` stays the list the
 * API shows (phone numbers where known); a LID-addressed group must still be answered `lid` with its LIDs.
 *
 * One jsonb value rather than a mode column plus a second id array: each member's id travels with its other forms and
 * its admin flag, the whole answer is written (or forgotten) at once, and NULL says "not known as the network said it"
 * (rows stored before this migration, groups known only through the simulator): the gateway then asks the network.
 */
export class GroupNetwork1764200000000 implements MigrationInterface {
  name = 'GroupNetwork1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE groups ADD COLUMN network jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE groups DROP COLUMN network');
  }
}
