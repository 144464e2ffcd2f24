-- The old campaign count against the counters kept on the row (docs/benchmarks/campaigns.md, section 3); after seed.sql.
\echo === old count (the previous counts())
EXPLAIN (ANALYZE, BUFFERS, SUMMARY) SELECT count(*) AS total,
              count(*) FILTER (WHERE v.s = 'pending') AS pending,
              count(*) FILTER (WHERE v.s IN ('sent', 'delivered', 'read')) AS sent,
              count(*) FILTER (WHERE v.s IN ('delivered', 'read')) AS delivered,
              count(*) FILTER (WHERE v.s = 'read') AS read,
              count(*) FILTER (WHERE v.s = 'failed') AS failed,
              count(*) FILTER (WHERE v.s = 'skipped') AS skipped,
              count(*) FILTER (WHERE v.s = 'optedOut') AS opted_out,
              count(*) FILTER (WHERE v.replied) AS replied
         FROM (
           SELECT CASE WHEN r.status <> 'queued' THEN r.status
   WHEN m.status IN ('sent', 'delivered', 'read', 'failed') THEN m.status WHEN m.status = 'played' THEN 'read'
   WHEN m.status = 'cancelled' THEN 'cancelled' ELSE 'queued' END AS s,
                  (m.sent_at IS NOT NULL AND EXISTS (
                     SELECT 1 FROM messages i WHERE i.session_id = m.session_id AND i.chat_jid = m.chat_jid
                        AND i.direction = 'in' AND i.created_at > m.sent_at)) AS replied
             FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
            WHERE r.campaign_id = 'cmp1'
         ) v;
\echo === new count (one row)
EXPLAIN (ANALYZE, BUFFERS, SUMMARY) SELECT total, count_pending, count_sent, count_delivered, count_read, count_failed, count_skipped, count_opted_out, count_replied FROM campaigns WHERE id = 'cmp1';
BEGIN;
\echo === a step: insert the message (trigger: not inbound, returns)
EXPLAIN (ANALYZE, SUMMARY) INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, type, status, campaign_id)
  VALUES ('c5000', 'org1', 'ses1', 'wc5000', 'out', '15557005000@s.whatsapp.net', 'text', 'queued', 'cmp1');
\echo === a step: markRecipient queued (trigger: pending -1)
EXPLAIN (ANALYZE, SUMMARY) UPDATE campaign_recipients SET status = 'queued', message_id = 'c5000', error = NULL, updated_at = now() WHERE campaign_id = 'cmp1' AND position = 5000;
\echo === the send: queued -> sent (trigger: sent +1)
EXPLAIN (ANALYZE, SUMMARY) UPDATE messages SET status = 'sent', sent_at = now() WHERE id = 'c5000';
\echo === a receipt: sent -> delivered
EXPLAIN (ANALYZE, SUMMARY) UPDATE messages SET status = 'delivered' WHERE id = 'c5000';
\echo === an inbound reply (trigger: replied +1)
EXPLAIN (ANALYZE, SUMMARY) INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, type, status)
  VALUES ('r5000', 'org1', 'ses1', 'wr5000', 'in', '15557005000@s.whatsapp.net', 'text', 'received');
\echo === an ordinary (non-campaign) send of another chat: queued -> sent
EXPLAIN (ANALYZE, SUMMARY) UPDATE messages SET status = 'sent' WHERE id = 'o1';
\echo === cancel: 4,999 pending recipients -> cancelled
EXPLAIN (ANALYZE, SUMMARY) UPDATE campaign_recipients SET status = 'cancelled', updated_at = now() WHERE campaign_id = 'cmp1' AND status = 'pending';
SELECT total, count_pending, count_sent, count_delivered, count_read, count_failed, count_replied FROM campaigns WHERE id = 'cmp1';
ROLLBACK;
