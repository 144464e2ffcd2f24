-- 2,000 status changes of campaign and ordinary messages, with and without the counters trigger (rolled back).
CREATE OR REPLACE FUNCTION pg_temp.flip(prefix text, n int) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp(); i int;
BEGIN
  FOR i IN 0..n-1 LOOP
    EXECUTE format('UPDATE messages SET status = %L WHERE id = %L', CASE WHEN i % 2 = 0 THEN 'read' ELSE 'delivered' END, prefix || (i + 1));
  END LOOP;
  RETURN round(extract(epoch FROM clock_timestamp() - t0) * 1000000 / n);
END $$;
BEGIN;
SELECT 'campaign message status change, µs/statement' AS what, pg_temp.flip('c', 2000);
SELECT 'ordinary message status change, µs/statement' AS what, pg_temp.flip('o', 2000);
ROLLBACK;
BEGIN;
ALTER TABLE messages DISABLE TRIGGER messages_campaign_count_update;
SELECT 'campaign message, no trigger, µs/statement' AS what, pg_temp.flip('c', 2000);
SELECT 'ordinary message, no trigger, µs/statement' AS what, pg_temp.flip('o', 2000);
ROLLBACK;
