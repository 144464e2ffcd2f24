import type { Redis } from 'ioredis';
import { RedisKeys, scriptCommand } from '@app/redis';

/**
 * The inbound spool: what a WhatsApp connection received and the gateway has not yet made durable in PostgreSQL.
 *
 * On the Baileys engine the network's receipts are Baileys' own (it acks a message before it hands it to us), so the
 * gateway keeps its own copy first: an entry is appended as the event arrives, handed to the gateway, and removed once
 * the gateway has committed it. What is left is handed over again on the session's next connect, on this gateway or on
 * the one the session moved to (docs/decisions.md, "The inbound spool").
 *
 * One Redis stream per session, `<prefix>:inbound-spool:<sessionId>`, built only here. Payloads are opaque strings
 * (the engine serializes its events). Bounded: at `maxEntries` per session an append is refused (the event is still
 * handed over, only not crash-safe; counted as overflow). While Redis is unreachable, entries go to a bounded map in
 * this process (`memoryMaxEntries` in total): it survives a Redis blip, not a crash of this process.
 */

export type SpoolMedium = 'redis' | 'memory';

/** One spooled event. */
export interface SpoolEntry {
  readonly sessionId: string;
  /** unique within the session once written (`<stream id>`, or `memory:<n>` in the fallback); null until then */
  readonly id: string | null;
  readonly bytes: number;
  /** resolves true once the entry is durable in the spool, false when it could not be spooled (full); never rejects */
  readonly durable: Promise<boolean>;
  /**
   * Where it landed once `durable` resolved: `redis` survives this process (and is what another gateway replays),
   * `memory` only a Redis outage; null before, or when refused.
   */
  readonly medium: SpoolMedium | null;
}

export interface SpooledEvent {
  entry: SpoolEntry;
  payload: string;
}

/** What an engine needs of a spool (the class below over Redis; a fake in unit specs). */
export interface EventSpool {
  /** Starts writing at once (the command is queued before this returns); `entry.durable` says when it landed. */
  append(sessionId: string, payload: string): SpoolEntry;
  /** The gateway took the entry: it leaves the spool. Idempotent; never throws. */
  remove(entry: SpoolEntry): void;
  /** Everything spooled for the session, oldest first (Redis, then what this process holds in memory). */
  pending(sessionId: string): Promise<SpooledEvent[]>;
}

/** Counters the process exposes; the gateway backs them with its metrics registry. */
export interface InboundSpoolMetrics {
  appended(medium: SpoolMedium, bytes: number): void;
  removed(medium: SpoolMedium): void;
  /** entries handed over again from the spool on a connect */
  replayed(count: number): void;
  /** appends refused (the session's spool, or the memory fallback, is full) */
  overflowed(medium: SpoolMedium): void;
}

export interface InboundSpoolLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface InboundSpoolOptions {
  /** entries per session; an append beyond it is refused (default 10 000) */
  maxEntries?: number;
  /** entries held in this process while Redis is unreachable, all sessions together (default 10 000) */
  memoryMaxEntries?: number;
  /**
   * a Redis write or read slower than this falls back to memory (default 5000 ms): a Redis that accepts commands and
   * never answers. An unreachable one is known at once (the client is not ready) and costs no wait.
   */
  timeoutMs?: number;
  /** a session's stream expires this long after its last append (default 14 days): a deleted session leaves nothing */
  ttlMs?: number;
  metrics?: InboundSpoolMetrics;
  logger?: InboundSpoolLogger;
}

/** The stream's one field. */
const FIELD = 'e';

/** XADD unless the stream holds ARGV[1] entries already (then nil); refreshes the key's expiry (ARGV[2] ms). */
const APPEND = `if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then return false end
local id = redis.call('XADD', KEYS[1], '*', '${FIELD}', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return id`;

class Entry implements SpoolEntry {
  durable!: Promise<boolean>;
  /** where it lives: a stream id, or the key of the memory map; null until written, or when refused */
  redisId: string | null = null;
  memoryId: number | null = null;
  removed = false;
  constructor(
    readonly sessionId: string,
    readonly bytes: number,
  ) {}
  get medium(): SpoolMedium | null {
    return this.redisId ? 'redis' : this.memoryId !== null ? 'memory' : null;
  }
  get id(): string | null {
    return this.redisId ?? (this.memoryId !== null ? `memory:${this.memoryId}` : null);
  }
}

type Outcome = { kind: 'written'; id: string } | { kind: 'full' } | { kind: 'failed'; err: unknown } | { kind: 'timeout' };

