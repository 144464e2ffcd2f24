import { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1763683200000 implements MigrationInterface {
  name = 'Initial1763683200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        id text PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE users (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email text NOT NULL,
        password_hash text NOT NULL,
        role text NOT NULL CHECK (role IN ('owner','admin','member','viewer')),
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      );
      CREATE UNIQUE INDEX users_email_live ON users (email) WHERE deleted_at IS NULL;
      CREATE INDEX users_org ON users (organization_id);

      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name text NOT NULL,
        token_hash text NOT NULL UNIQUE,
        token_hint text NOT NULL,
        permissions text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_org ON api_keys (organization_id);

      CREATE TABLE sessions (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        created_by_user_id text,
        gateway_id text,
        label text NOT NULL,
        status text NOT NULL,
        desired_state text NOT NULL DEFAULT 'running' CHECK (desired_state IN ('running','stopped')),
        phone_number text,
        wa_jid text,
        wa_lid text,
        is_admin_session boolean NOT NULL DEFAULT false,
        auto_read boolean NOT NULL DEFAULT true,
        presence_typing boolean NOT NULL DEFAULT false,
        rate_per_min integer NOT NULL DEFAULT 20,
        rate_per_hour integer NOT NULL DEFAULT 200,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        last_connected_at timestamptz
      );
      CREATE INDEX sessions_org ON sessions (organization_id, created_at, id);
      CREATE INDEX sessions_gateway ON sessions (gateway_id);

      CREATE TABLE session_auth_keys (
        session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        category text NOT NULL,
        key_id text NOT NULL,
        value text NOT NULL,
        schema_version integer NOT NULL DEFAULT 1,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, category, key_id)
      );

      CREATE TABLE groups (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        group_jid text NOT NULL,
        subject text NOT NULL,
        description text NOT NULL DEFAULT '',
        owner_jid text NOT NULL,
        participants integer NOT NULL,
        is_announce boolean NOT NULL DEFAULT false,
        is_locked boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (session_id, group_jid)
      );

      CREATE TABLE webhooks (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        url text NOT NULL,
        events text[] NOT NULL,
        session_id text REFERENCES sessions(id) ON DELETE CASCADE,
        active boolean NOT NULL DEFAULT true,
        custom_headers jsonb NOT NULL DEFAULT '{}'::jsonb,
        retry_policy jsonb NOT NULL,
        secret_encrypted text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX webhooks_org ON webhooks (organization_id, created_at, id);

      CREATE TABLE events (
        id text PRIMARY KEY,
        organization_id text NOT NULL,
        session_id text,
        type text NOT NULL,
        envelope jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        fanned_out_at timestamptz
      );
      CREATE INDEX events_pending_fanout ON events (created_at) WHERE fanned_out_at IS NULL;

      CREATE TABLE deliveries (
        id text PRIMARY KEY,
        webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_id text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
        organization_id text NOT NULL,
        event_type text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending','delivering','delivered','dead')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_status_code integer,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz,
        UNIQUE (webhook_id, event_id)
      );
      CREATE INDEX deliveries_webhook ON deliveries (webhook_id, created_at DESC, id);
      CREATE INDEX deliveries_open ON deliveries (next_attempt_at) WHERE status IN ('pending','delivering');

      CREATE TABLE delivery_attempts (
        id text PRIMARY KEY,
        delivery_id text NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
        attempt_no integer NOT NULL,
        status_code integer,
        duration_ms integer NOT NULL,
        error text,
        response_snippet text,
        started_at timestamptz NOT NULL
      );
      CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, attempt_no);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE delivery_attempts; DROP TABLE deliveries; DROP TABLE events; DROP TABLE webhooks;
      DROP TABLE groups; DROP TABLE session_auth_keys; DROP TABLE sessions; DROP TABLE api_keys;
      DROP TABLE users; DROP TABLE organizations;
    `);
  }
}
