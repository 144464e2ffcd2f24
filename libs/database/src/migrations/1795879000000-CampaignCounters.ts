import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A campaign's counts kept on its row (issue 43, scale goal): `count_pending … count_replied` beside `total`, so the
 * progress events and every campaign view read one row instead of aggregating all recipients and their messages.
 *
 * The counters are kept by statement-level triggers, in the statement that changes what they count, so they cannot
 * drift from the rows whatever code path writes them:
 * - `campaign_recipients` INSERT/UPDATE: the recipient's shown state (`campaign_view_status`, the one definition the
 *   repository's recipient listing also uses) before and after, and its `replied` flag;
 * - `messages` UPDATE of a campaign message's `status` or `sent_at`: its recipient's shown state before and after; a
 *   changed `sent_at` recomputes the recipient's `replied` (through the recipient trigger), an index range of
 *   `messages_inbound_chat` (the chat's inbound messages; before it, the old aggregate read every message of the session
 *   per sent recipient);
 * - `messages` INSERT of inbound messages: marks `replied` the recipients of campaign messages sent to that chat before
 *   (`messages_campaign_chat`, only campaign messages are in it).
 * A statement that changes nothing counted (e.g. a pause moving queued messages to scheduled) does not touch the row.
 * A statement without a campaign message (or an inbound one) returns after one look at its own rows. Each trigger updates the campaign rows once per statement, after the statement's own row locks, in id order.
 * The migration backfills the counters with the aggregate the repository used before.
 */
export class CampaignCounters1795879000000 implements MigrationInterface {
  name = 'CampaignCounters1795879000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE campaigns ADD COLUMN count_pending integer NOT NULL DEFAULT 0, ADD COLUMN count_sent integer NOT NULL DEFAULT 0,
        ADD COLUMN count_delivered integer NOT NULL DEFAULT 0, ADD COLUMN count_read integer NOT NULL DEFAULT 0,
        ADD COLUMN count_failed integer NOT NULL DEFAULT 0, ADD COLUMN count_skipped integer NOT NULL DEFAULT 0,
        ADD COLUMN count_opted_out integer NOT NULL DEFAULT 0, ADD COLUMN count_replied integer NOT NULL DEFAULT 0;
      ALTER TABLE campaign_recipients ADD COLUMN replied boolean NOT NULL DEFAULT false;
      CREATE INDEX campaign_recipients_message ON campaign_recipients (message_id) WHERE message_id IS NOT NULL;
      CREATE INDEX messages_campaign_chat ON messages (session_id, chat_jid, sent_at) WHERE campaign_id IS NOT NULL;
      CREATE INDEX messages_inbound_chat ON messages (session_id, chat_jid, created_at) WHERE direction = 'in';

