import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Inbound media kept by the operator's choice (MEDIA_STORE=postgres, docs/media-store.md): one row per message, the
 * decrypted bytes with their mimetype, size and sha256. It goes with its message (and so with its session and
 * organization). The session and organization ids are copied so a whole session's media can be counted or deleted
 * without a join.
 */
export class MediaBlobs1795640000000 implements MigrationInterface {
  name = 'MediaBlobs1795640000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE media_blobs (
        message_id text PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        organization_id text NOT NULL,
        session_id text NOT NULL,
        mimetype text NOT NULL,
        size integer NOT NULL,
        sha256 text NOT NULL,
        bytes bytea NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX media_blobs_session ON media_blobs (session_id);
      CREATE INDEX media_blobs_organization ON media_blobs (organization_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE media_blobs');
  }
}