export class InboundSpool implements EventSpool {
  private readonly maxEntries: number;
  private readonly memoryMaxEntries: number;
  private readonly timeoutMs: number;
  private readonly ttlMs: number;
  private readonly appendScript: (numKeys: number, ...args: string[]) => Promise<string | null>;
  /**
   * What this process knows to be in the Redis spool, per session: entries it wrote or read there and has not deleted.
   * Kept on append, delete and read, so `measure()` costs no Redis command (a scrape used to cost two per session).
   */
  private readonly inRedis = new Map<string, { entries: number; bytes: number }>();
  private readonly inRedisTotal = { entries: 0, bytes: 0 };
  /** the memory fallback: session → (memory id → payload), in insertion order */
  private readonly memory = new Map<string, Map<number, { entry: Entry; payload: string }>>();
  private memoryCount = 0;
  private memorySeq = 0;
  /** Redis calls in flight and when they are given up on (withTimeout) */
  private readonly waiters = new Set<{ deadline: number; expire: () => void }>();
  private sweep: NodeJS.Timeout | null = null;
  /** sessions whose spool refused an append; warned once until an append succeeds again */
  private readonly fullWarned = new Set<string>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly options: InboundSpoolOptions = {},
  ) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.memoryMaxEntries = options.memoryMaxEntries ?? 10_000;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.ttlMs = options.ttlMs ?? 14 * 24 * 3600_000;
    this.appendScript = scriptCommand(redis, 'gwInboundSpoolAppend', APPEND);
  }

  private key(sessionId: string): string {
    return this.keys.key(`inbound-spool:${sessionId}`);
  }

  /** The memory fallback: entries and payload bytes this process holds because Redis was unreachable. */
  memoryStats(): { entries: number; bytes: number } {
    let bytes = 0;
    for (const held of this.memory.values()) for (const { entry } of held.values()) bytes += entry.bytes;
    return { entries: this.memoryCount, bytes };
  }

  /**
   * The spool in Redis as this process counted it (what it wrote or read there and has not deleted): sessions with
   * entries, entries, payload bytes. For the metrics scrape, in O(1): no Redis command. Entries another gateway
   * removed after this one wrote them (a session that moved) are counted until this process reads the session again.
   */
  async measure(): Promise<{ sessions: number; entries: number; bytes: number }> {
    return Promise.resolve({ sessions: this.inRedis.size, ...this.inRedisTotal });
  }

  /** `entries` and `bytes` more (or fewer) of the session's entries are in Redis. */
  private countInRedis(sessionId: string, entries: number, bytes: number): void {
    const counted = this.inRedis.get(sessionId) ?? { entries: 0, bytes: 0 };
    // never below zero: an entry read twice (two replays) is deleted twice
    const next = { entries: Math.max(0, counted.entries + entries), bytes: Math.max(0, counted.bytes + bytes) };
    this.inRedisTotal.entries += next.entries - counted.entries;
    this.inRedisTotal.bytes += next.bytes - counted.bytes;
    if (next.entries > 0) this.inRedis.set(sessionId, next);
    else this.inRedis.delete(sessionId);
  }

  append(sessionId: string, payload: string): SpoolEntry {
    const entry = new Entry(sessionId, Buffer.byteLength(payload));
    entry.durable = this.write(entry, payload);
    return entry;
  }

  remove(spooled: SpoolEntry): void {
    const entry = spooled as Entry;
    if (entry.removed) return;
    entry.removed = true;
    const medium = entry.medium;
    if (entry.memoryId !== null) this.dropFromMemory(entry);
    if (entry.redisId) this.deleteFromRedis(entry);
    if (medium) this.options.metrics?.removed(medium);
  }

  async pending(sessionId: string): Promise<SpooledEvent[]> {
    const found: SpooledEvent[] = [];
    // a client still connecting (a gateway starting) is asked too, bounded by the timeout; only a closed one is not
    if (this.redis.status !== 'end') {
      if (this.redis.status === 'ready') await this.moveToRedis(sessionId);
      const read = await this.withTimeout(this.redis.xrange(this.key(sessionId), '-', '+', 'COUNT', this.maxEntries));
      if (read.kind === 'ok') {
        // what Redis holds for the session now replaces what this process had counted of it
        const counted = this.inRedis.get(sessionId);
        if (counted) this.countInRedis(sessionId, -counted.entries, -counted.bytes);
        for (const [id, fields] of read.value) {
          const payload = fields[fields.indexOf(FIELD) + 1];
          if (payload === undefined) continue;
          const entry = new Entry(sessionId, Buffer.byteLength(payload));
          entry.redisId = id;
          this.countInRedis(sessionId, 1, entry.bytes);
          entry.durable = Promise.resolve(true);
          found.push({ entry, payload });
        }
      } else {
        this.options.logger?.warn({ sessionId, err: read.kind === 'failed' ? String(read.err) : 'timeout' }, 'reading the inbound spool failed; replaying what this process holds');
      }
    }
    for (const { entry, payload } of this.memory.get(sessionId)?.values() ?? []) found.push({ entry, payload });
    if (found.length) this.options.metrics?.replayed(found.length);
    return found;
  }

  /** What Redis' outage left in memory goes back to Redis, so a crash of this process or a move no longer strands it. */
  private async moveToRedis(sessionId: string): Promise<void> {
    for (const { entry, payload } of [...(this.memory.get(sessionId)?.values() ?? [])]) {
      const outcome = await this.appendToRedis(entry, payload);
      if (outcome.kind !== 'written') return;
      this.dropFromMemory(entry);
      entry.redisId = outcome.id;
      this.countInRedis(entry.sessionId, 1, entry.bytes);
      if (entry.removed) this.deleteFromRedis(entry);
    }
  }

  private async write(entry: Entry, payload: string): Promise<boolean> {
    if (this.redis.status !== 'ready') return this.toMemory(entry, payload);
    const outcome = await this.appendToRedis(entry, payload);
    switch (outcome.kind) {
      case 'written':
        entry.redisId = outcome.id;
        this.countInRedis(entry.sessionId, 1, entry.bytes);
        this.fullWarned.delete(entry.sessionId);
        this.options.metrics?.appended('redis', entry.bytes);
        // the gateway may have taken it while the write was on its way
        if (entry.removed) this.deleteFromRedis(entry);
        return true;
      case 'full':
        this.options.metrics?.overflowed('redis');
        if (!this.fullWarned.has(entry.sessionId)) {
          this.fullWarned.add(entry.sessionId);
          this.options.logger?.error({ sessionId: entry.sessionId, maxEntries: this.maxEntries }, 'inbound spool full: events are handed over without a spooled copy until it drains');
        }
        return false;
      default:
        this.options.logger?.warn(
          { sessionId: entry.sessionId, err: outcome.kind === 'failed' ? String(outcome.err) : `no answer within ${this.timeoutMs} ms` },
          'inbound spool write to Redis failed; holding the entry in memory',
        );
        return this.toMemory(entry, payload);
    }
  }

  /**
   * XADD, bounded by `timeoutMs`. The client queues commands while it reconnects, so a write given up on may still land
   * later: the entry is in memory by then, and the late copy is deleted at once (one copy is enough).
   */
  private async appendToRedis(entry: Entry, payload: string): Promise<Outcome> {
    const key = this.key(entry.sessionId);
    const write = this.appendScript(1, key, String(this.maxEntries), String(this.ttlMs), payload);
    const raced = await this.withTimeout(write);
    if (raced.kind === 'ok') return raced.value ? { kind: 'written', id: raced.value } : { kind: 'full' };
    if (raced.kind === 'timeout') {
      write.then(
        (lateId) => lateId && void this.redis.xdel(key, lateId).catch(() => undefined),
        () => undefined,
      );
      return { kind: 'timeout' };
    }
    return raced;
  }

  /**
   * Settles with the outcome of `work`, or `timeout` once `timeoutMs` passed (give or take a quarter). One sweep timer
   * for all the writes in flight, not one timer per write: a burst of appends is the hot path (the bench's figures).
   */
  private withTimeout<T>(work: Promise<T>): Promise<{ kind: 'ok'; value: T } | { kind: 'failed'; err: unknown } | { kind: 'timeout' }> {
    return new Promise((resolve) => {
      const waiter = { deadline: Date.now() + this.timeoutMs, expire: () => resolve({ kind: 'timeout' }) };
      this.waiters.add(waiter);
      this.armSweep();
      work.then(
        (value) => {
          this.waiters.delete(waiter);
          resolve({ kind: 'ok', value });
        },
        (err: unknown) => {
          this.waiters.delete(waiter);
          resolve({ kind: 'failed', err });
        },
      );
    });
  }

  private armSweep(): void {
    if (this.sweep) return;
    this.sweep = setInterval(() => {
      const now = Date.now();
      for (const waiter of this.waiters) {
        if (waiter.deadline > now) continue;
        this.waiters.delete(waiter);
        waiter.expire();
      }
      if (!this.waiters.size) {
        clearInterval(this.sweep!);
        this.sweep = null;
      }
    }, Math.max(10, Math.floor(this.timeoutMs / 4)));
    // a spool never keeps the process alive
    this.sweep.unref();
  }

  private toMemory(entry: Entry, payload: string): boolean {
    if (this.memoryCount >= this.memoryMaxEntries) {
      this.options.metrics?.overflowed('memory');
      this.options.logger?.error({ sessionId: entry.sessionId, memoryMaxEntries: this.memoryMaxEntries }, 'inbound spool: Redis is unreachable and the memory fallback is full; the event is handed over unspooled');
      return false;
    }
    if (entry.removed) return true;
    entry.memoryId = ++this.memorySeq;
    let held = this.memory.get(entry.sessionId);
    if (!held) this.memory.set(entry.sessionId, (held = new Map()));
    held.set(entry.memoryId, { entry, payload });
    this.memoryCount += 1;
    this.options.metrics?.appended('memory', entry.bytes);
    return true;
  }

  private dropFromMemory(entry: Entry): void {
    const held = this.memory.get(entry.sessionId);
    if (held?.delete(entry.memoryId!)) this.memoryCount -= 1;
    if (held && !held.size) this.memory.delete(entry.sessionId);
    entry.memoryId = null;
  }

  /** A failed delete leaves the entry to be handed over again (the gateway drops repeats); never lost. */
  private deleteFromRedis(entry: Entry): void {
    this.countInRedis(entry.sessionId, -1, -entry.bytes);
    this.redis.xdel(this.key(entry.sessionId), entry.redisId!).catch((err) => {
      this.options.logger?.warn({ sessionId: entry.sessionId, err: String(err) }, 'removing a taken entry from the inbound spool failed; it will be handed over again');
    });
  }
}
