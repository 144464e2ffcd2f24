import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The channels (newsletters, CONTRACT 13) a session's account follows, as the gateway knows them: followed through the
 * API, or seen posting to the account. The Baileys engine answers `GET …/channels` from it (Baileys 7.0.0-rc14 has no
 * query for the followed list: docs/decisions.md). A channel's name, description, invite and follower count are the
 * network's last answer about it (null until one came).
 */
export class FollowedChannels1795650098177 implements MigrationInterface {
  name = 'FollowedChannels1795650098177';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE followed_channels (
        session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        jid text NOT NULL,
        organization_id text NOT NULL,
        name text,
        description text,
        invite text,
        subscribers integer,
        followed_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, jid)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE followed_channels');
  }
}
