-- Seeds one campaign of 10,000 recipients (half sent, 500 replied) and 20,000 ordinary messages on a migrated
-- database (docs/benchmarks/campaigns.md, section 3). Not for a database that holds anything.
INSERT INTO organizations (id, name) VALUES ('org1', 'Org');
INSERT INTO sessions (id, organization_id, label, status) VALUES ('ses1', 'org1', 'S', 'connected');
INSERT INTO campaigns (id, organization_id, session_id, name, status, message, pacing, skip_not_on_whatsapp, total, start_at, next_send_at)
  VALUES ('cmp1', 'org1', 'ses1', 'C', 'running', '{"type":"text","text":"hi"}', '{"minDelayMs":1000,"maxDelayMs":3000}', false, 10000, now(), now());
INSERT INTO campaign_recipients (campaign_id, position, to_jid, status)
  SELECT 'cmp1', g, '1555' || (7000000 + g) || '@s.whatsapp.net', 'pending' FROM generate_series(0, 9999) g;
-- ordinary traffic of the session: 20,000 messages in 2,000 chats
INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, type, status, created_at)
  SELECT 'o' || g, 'org1', 'ses1', 'wo' || g, CASE WHEN g % 2 = 0 THEN 'in' ELSE 'out' END, '1666' || (g % 2000) || '@s.whatsapp.net', 'text', 'delivered', now() - interval '1 day'
    FROM generate_series(1, 20000) g;
-- half the campaign sent: messages, recipients queued (through the triggers)
INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, type, status, campaign_id, sent_at, created_at)
  SELECT 'c' || g, 'org1', 'ses1', 'wc' || g, 'out', '1555' || (7000000 + g) || '@s.whatsapp.net', 'text',
         (ARRAY['sent', 'delivered', 'read', 'played', 'failed'])[1 + g % 5], 'cmp1', now() - interval '1 hour', now() - interval '1 hour'
    FROM generate_series(0, 4999) g;
UPDATE campaign_recipients SET status = 'queued', message_id = 'c' || position WHERE campaign_id = 'cmp1' AND position < 5000;
-- 500 replies
INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, type, status, created_at)
  SELECT 'r' || g, 'org1', 'ses1', 'wr' || g, 'in', '1555' || (7000000 + g * 10) || '@s.whatsapp.net', 'text', 'received', now() FROM generate_series(0, 499) g;
ANALYZE;
