import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scheduled sends and campaigns (CONTRACT 17, issue 43).
 *
 * - `messages.send_at`: a send accepted with `sendAt` is stored `scheduled` without an acceptance number (`seq`); when
 *   it is due the gateway that holds its session moves it to `queued` with the session's next number, so it joins the
 *   send queue behind what was accepted before it became due. `messages_scheduled_due (session_id, send_at, id)` is the
 *   due scan's index: only scheduled rows are in it, and a scan reads the due ones (`send_at <= now()`), never the
 *   whole future.
 * - `messages.campaign_id`: the campaign a message was sent for.
 * - `campaigns`: one row per campaign; `next_send_at` is when its scheduler step is due, indexed only while the campaign
 *   is live (scheduled or running) (`campaigns_due`), so an idle campaign costs nothing per tick. The caps' counters (`day_key/day_count`,
 *   `hour_key/hour_count`) live on the row, written by the step that enqueues.
 * - `campaign_recipients`: one row per recipient, in the campaign's order (`position`); `campaign_recipients_pending`
 *   serves the step's "next pending recipient" read.
 * - `opt_outs`: numbers that answered with an opt-out keyword, per session.
 */
export class CampaignsAndScheduledSends1795840000000 implements MigrationInterface {
  name = 'CampaignsAndScheduledSends1795840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE messages ADD COLUMN send_at timestamptz, ADD COLUMN campaign_id text;
      CREATE INDEX messages_scheduled_due ON messages (session_id, send_at, id) WHERE status = 'scheduled';

      CREATE TABLE campaigns (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        name text NOT NULL,
        status text NOT NULL,
        message jsonb NOT NULL,
        time_window jsonb,
        pacing jsonb NOT NULL,
        warmup jsonb,
        skip_not_on_whatsapp boolean NOT NULL,
        total integer NOT NULL,
        start_at timestamptz NOT NULL,
        next_send_at timestamptz,
        last_message_id text,
        last_delay_ms integer NOT NULL DEFAULT 0,
        day_key text,
        day_count integer NOT NULL DEFAULT 0,
        days_sent integer NOT NULL DEFAULT 0,
        hour_key text,
        hour_count integer NOT NULL DEFAULT 0,
        progress_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      );
      CREATE INDEX campaigns_session ON campaigns (session_id, id);
      CREATE INDEX campaigns_due ON campaigns (session_id, next_send_at) WHERE status IN ('scheduled', 'running');

      CREATE TABLE campaign_recipients (
        campaign_id text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        position integer NOT NULL,
        to_jid text NOT NULL,
        variables jsonb,
        status text NOT NULL,
        message_id text,
        error text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (campaign_id, position)
      );
      CREATE INDEX campaign_recipients_pending ON campaign_recipients (campaign_id, position) WHERE status = 'pending';
      CREATE INDEX campaign_recipients_status ON campaign_recipients (campaign_id, status, position);

      CREATE TABLE opt_outs (
        session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        jid text NOT NULL,
        keyword text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, jid)
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE opt_outs;
      DROP TABLE campaign_recipients;
      DROP TABLE campaigns;
      DROP INDEX messages_scheduled_due;
      ALTER TABLE messages DROP COLUMN send_at, DROP COLUMN campaign_id;
    `);
  }
}
