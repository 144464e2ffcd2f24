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
 * Moves entries of the dispatchers' group to per-organization backlog streams, atomically: KEYS[1] the stream, KEYS[2]
 * the set of organizations with a backlog, KEYS[3..] the backlog streams. ARGV: group, cap, then per organization its
 * id, its KEYS index, its entry count n and n (entry id, envelope) pairs. A backlog stream is created with the group
 * reading it from its start; each entry is appended there and acknowledged here in the same script.
 */
const PARK_ENTRIES = `local group, cap, i = ARGV[1], ARGV[2], 3
while i <= #ARGV do
  local org, key, n = ARGV[i], KEYS[tonumber(ARGV[i + 1])], tonumber(ARGV[i + 2])
  i = i + 3
  if redis.call('EXISTS', key) == 0 then redis.call('XGROUP', 'CREATE', key, group, '0', 'MKSTREAM') end
  redis.call('SADD', KEYS[2], org)
  for j = 1, n do
    redis.call('XADD', key, 'MAXLEN', '~', cap, '*', 'envelope', ARGV[i + 1])
    redis.call('XACK', KEYS[1], group, ARGV[i])
    i = i + 2
  end
end
return 1`;

/**
 * Acknowledges and deletes entries of a backlog stream (KEYS[1]); once it holds none, read or not, the stream goes
 * and its organization (ARGV[2]) leaves the set (KEYS[2]). ARGV: group, organization, entry ids. Returns its length.
 */
const ACK_BACKLOG = `if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SREM', KEYS[2], ARGV[2])
  return 0
end
for i = 3, #ARGV do
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[i])
  redis.call('XDEL', KEYS[1], ARGV[i])
end
local left = redis.call('XLEN', KEYS[1])
if left == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2], ARGV[2])
end
return left`;

/** Entries of one organization to move to its backlog stream: the group's entry ids and the envelope text. */
export interface ParkedEntry {
  entryId: string;
  text: string;
}

/**
 * Both sides of the event stream: producers append envelopes (the outbox insert comes first, in
 * EventPublisher); the dispatchers read it as one consumer group (replicas share the work, entries
 * stay pending until acknowledged and are taken over when idle); an API replica tails it (every
 * replica sees every event). The only place that knows the stream's key, its field and its group.
 */
export class EventStream {
  private readonly key: string;
  /** the organizations with a backlog stream (a set) */
  private readonly backlogSet: string;

  private readonly appendScript: (numKeys: number, ...args: string[]) => Promise<number>;
  private readonly parkScript: (numKeys: number, ...args: string[]) => Promise<number>;
  private readonly ackBacklogScript: (numKeys: number, ...args: string[]) => Promise<number>;

  constructor(
    /** a blocking read holds its connection: readers get one of their own */
    private readonly redis: Redis,
    keys: RedisKeys,
    /** approximate cap of the stream length (XADD MAXLEN ~) */
    private readonly maxLen = 100_000,
  ) {
    this.key = keys.key(EVENT_STREAM);
    this.backlogSet = keys.key(`${EVENT_STREAM}:backlogs`);
    this.appendScript = scriptCommand(redis, 'gwAppendEnvelopes', APPEND_ENVELOPES);
    this.parkScript = scriptCommand(redis, 'gwParkEntries', PARK_ENTRIES);
    this.ackBacklogScript = scriptCommand(redis, 'gwAckBacklog', ACK_BACKLOG);
  }

  /** An organization's backlog stream: the entries the dispatchers read past, in their order. */
  private backlogKey(organizationId: string): string {
    return `${this.key}:backlog:${organizationId}`;
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

  /**
   * Moves entries of the group to their organizations' backlog streams and acknowledges them here, in one atomic
   * script: an entry is either pending here or in its backlog stream, never neither. Capped like the stream (an entry
   * trimmed there is fanned out from the outbox by the reconciler, as one trimmed here).
   */
  async park(byOrganization: ReadonlyMap<string, readonly ParkedEntry[]>): Promise<void> {
    const keys = [this.key, this.backlogSet];
    const args = [DISPATCHER_CONSUMER_GROUP, String(this.maxLen)];
    for (const [organizationId, entries] of byOrganization) {
      if (entries.length === 0) continue;
      keys.push(this.backlogKey(organizationId));
      args.push(organizationId, String(keys.length), String(entries.length));
      for (const e of entries) args.push(e.entryId, e.text);
    }
    if (keys.length > 2) await this.parkScript(keys.length, ...keys, ...args);
  }

  /** The organizations that have a backlog stream. */
  async backlogs(): Promise<string[]> {
    return this.redis.smembers(this.backlogSet);
  }

  /** Up to `count` entries of an organization's backlog stream never delivered to the group (no wait). */
  async readBacklog(consumer: string, organizationId: string, count: number): Promise<StreamEntry[]> {
    try {
      const res = (await this.redis.xreadgroup(
        'GROUP', DISPATCHER_CONSUMER_GROUP, consumer, 'COUNT', count, 'STREAMS', this.backlogKey(organizationId), '>',
      )) as [string, StreamEntry[]][] | null;
      return res ? res.flatMap(([, entries]) => entries) : [];
    } catch (err) {
      // emptied and removed meanwhile (or Redis lost it: the reconciler fans its events out from the outbox)
      if (EventStream.isMissingGroup(err)) return [];
      throw err;
    }
  }

  /** Entries of an organization's backlog stream another consumer left pending longer than `idleMs` (one page). */
  async claimBacklog(consumer: string, organizationId: string, idleMs: number, count: number): Promise<StreamEntry[]> {
    try {
      const [, entries] = (await this.redis.xautoclaim(
        this.backlogKey(organizationId), DISPATCHER_CONSUMER_GROUP, consumer, idleMs, '0-0', 'COUNT', count,
      )) as [string, StreamEntry[], ...unknown[]];
      return entries.filter((e) => e && e[1]);
    } catch (err) {
      if (EventStream.isMissingGroup(err)) return [];
      throw err;
    }
  }

  /**
   * Acknowledges (and deletes) entries of an organization's backlog stream; an emptied stream is removed. Returns the
   * entries it still holds.
   */
  async ackBacklog(organizationId: string, entryIds: readonly string[]): Promise<number> {
    return this.ackBacklogScript(2, this.backlogKey(organizationId), this.backlogSet, DISPATCHER_CONSUMER_GROUP, organizationId, ...entryIds);
  }

  /** Entries after `lastId` ('$': from now), outside any group, waiting up to `blockMs` for one. */
  async readAfter(lastId: string, count: number, blockMs: number): Promise<StreamEntry[]> {
    const res = (await this.redis.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', this.key, lastId)) as [string, StreamEntry[]][] | null;
    return res ? res.flatMap(([, entries]) => entries) : [];
  }
}
