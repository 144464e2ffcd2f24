import { AttemptRecord, AttemptRef, Claim, DeliveriesRepository, FirstRow, NewDelivery, newId } from '@app/database';
import { GroupCommit, isStoreUnreachable } from '@app/infra';
import { EventRows, eventsCompletedBy } from './event-rows';
import type { LogHealth } from './log-health';

export type { AttemptRecord, Claim, NewDelivery };

/** The statements the store batches (DeliveriesRepository's). */
export type DeliveryLog = Pick<DeliveriesRepository, 'claim' | 'renewLeases' | 'recordAttempts' | 'insertFirstRows' | 'abandon' | 'postponeMany'>;

/** A fan-out's row queued for the rows' writer: claimed (`delivering`, attempt 1, a lease), or parked. */
interface RowWrite extends FirstRow {
  kind: 'row';
  event: EventRows;
}

/** An attempt handed back: due at `dueAt`, or parked (null). */
interface Postpone {
  deliveryId: string;
  attemptNo: number;
  dueAt: number | null;
}

/** What the rows' writer takes: a fan-out's row, or an event that matched no webhook, to mark fanned out. */
type RowsWrite = RowWrite | { kind: 'mark'; event: EventRows };

/** How long the outcomes' writer lets a batch fill (cut short when no attempt is in flight). */
const RECORD_LINGER_MS = 40;
/**
 * How long a statement that failed for an outage (PostgreSQL unreachable or restarting) is held and written
 * again once PostgreSQL answers, before its rows are reported failed (and redone by lease expiry or takeover).
 */
export const LOG_OUTAGE_HOLD_MS = 30_000;

/**
 * The delivery record in PostgreSQL. A fan-out's rows are inserted claimed (`delivering`, attempt 1, a lease) before
 * any call is made, the statement that inserts an event's last row marking it fanned out; a retry claims its delivery
 * (`delivering` with a lease). Each attempt's outcome is recorded after its call. Everything is batched across
 * concurrent attempts: one statement per batch and kind, rows and outcomes by writers of their own.
 */
export class DeliveryStore {
  private readonly claims: GroupCommit<AttemptRef, Claim>;
  private readonly postpones: GroupCommit<Postpone, boolean>;
  /**
   * The fan-out's rows: one batch in flight, so a batch sees every earlier one committed (event completion relies on
   * it). Its own writer, not the outcomes': a call waits for its row, so a row must not wait behind a lingering or
   * running batch of outcomes.
   */
  private readonly rows: GroupCommit<RowsWrite, boolean | Error>;
  /** attempts' outcomes: nothing waits for them but the attempt's own bookkeeping, so a batch lingers to fill */
  private readonly records: GroupCommit<AttemptRecord, true | Error>;

  constructor(
    private readonly deliveries: DeliveryLog,
    private readonly leaseMs: number,
    /** whether the log can be written: the sender starts no attempt while it cannot */
    readonly health: LogHealth,
    private readonly outageHoldMs = LOG_OUTAGE_HOLD_MS,
    private readonly clock: () => number = Date.now,
  ) {
    this.claims = new GroupCommit((items) => this.observed(() => this.deliveries.claim(items, this.leaseMs)), { maxSize: 200, maxInFlight: 2 });
    // hand-backs come in bursts (a breaker opening, a sweep of a stuck webhook): one statement per batch, not per row
    this.postpones = new GroupCommit(async (items) => {
      const done = await this.durably(() => this.deliveries.postponeMany(items));
      return items.map((i) => done.has(i.deliveryId));
    }, { maxSize: 500, maxInFlight: 1 });
    // rows go as soon as the fan-out has queued a read's worth (flushSoon), or behind the batch in flight
    this.rows = new GroupCommit((items) => this.writeRows(items), { maxSize: 1000, maxInFlight: 1, linger: 0 });
    // under load a batch of outcomes fills for up to RECORD_LINGER_MS: PostgreSQL's cost per row falls as statements
    // grow (planning, triggers and the commit are paid once per statement; docs/benchmarks/webhooks.md)
    this.records = new GroupCommit((items) => this.recordBatch(items), { maxSize: 1000, maxInFlight: 1, linger: RECORD_LINGER_MS });
  }

  claim(deliveryId: string, attemptNo: number): Promise<Claim> {
    return this.claims.submit({ deliveryId, attemptNo });
  }

  /** Writes the attempt row and the claimed delivery's new state; resolves once both are committed. */
  async record(attempt: AttemptRecord): Promise<void> {
    settled(await this.records.submit(attempt));
  }

  /**
   * Inserts a fan-out's row claimed (`delivering`, attempt 1, a lease from the statement), with the rows of other
   * events in one statement; resolves true once committed, false when a row for (webhook, event) already existed
   * (nothing written: that row is someone else's record, and no call is made for this one).
   */
  async insertClaimed(delivery: NewDelivery, event: EventRows): Promise<boolean> {
    return settled(await this.rows.submit({ kind: 'row', delivery, event }));
  }

