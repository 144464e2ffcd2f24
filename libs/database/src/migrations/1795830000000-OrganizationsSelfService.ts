import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organizations run themselves (CONTRACT 14): members get a name, a last login and a token version (bumped by a
 * password change, so the other login JWTs of that user end); API keys get a session scope, an address allow-list,
 * an expiry, their creator and a last use; invitations and password resets are single-use tokens stored hashed; the
 * audit log is one row per change or refusal, read newest first per organization.
 */
export class OrganizationsSelfService1795830000000 implements MigrationInterface {
  name = 'OrganizationsSelfService1795830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE users
        ADD COLUMN name text,
        ADD COLUMN last_login_at timestamptz,
        ADD COLUMN token_version integer NOT NULL DEFAULT 0;
      ALTER TABLE api_keys
        ADD COLUMN session_ids text[],
        ADD COLUMN allowed_ips text[],
        ADD COLUMN expires_at timestamptz,
        ADD COLUMN created_by text,
        ADD COLUMN last_used_at timestamptz;

      CREATE TABLE invitations (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('owner','admin','member','viewer')),
        token_hash text NOT NULL UNIQUE,
        expires_at timestamptz NOT NULL,
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        accepted_at timestamptz,
        withdrawn_at timestamptz
      );
      CREATE INDEX invitations_org ON invitations (organization_id, id);

      CREATE TABLE password_resets (
        id text PRIMARY KEY,
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash text NOT NULL UNIQUE,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        used_at timestamptz
      );

      CREATE TABLE audit_log (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        at timestamptz NOT NULL DEFAULT now(),
        actor_type text NOT NULL CHECK (actor_type IN ('user','apiKey','cli','system')),
        actor_id text,
        actor_name text,
        action text NOT NULL,
        target_type text,
        target_id text,
        outcome text NOT NULL CHECK (outcome IN ('success','denied','failed')),
        ip text,
        user_agent text,
        request_id text,
        changes text[] NOT NULL DEFAULT '{}'
      );
      CREATE INDEX audit_log_org ON audit_log (organization_id, id DESC);
      CREATE INDEX audit_log_at ON audit_log (at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE audit_log; DROP TABLE password_resets; DROP TABLE invitations;
      ALTER TABLE api_keys DROP COLUMN session_ids, DROP COLUMN allowed_ips, DROP COLUMN expires_at, DROP COLUMN created_by, DROP COLUMN last_used_at;
      ALTER TABLE users DROP COLUMN name, DROP COLUMN last_login_at, DROP COLUMN token_version;
    `);
  }
}
