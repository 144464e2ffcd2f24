import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox stops being updated per event. Before, every fanned-out event was marked with
 * `UPDATE events SET fanned_out_at` (a second, non-HOT write of every outbox row) so the reconciler could find the unmarked ones through a partial index. Now:
 *
 * - `events.tx` is the id of the transaction that inserted the row (`pg_current_xact_id()`), indexed by
 *   BRIN (rows arrive in transaction order, so a few summary tuples cover the table);
 * - a statement that completes the fan-out of some events inserts ONE `event_fanouts` row listing them;
 * - the reconciler keeps a checkpoint (`outbox_checkpoints`): every event with `tx` below it is fanned out.
 *   It scans `[checkpoint, snapshot xmin)` only — every transaction below the snapshot's xmin has ended,
 *   so an outbox insert that commits late is still ahead of the checkpoint, never skipped — and prunes the
 *   fan-out rows behind it.
 *
 * The delivery → event foreign key goes too (a check per delivery row): delivery rows are only written for
 * events read from the stream or the outbox after their insert committed, and the delivery log must
 * outlive any outbox retention anyway.
 */
export class OutboxCheckpoint1763913600000 implements MigrationInterface {
  name = 'OutboxCheckpoint1763913600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_event_id_fkey;

      ALTER TABLE events ADD COLUMN tx bigint NOT NULL DEFAULT 0;
      ALTER TABLE events ALTER COLUMN tx SET DEFAULT (pg_current_xact_id()::text::bigint);

      CREATE TABLE event_fanouts (
        event_ids text[] NOT NULL,
        tx bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE outbox_checkpoints (
        name text PRIMARY KEY,
        tx bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      -- events already fanned out stay behind the checkpoint (tx 0); the others, and any insert still
      -- in flight (its transaction id is at least the snapshot's xmin), are ahead of it
      INSERT INTO outbox_checkpoints (name, tx) VALUES ('webhook-dispatcher', pg_snapshot_xmin(pg_current_snapshot())::text::bigint);
      UPDATE events SET tx = (SELECT tx FROM outbox_checkpoints WHERE name = 'webhook-dispatcher') WHERE fanned_out_at IS NULL;

      DROP INDEX IF EXISTS events_pending_fanout;
      ALTER TABLE events DROP COLUMN fanned_out_at;
      CREATE INDEX events_tx ON events USING brin (tx) WITH (pages_per_range = 32, autosummarize = on);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE events ADD COLUMN fanned_out_at timestamptz;
      UPDATE events SET fanned_out_at = now()
       WHERE tx < COALESCE((SELECT tx FROM outbox_checkpoints WHERE name = 'webhook-dispatcher'), 0)
          OR id IN (SELECT unnest(event_ids) FROM event_fanouts);
      CREATE INDEX events_pending_fanout ON events (created_at) WHERE fanned_out_at IS NULL;
      DROP INDEX IF EXISTS events_tx;
      ALTER TABLE events DROP COLUMN tx;
      DROP TABLE outbox_checkpoints;
      DROP TABLE event_fanouts;
      ALTER TABLE deliveries ADD CONSTRAINT deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(id) ON DELETE CASCADE NOT VALID;
    `);
  }
}
