import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The campaign counters' triggers (1795879000000-CampaignCounters) made cheaper for PostgreSQL, same counts (issue 43
 * item 5: a sending campaign's PostgreSQL work competes with every ordinary send's statements for the same CPU):
 * - `campaign_counts_apply` in PL/pgSQL instead of SQL: a SQL function that cannot be inlined (this one updates) has
 *   its body parsed and planned again at every call, and it runs up to three times per campaign message (queued,
 *   sent, and the `replied` recompute below); PL/pgSQL keeps its statement's plan for the connection's life.
 * - the `replied` recompute of a campaign message whose `sent_at` changed updates only the recipients whose flag
 *   changes. It updated every such recipient to the value it mostly already had: a row version each, and the
 *   recipients' trigger ran its counting for deltas that cancel out.
 */
export class CampaignCountersPlanned1795881500000 implements MigrationInterface {
  name = 'CampaignCountersPlanned1795881500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION campaign_counts_apply(d jsonb) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
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
          FROM nz WHERE c.id = nz.campaign_id;
      END $$;

      CREATE OR REPLACE FUNCTION campaign_messages_count() RETURNS trigger LANGUAGE plpgsql AS $$
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
        -- only the recipients whose flag changes (a message just sent has mostly no reply after it yet)
        UPDATE campaign_recipients r SET replied = v.replied
          FROM (
            SELECT n.id, (n.sent_at IS NOT NULL AND EXISTS (
                     SELECT 1 FROM messages i WHERE i.session_id = n.session_id AND i.chat_jid = n.chat_jid
                        AND i.direction = 'in' AND i.created_at > n.sent_at)) AS replied
              FROM old_rows o JOIN new_rows n ON n.id = o.id
             WHERE n.campaign_id IS NOT NULL AND o.sent_at IS DISTINCT FROM n.sent_at
          ) v
         WHERE r.message_id = v.id AND r.replied IS DISTINCT FROM v.replied;
        RETURN NULL;
      END $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION campaign_counts_apply(d jsonb) RETURNS void LANGUAGE sql AS $$
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

      CREATE OR REPLACE FUNCTION campaign_messages_count() RETURNS trigger LANGUAGE plpgsql AS $$
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
    `);
  }
}
