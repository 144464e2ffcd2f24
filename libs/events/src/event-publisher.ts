import type { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import { EVENT_STREAM, EventEnvelope, EventType } from '@app/contracts';
import { newId, pgArray } from '@app/database';

export interface PublishInput<P> {
  event: EventType;
  organizationId: string;
  sessionId: string | null;
  payload: P;
}

/** XADD of every envelope given, in order, to the stream KEYS[1] capped at ~ARGV[1] entries. */
const APPEND_ENVELOPES = `for i = 2, #ARGV do redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'envelope', ARGV[i]) end
return #ARGV - 1`;
/** Envelopes per script call: bounds how long one call holds Redis (~1.3 µs each). */
const APPEND_CHUNK = 1000;

/**
 * Producers' side of the event pipeline. The envelope is first written to the `events` outbox table
 * (PostgreSQL is the record), then appended to the Redis stream (the engine). If the append is lost,
 * the dispatcher's reconciler fans the event out from the outbox.
 */
export class EventPublisher {
  private readonly streamKey: string;

  constructor(
    private readonly db: DataSource,
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly clock: () => number = Date.now,
    /** approximate cap of the stream length (XADD MAXLEN ~) */
    private readonly maxLen = 100_000,
  ) {
    this.streamKey = `${keyPrefix}:${EVENT_STREAM}`;
  }

  build<P extends object>(input: PublishInput<P>): EventEnvelope<P> {
    return {
      id: newId('evt'),
      event: input.event,
      organizationId: input.organizationId,
      sessionId: input.sessionId,
      timestamp: this.clock(),
      payload: input.payload,
    };
  }

  async publish<P extends object>(input: PublishInput<P>): Promise<EventEnvelope<P>> {
    const envelope = this.build(input);
    await this.publishEnvelopes([envelope]);
    return envelope;
  }

  /** Writes many envelopes in one outbox insert and one pipelined append. */
  async publishEnvelopes(envelopes: EventEnvelope<object>[]): Promise<void> {
    if (envelopes.length === 0) return;
    // serialized once: the same text goes to the outbox and to the stream
    const texts = envelopes.map((e) => JSON.stringify(e));
    // one array parameter per column, the envelope as text cast per row: PostgreSQL spends ~9 µs per
    // event on this against ~13 µs for a VALUES list of five parameters per row (docs/webhook-delivery.md)
    await this.db.query(
      `INSERT INTO events (id, organization_id, session_id, type, envelope)
       SELECT u.id, u.organization_id, u.session_id, u.type, u.envelope::jsonb
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, organization_id, session_id, type, envelope)
       ON CONFLICT (id) DO NOTHING`,
      [
        pgArray(envelopes.map((e) => e.id)),
        pgArray(envelopes.map((e) => e.organizationId)),
        pgArray(envelopes.map((e) => e.sessionId)),
        pgArray(envelopes.map((e) => e.event)),
        pgArray(texts),
      ],
    );
    try {
      // one script call appends the whole batch: ioredis spent ~5 µs per event building and parsing a
      // pipelined XADD each, the script ~0.5 µs (Redis itself the same ~1.3 µs either way)
      for (let i = 0; i < texts.length; i += APPEND_CHUNK) {
        await this.redis.eval(APPEND_ENVELOPES, 1, this.streamKey, String(this.maxLen), ...texts.slice(i, i + APPEND_CHUNK));
      }
    } catch {
      // the outbox row is the record; the reconciler picks it up
    }
  }
}
