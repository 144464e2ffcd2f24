import { Injectable } from '@nestjs/common';
import type { EventEnvelope } from '@app/contracts';
import { pgArray } from '../pg-array';
import { Db, type Tx, preparedStatement } from '../pg';

/** The part of the outbox a reconciler pass looks at: `[lo, hi)` in transaction ids (bigints as text). */
export interface OutboxWindow {
  lo: string;
  hi: string;
}

/** An outbox event not named by any fan-out row. */
export interface StragglerEvent {
  id: string;
  envelope: EventEnvelope;
}

/**
 * Outbox rows ready to be written: each envelope with its serialized text (written as is, and the same text goes to
 * the stream), as the five array parameters of the outbox insert (`outboxInsertSql`).
 */
export class OutboxRows {
  /** the parameters of `outboxInsertSql`, in order */
  readonly params: readonly [string, string, string, string, string];

  constructor(readonly envelopes: readonly EventEnvelope<object>[], readonly texts: readonly string[]) {
    // one array parameter per column, the envelope as text cast per row: PostgreSQL spends less per event on this
    // than on a VALUES list of five parameters per row (docs/webhook-delivery.md)
    this.params = [
      pgArray(envelopes.map((e) => e.id)),
      pgArray(envelopes.map((e) => e.organizationId)),
      pgArray(envelopes.map((e) => e.sessionId)),
      pgArray(envelopes.map((e) => e.event)),
      pgArray(texts),
    ];
  }

  /** No events: the parameters of an insert that writes nothing. */
  static readonly none = new OutboxRows([], []);
}

/**
 * The outbox insert, for a statement that writes the events together with the state change they announce (a
 * data-modifying CTE: one statement is atomic, so neither can be lost without the other). Its parameters are
 * `OutboxRows.params` at `$first` … `$first+4`; `condition` (SQL) limits it, e.g. to when the CTE that changes the
 * state changed a row (`EXISTS (SELECT 1 FROM changed)`). An id already there is left alone.
 */
export function outboxInsertSql(first: number, condition = 'true'): string {
  const p = (i: number) => `$${first + i}::text[]`;
  return `INSERT INTO events (id, organization_id, session_id, type, envelope)
     SELECT u.id, u.organization_id, u.session_id, u.type, u.envelope::jsonb
       FROM unnest(${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}) AS u(id, organization_id, session_id, type, envelope)
      WHERE ${condition}
     ON CONFLICT (id) DO NOTHING`;
}

/** Every producer's outbox write that is not part of a larger statement (`insertOutbox`). */
const INSERT_OUTBOX = preparedStatement('events_insert_outbox', outboxInsertSql(1));

/**
 * The event outbox (`events`), the record of its fan-outs (`event_fanouts`, written by the delivery
 * inserts of DeliveriesRepository) and the reconciler's checkpoint (`outbox_checkpoints`).
 */
@Injectable()
export class EventsRepository {
  constructor(private readonly db: Db) {}

  /** Inserts envelopes (each with its serialized text, written as is); an id already there is left alone. */
  /** `manager`: the caller's transaction, when the events must commit with the state change they announce. */
  async insertOutbox(rows: OutboxRows, manager?: Tx): Promise<void> {
    if (rows.envelopes.length === 0) return;
    await (manager ?? this.db).prepared(INSERT_OUTBOX, [...rows.params]);
  }

  /**
   * The window of checkpoint `name`: from its checkpoint to the oldest event younger than `graceMs`, or
   * to xmin (the oldest transaction still running: every event below it has committed or never will).
   * Null when the checkpoint row is missing (it is then created at 0).
   */
  async outboxWindow(name: string, graceMs: number): Promise<OutboxWindow | null> {
    const [state]: { lo: string; hi: string; young: string | null }[] = await this.db.query(
      `WITH c AS (SELECT tx AS lo FROM outbox_checkpoints WHERE name = $1),
            s AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS hi)
       SELECT c.lo, s.hi,
              (SELECT min(e.tx) FROM events e
                WHERE e.tx >= c.lo AND e.tx < s.hi AND e.created_at >= now() - make_interval(secs => $2::float8 / 1000)) AS young
         FROM c, s`,
      [name, graceMs],
    );
    if (!state) {
      // a database migrated before the checkpoint existed has its row; this only guards a manual wipe
      await this.db.query(`INSERT INTO outbox_checkpoints (name, tx) VALUES ($1, 0) ON CONFLICT (name) DO NOTHING`, [name]);
      return null;
    }
    return { lo: state.lo, hi: state.young ?? state.hi };
  }

  /** Events of the window with id > `after` that no fan-out row names, in id order. */
  async findNotFannedOut(window: OutboxWindow, after: string, limit: number): Promise<StragglerEvent[]> {
    return this.db.query(
      // the window is read through the BRIN index and only then sorted: ordering the events by id
      // made the planner walk the primary key over the whole table, a cost that grew with the table instead of
      // with the window
      `WITH w AS MATERIALIZED (SELECT id FROM events WHERE tx >= $1::bigint AND tx < $2::bigint),
            done AS (SELECT unnest(event_ids) AS id FROM event_fanouts WHERE tx >= $1::bigint),
            todo AS (SELECT w.id FROM w WHERE w.id > $3 AND NOT EXISTS (SELECT 1 FROM done WHERE done.id = w.id)
                      ORDER BY w.id LIMIT $4)
       SELECT e.id, e.envelope FROM events e JOIN todo USING (id) ORDER BY e.id`,
      [window.lo, window.hi, after, limit],
    );
  }

  /**
   * Moves checkpoint `name` up to `tx` (never down) and deletes the fan-out rows behind it: they only
   * name events behind it.
   */
  async advanceCheckpoint(name: string, tx: string): Promise<void> {
    await this.db.query(
      `WITH moved AS (UPDATE outbox_checkpoints SET tx = $2::bigint, updated_at = now() WHERE name = $1 AND tx < $2::bigint)
       DELETE FROM event_fanouts WHERE tx < $2::bigint`,
      [name, tx],
    );
  }
}
