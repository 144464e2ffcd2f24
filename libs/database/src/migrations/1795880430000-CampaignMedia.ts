import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A media campaign's file (issue 43): its bytes stored once per campaign, not once per recipient. Every recipient's
 * message is a `messages` row with the campaign's `media` description and no `message_media` row of its own; the send
 * reads the bytes here (`MessagesRepository.mediaOf`). Kept while the campaign can still send, deleted when it is
 * completed or cancelled, and with the campaign (its session, its organization).
 */
export class CampaignMedia1795880430000 implements MigrationInterface {
  name = 'CampaignMedia1795880430000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE campaign_media (
        campaign_id text PRIMARY KEY REFERENCES campaigns(id) ON DELETE CASCADE,
        data bytea NOT NULL
      )
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE campaign_media`);
  }
}
