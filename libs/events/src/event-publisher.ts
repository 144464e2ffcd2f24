import type { Redis } from 'ioredis';
import type { CatalogEvent, EventEnvelope, EventPayloads, EventType } from '@app/contracts';
import { type Db, EventsRepository, newId, OutboxRows, type Tx } from '@app/database';
import { RedisKeys } from '@app/redis';
import { EventStream } from './event-stream';

/** What a producer names: an event of the catalog, its payload as the catalog describes it, and whose it is. */
export type PublishInput<T extends EventType = EventType> = CatalogEvent<T> & {
  organizationId: string;
  sessionId: string | null;
};

/**
 * Producers' side of the event pipeline. The envelope is first written to the `events` outbox table
 * (PostgreSQL is the record), then appended to the Redis stream (the engine). If the append is lost,
 * the dispatcher's reconciler fans the event out from the outbox.
 */
export class EventPublisher {
  private readonly outbox: EventsRepository;
  private readonly stream: EventStream;

  constructor(
    private readonly db: Db,
    redis: Redis,
    keyPrefix: string,
    private readonly clock: () => number = Date.now,
    /** approximate cap of the stream length (XADD MAXLEN ~) */
    maxLen = 100_000,
  ) {
    this.outbox = new EventsRepository(db);
    this.stream = new EventStream(redis, new RedisKeys(keyPrefix), maxLen);
  }

  build<T extends EventType>(input: PublishInput<T>): EventEnvelope<EventPayloads[T]> {
    return {
      id: newId('evt'),
      event: input.event,
      organizationId: input.organizationId,
      sessionId: input.sessionId,
      timestamp: this.clock(),
      payload: input.payload,
    };
  }

  async publish<T extends EventType>(input: PublishInput<T>): Promise<EventEnvelope<EventPayloads[T]>> {
    const envelope = this.build(input);
    await this.publishEnvelopes([envelope]);
    return envelope;
  }

  /**
   * A state change and the events announcing it, committed together: `work` runs in a transaction, writes through
   * `tx` and names its events with `publish`; their outbox rows are inserted in the same transaction, and appended
   * to the stream after the commit. A crash can lose neither without the other.
   */
  async transact<T>(work: (tx: Tx, publish: (input: PublishInput) => void) => Promise<T>): Promise<T> {
    const envelopes: EventEnvelope<object>[] = [];
    let rows = OutboxRows.none;
    const result = await this.db.transaction(async (tx) => {
      envelopes.length = 0;
      const value = await work(tx, (input) => void envelopes.push(this.build(input)));
      rows = this.outboxRows(envelopes);
      await this.outbox.insertOutbox(rows, tx);
      return value;
    });
    await this.append(rows.texts);
    return result;
  }

  /**
   * The one-statement form of `transact`, for a change whose events can be built before it is made: `write` runs one
   * statement that makes the change and inserts the given outbox rows with it (through `outboxInsertSql`, only when
   * it changed something), so a single round trip records both, atomically, and answers what it changed (anything
   * truthy) or that it changed nothing (false, null); the events are appended to the stream after it, and only then.
   */
  async withOutbox<T>(inputs: readonly PublishInput[], write: (outbox: OutboxRows) => Promise<T>): Promise<T> {
    const rows = this.outboxRows(inputs.map((input) => this.build(input)));
    const changed = await write(rows);
    if (changed) await this.append(rows.texts);
    return changed;
  }

  /**
   * `withOutbox` for a change of several rows in one statement, an event each: `write` writes each event only when its
   * row changed, and `wrote(result, i)` tells from its answer whether the i-th event was written; only those are
   * appended to the stream, after it.
   */
  async withOutboxEach<T>(inputs: readonly PublishInput[], write: (outbox: OutboxRows) => Promise<T>, wrote: (result: T, index: number) => boolean): Promise<T> {
    const rows = this.outboxRows(inputs.map((input) => this.build(input)));
    const result = await write(rows);
    await this.append(rows.texts.filter((_text, i) => wrote(result, i)));
    return result;
  }

  /** Writes many envelopes in one outbox insert and one scripted append. */
  async publishEnvelopes(envelopes: EventEnvelope<object>[]): Promise<void> {
    if (envelopes.length === 0) return;
    const rows = this.outboxRows(envelopes);
    await this.outbox.insertOutbox(rows);
    await this.append(rows.texts);
  }

  /** Serialized once: the same text goes to the outbox and to the stream. */
  private outboxRows(envelopes: EventEnvelope<object>[]): OutboxRows {
    return envelopes.length === 0 ? OutboxRows.none : new OutboxRows(envelopes, envelopes.map((e) => JSON.stringify(e)));
  }

  private async append(texts: readonly string[]): Promise<void> {
    if (texts.length === 0) return;
    try {
      await this.stream.append(texts);
    } catch {
      // the outbox row is the record; the reconciler picks it up
    }
  }
}
