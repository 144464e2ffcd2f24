import type { Redis } from 'ioredis';
import { DISPATCHER_CONSUMER_GROUP, EVENT_STREAM } from '@app/contracts';
import { RedisKeys, scriptCommand } from '@app/redis';

/** One stream entry as Redis returns it: its id and its flat field/value list. */
export type StreamEntry = [id: string, fields: string[]];

/** XADD of every envelope given, in order, to the stream KEYS[1] capped at ~ARGV[1] entries. */
const APPEND_ENVELOPES = `for i = 2, #ARGV do redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'envelope', ARGV[i]) end
return #ARGV - 1`;
/** Envelopes per script call: bounds how long one call holds Redis (it serves nothing else meanwhile). */
const APPEND_CHUNK = 1000;

/**
 * Both sides of the event stream: producers append envelopes (the outbox insert comes first, in
 * EventPublisher); the dispatchers read it as one consumer group (replicas share the work, entries
 * stay pending until acknowledged and are taken over when idle); an API replica tails it (every
 * replica sees every event). The only place that knows the stream's key, its field and its group.
 */
export class EventStream {
  private readonly key: string;

  private readonly appendScript: (numKeys: number, ...args: string[]) => Promise<number>;

  constructor(
    /** a blocking read holds its connection: readers get one of their own */
    private readonly redis: Redis,
    keys: RedisKeys,
    /** approximate cap of the stream length (XADD MAXLEN ~) */
    private readonly maxLen = 100_000,
  ) {
    this.key = keys.key(EVENT_STREAM);
    this.appendScript = scriptCommand(redis, 'gwAppendEnvelopes', APPEND_ENVELOPES);
  }

  /** The envelope text of an entry (as published), undefined when it has none. */
  static envelopeOf(fields: string[]): string | undefined {
    const i = fields.indexOf('envelope');
    return i < 0 ? undefined : fields[i + 1];
  }

  /** True for the error of a group read on a stream (or a Redis) that lost the group. */
  static isMissingGroup(err: unknown): boolean {
    return String((err as Error)?.message).includes('NOGROUP');
  }

  /** Appends serialized envelopes, in order. */
  async append(texts: readonly string[]): Promise<void> {
    // one script call appends the whole batch: building and parsing a pipelined XADD per event cost ioredis several
    // times more than one script call's arguments (Redis's own work is the same either way)
    for (let i = 0; i < texts.length; i += APPEND_CHUNK) {
      await this.appendScript(1, this.key, String(this.maxLen), ...texts.slice(i, i + APPEND_CHUNK));
    }
  }

  /** Creates the dispatchers' group (and the stream) unless it exists; it starts reading at `startId`. */
  async ensureGroup(startId: '$' | '0'): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', this.key, DISPATCHER_CONSUMER_GROUP, startId, 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
  }

  /** Up to `count` entries never delivered to the group, waiting up to `blockMs` for one. */
  async readGroup(consumer: string, count: number, blockMs: number): Promise<StreamEntry[]> {
    const res = (await this.redis.xreadgroup(
      'GROUP', DISPATCHER_CONSUMER_GROUP, consumer,
      'COUNT', count, 'BLOCK', blockMs,
      'STREAMS', this.key, '>',
    )) as [string, StreamEntry[]][] | null;
    return res ? res.flatMap(([, entries]) => entries) : [];
  }

  /**
   * Takes over entries another consumer left pending longer than `idleMs`, from `cursor`; `next` is
   * '0-0' once the pending list is walked. Entries deleted meanwhile are left out.
   */
  async claimIdle(consumer: string, idleMs: number, cursor: string, count: number): Promise<{ next: string; entries: StreamEntry[] }> {
    const [next, entries] = (await this.redis.xautoclaim(
      this.key, DISPATCHER_CONSUMER_GROUP, consumer, idleMs, cursor, 'COUNT', count,
    )) as [string, StreamEntry[], ...unknown[]];
    return { next, entries: entries.filter((e) => e && e[1]) };
  }

  async ack(entryIds: readonly string[]): Promise<void> {
    if (entryIds.length) await this.redis.xack(this.key, DISPATCHER_CONSUMER_GROUP, ...entryIds);
  }

  /** Entries after `lastId` ('$': from now), outside any group, waiting up to `blockMs` for one. */
  async readAfter(lastId: string, count: number, blockMs: number): Promise<StreamEntry[]> {
    const res = (await this.redis.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', this.key, lastId)) as [string, StreamEntry[]][] | null;
    return res ? res.flatMap(([, entries]) => entries) : [];
  }
}