  /**
   * Inserts a fresh delivery's row parked (`pending`, no attempt, no due time): its webhook is switched off, and the
   * row waits for it to be re-enabled. It counts as one of its event's rows. False when the pair had a row already.
   */
  async park(delivery: NewDelivery, event: EventRows): Promise<boolean> {
    return settled(await this.rows.submit({ kind: 'row', delivery, event, parked: true }));
  }

  /** Marks an event that matched no webhook fanned out (with the next batch of rows). */
  async markFannedOut(event: EventRows): Promise<void> {
    settled(await this.rows.submit({ kind: 'mark', event }));
  }

  /** The webhook was switched off after the event was fanned out: give the delivery up without a POST. */
  async abandon(deliveryId: string, attemptNo: number, reason: string): Promise<void> {
    await this.deliveries.abandon(deliveryId, attemptNo, reason);
  }

  /**
   * Hands a claimed attempt back without a POST (its webhook's breaker is open, its share is busy, or it was
   * disabled): `pending` again with the attempt's number unused, due at `dueAt`, or parked (no due time) until
   * the webhook is re-enabled. False when the row was no longer this attempt's.
   */
  postpone(deliveryId: string, attemptNo: number, dueAt: number | null): Promise<boolean> {
    return this.postpones.submit({ deliveryId, attemptNo, dueAt });
  }

  /** Nothing more is coming soon (a fan-out's rows are all queued, or no attempt is in flight): write what waits now. */
  flushSoon(): void {
    this.rows.flushSoon();
    this.records.flushSoon();
  }

  /** Extends live leases of attempts still held; returns the ids whose lease was extended. */
  renewLeases(items: AttemptRef[]): Promise<Set<string>> {
    return this.observed(() => this.deliveries.renewLeases(items, this.leaseMs));
  }

  /** One batch of the rows' writer: a fan-out's new rows and the events they complete, one statement. */
  private async writeRows(items: RowsWrite[]): Promise<(boolean | Error)[]> {
    const rows: RowWrite[] = [];
    const rowsByEvent = new Map<EventRows, number>();
    for (const item of items) {
      if (item.kind === 'row') rows.push(item);
      rowsByEvent.set(item.event, (rowsByEvent.get(item.event) ?? 0) + (item.kind === 'row' ? 1 : 0));
    }
    const notCreated = await this.insertRows(rows, rowsByEvent).catch((err: Error) => err);
    if (notCreated instanceof Error) {
      for (const event of rowsByEvent.keys()) event.fail();
      return items.map(() => notCreated);
    }
    for (const [event, n] of rowsByEvent) event.written(n);
    return items.map((item) => (item.kind === 'row' ? !notCreated.has(item.delivery.deliveryId) : true));
  }

  /** Returns the ids of the rows NOT created: their (webhook, event) already had a row, left alone. */
  private insertRows(rows: RowWrite[], rowsByEvent: Map<EventRows, number>): Promise<Set<string>> {
    const marks = eventsCompletedBy(rowsByEvent).map((e) => e.eventId);
    return this.durably(() => this.deliveries.insertFirstRows(rows, marks, this.leaseMs));
  }

  /**
   * Outcomes of claimed attempts, one statement; when it fails for one bad row (its delivery deleted
   * meanwhile: the attempt's foreign key fails), each row is written alone so the others' outcomes are
   * not lost, and a row that still fails is reported failed, never recorded.
   */
  private async recordBatch(items: AttemptRecord[]): Promise<(true | Error)[]> {
    // one attempt id per outcome for all runs of it: a rerun after an outage writes no second attempt row
    const ids = items.map(() => newId('att'));
    try {
      await this.durably(() => this.deliveries.recordAttempts(items, ids));
      return items.map(() => true);
    } catch (err) {
      if (items.length === 1) return [err as Error];
      const results: (true | Error)[] = [];
      for (let i = 0; i < items.length; i++) {
        results.push(await this.durably(() => this.deliveries.recordAttempts([items[i]], [ids[i]])).then(() => true as const, (e: Error) => e));
      }
      return results;
    }
  }

  /**
   * Runs a log statement; when it fails for an outage (not for its rows), the log is marked down (no new
   * attempt starts) and the statement is run again once PostgreSQL answers, for up to `outageHoldMs`.
   */
  private async durably<T>(run: () => Promise<T>): Promise<T> {
    const until = this.clock() + this.outageHoldMs;
    for (;;) {
      try {
        return await this.observed(run);
      } catch (err) {
        const left = until - this.clock();
        if (!isStoreUnreachable(err) || left <= 0 || !(await this.health.whenWritable(left))) throw err;
      }
    }
  }

  /** Runs a statement and tells the log's health what it learnt: PostgreSQL answered, or is out. */
  private async observed<T>(run: () => Promise<T>): Promise<T> {
    try {
      const result = await run();
      this.health.succeeded();
      return result;
    } catch (err) {
      if (isStoreUnreachable(err)) this.health.failed();
      else this.health.succeeded();
      throw err;
    }
  }
}

function settled<T>(result: T | Error): T {
  if (result instanceof Error) throw result;
  return result;
}