      -- The recipient's state as the API shows it: an enqueued recipient takes its message's status (sent, delivered,
      -- read — played counts as read — or failed; still queued or withdrawn: queued).
      CREATE FUNCTION campaign_view_status(r_status text, m_status text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN r_status <> 'queued' THEN r_status
          WHEN m_status IN ('sent', 'delivered', 'read', 'failed') THEN m_status WHEN m_status = 'played' THEN 'read'
          WHEN m_status = 'cancelled' THEN 'cancelled' ELSE 'queued' END
      $$;

      -- Adds the signed rows of campaign_count_delta (campaign_id, s, replied, k) to the campaigns' counters.
      CREATE FUNCTION campaign_counts_apply(d jsonb) RETURNS void LANGUAGE sql AS $$
        WITH x AS (
          SELECT e->>'c' AS campaign_id, e->>'s' AS s, (e->>'r')::boolean AS replied, (e->>'k')::int AS k FROM jsonb_array_elements(d) e
        ), a AS (
          SELECT campaign_id,
                 COALESCE(sum(k) FILTER (WHERE s = 'pending'), 0) AS pending,
                 COALESCE(sum(k) FILTER (WHERE s IN ('sent', 'delivered', 'read')), 0) AS sent,
                 COALESCE(sum(k) FILTER (WHERE s IN ('delivered', 'read')), 0) AS delivered,
                 COALESCE(sum(k) FILTER (WHERE s = 'read'), 0) AS read,
                 COALESCE(sum(k) FILTER (WHERE s = 'failed'), 0) AS failed,
                 COALESCE(sum(k) FILTER (WHERE s = 'skipped'), 0) AS skipped,
                 COALESCE(sum(k) FILTER (WHERE s = 'optedOut'), 0) AS opted_out,
                 COALESCE(sum(k) FILTER (WHERE replied), 0) AS replied
            FROM x GROUP BY campaign_id
        ), nz AS (
          SELECT * FROM a WHERE pending <> 0 OR sent <> 0 OR delivered <> 0 OR read <> 0 OR failed <> 0 OR skipped <> 0
             OR opted_out <> 0 OR replied <> 0 ORDER BY campaign_id
        )
        UPDATE campaigns c SET count_pending = c.count_pending + nz.pending, count_sent = c.count_sent + nz.sent,
               count_delivered = c.count_delivered + nz.delivered, count_read = c.count_read + nz.read,
               count_failed = c.count_failed + nz.failed, count_skipped = c.count_skipped + nz.skipped,
               count_opted_out = c.count_opted_out + nz.opted_out, count_replied = c.count_replied + nz.replied
          FROM nz WHERE c.id = nz.campaign_id
      $$;

      CREATE FUNCTION campaign_recipients_count() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE d jsonb;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT jsonb_agg(jsonb_build_object('c', n.campaign_id, 's', campaign_view_status(n.status, m.status), 'r', n.replied, 'k', 1))
            INTO d FROM new_rows n LEFT JOIN messages m ON m.id = n.message_id;
        ELSE
          SELECT jsonb_agg(e) INTO d FROM (
            SELECT jsonb_build_object('c', o.campaign_id, 's', campaign_view_status(o.status, m.status), 'r', o.replied, 'k', -1) AS e
              FROM old_rows o LEFT JOIN messages m ON m.id = o.message_id
            UNION ALL
            SELECT jsonb_build_object('c', n.campaign_id, 's', campaign_view_status(n.status, m.status), 'r', n.replied, 'k', 1)
              FROM new_rows n LEFT JOIN messages m ON m.id = n.message_id
          ) t;
        END IF;
        IF d IS NOT NULL THEN PERFORM campaign_counts_apply(d); END IF;
        RETURN NULL;
      END $$;

      CREATE FUNCTION campaign_messages_count() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE d jsonb;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          IF NOT EXISTS (SELECT 1 FROM new_rows WHERE direction = 'in') THEN RETURN NULL; END IF;
          UPDATE campaign_recipients r SET replied = true
            FROM new_rows i JOIN messages m ON m.session_id = i.session_id AND m.chat_jid = i.chat_jid AND m.campaign_id IS NOT NULL
                 AND m.sent_at IS NOT NULL AND m.sent_at < i.created_at
           WHERE i.direction = 'in' AND r.message_id = m.id AND NOT r.replied;
          RETURN NULL;
        END IF;
        IF NOT EXISTS (SELECT 1 FROM new_rows WHERE campaign_id IS NOT NULL) THEN RETURN NULL; END IF;
        SELECT jsonb_agg(e) INTO d FROM (
          SELECT jsonb_build_object('c', r.campaign_id, 's', campaign_view_status(r.status, o.status), 'r', false, 'k', -1) AS e
            FROM old_rows o JOIN new_rows n ON n.id = o.id JOIN campaign_recipients r ON r.message_id = n.id
           WHERE n.campaign_id IS NOT NULL AND o.status IS DISTINCT FROM n.status
          UNION ALL
          SELECT jsonb_build_object('c', r.campaign_id, 's', campaign_view_status(r.status, n.status), 'r', false, 'k', 1)
            FROM old_rows o JOIN new_rows n ON n.id = o.id JOIN campaign_recipients r ON r.message_id = n.id
           WHERE n.campaign_id IS NOT NULL AND o.status IS DISTINCT FROM n.status
        ) t;
        IF d IS NOT NULL THEN PERFORM campaign_counts_apply(d); END IF;
        UPDATE campaign_recipients r
           SET replied = (n.sent_at IS NOT NULL AND EXISTS (
                 SELECT 1 FROM messages i WHERE i.session_id = n.session_id AND i.chat_jid = n.chat_jid
                    AND i.direction = 'in' AND i.created_at > n.sent_at))
          FROM old_rows o JOIN new_rows n ON n.id = o.id
         WHERE n.campaign_id IS NOT NULL AND o.sent_at IS DISTINCT FROM n.sent_at AND r.message_id = n.id;
        RETURN NULL;
      END $$;

      -- the backfill: replied first, then the counters, then the triggers
      UPDATE campaign_recipients r SET replied = true FROM messages m
       WHERE m.id = r.message_id AND m.sent_at IS NOT NULL AND EXISTS (
         SELECT 1 FROM messages i WHERE i.session_id = m.session_id AND i.chat_jid = m.chat_jid AND i.direction = 'in' AND i.created_at > m.sent_at);
      UPDATE campaigns c SET count_pending = a.pending, count_sent = a.sent, count_delivered = a.delivered, count_read = a.read,
             count_failed = a.failed, count_skipped = a.skipped, count_opted_out = a.opted_out, count_replied = a.replied
        FROM (
          SELECT r.campaign_id,
                 count(*) FILTER (WHERE v.s = 'pending') AS pending,
                 count(*) FILTER (WHERE v.s IN ('sent', 'delivered', 'read')) AS sent,
                 count(*) FILTER (WHERE v.s IN ('delivered', 'read')) AS delivered,
                 count(*) FILTER (WHERE v.s = 'read') AS read,
                 count(*) FILTER (WHERE v.s = 'failed') AS failed,
                 count(*) FILTER (WHERE v.s = 'skipped') AS skipped,
                 count(*) FILTER (WHERE v.s = 'optedOut') AS opted_out,
                 count(*) FILTER (WHERE r.replied) AS replied
            FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
            CROSS JOIN LATERAL (SELECT campaign_view_status(r.status, m.status) AS s) v
           GROUP BY r.campaign_id
        ) a WHERE a.campaign_id = c.id;

      CREATE TRIGGER campaign_recipients_count_insert AFTER INSERT ON campaign_recipients
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_recipients_count();
      CREATE TRIGGER campaign_recipients_count_update AFTER UPDATE ON campaign_recipients
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_recipients_count();
      CREATE TRIGGER messages_campaign_count_insert AFTER INSERT ON messages
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_messages_count();
      CREATE TRIGGER messages_campaign_count_update AFTER UPDATE ON messages
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_messages_count();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER messages_campaign_count_update ON messages;
      DROP TRIGGER messages_campaign_count_insert ON messages;
      DROP TRIGGER campaign_recipients_count_update ON campaign_recipients;
      DROP TRIGGER campaign_recipients_count_insert ON campaign_recipients;
      DROP FUNCTION campaign_messages_count();
      DROP FUNCTION campaign_recipients_count();
      DROP FUNCTION campaign_counts_apply(jsonb);
      DROP FUNCTION campaign_view_status(text, text);
      DROP INDEX messages_inbound_chat;
      DROP INDEX messages_campaign_chat;
      DROP INDEX campaign_recipients_message;
      ALTER TABLE campaign_recipients DROP COLUMN replied;
      ALTER TABLE campaigns DROP COLUMN count_pending, DROP COLUMN count_sent, DROP COLUMN count_delivered, DROP COLUMN count_read,
        DROP COLUMN count_failed, DROP COLUMN count_skipped, DROP COLUMN count_opted_out, DROP COLUMN count_replied;
    `);
  }
}
