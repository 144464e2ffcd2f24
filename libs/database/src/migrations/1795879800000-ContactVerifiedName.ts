import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A business contact's verified name (WhatsApp's `verifiedName`, Baileys' `verifiedBizName` on its messages): the
 * third name a person's chat is shown by, after the address book's and the push name (issue 38 item 3).
 */
export class ContactVerifiedName1795879800000 implements MigrationInterface {
  name = 'ContactVerifiedName1795879800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE contacts ADD COLUMN verified_name text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE contacts DROP COLUMN verified_name`);
  }
}
