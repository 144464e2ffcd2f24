import type { Redis } from 'ioredis';
import { createHash } from 'node:crypto';
import { KeyWindows, keyWindowsArgs, RateWindows, RateWindow } from './rate-windows';
import { RedisKeys, scriptCommand } from './redis';

/** Subjects (emails, IPs, token hashes) are hashed into keys: bounded length, no personal data in key names. */
const digest = (subject: string) => createHash('sha256').update(subject).digest('base64url').slice(0, 22);

/** Subjects whose window key is remembered (an API's callers are few and come back); the oldest goes first. */
const KEYS_REMEMBERED = 10_000;

/**
 * Request rate limits of the API, shared by every replica: one sliding window per (limit name, subject), e.g.
 * (`ip`, 203.0.113.7) or (`credential`, a key's token hash). Keys: `rate:<name>:<digest(subject)>`.
 */
export class RequestRateLimits {
  private readonly windows: RateWindows;
  private seq = 0;
  /** `<name> <subject>` → its window's key: one SHA-256 per subject, not one per limit per request. */
  private readonly windowKeys = new Map<string, string>();

  constructor(
    redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    this.windows = new RateWindows(redis);
  }

  /** Counts one request of `subject` against `name`'s window; a refusal counts nothing and says how long to wait. */
  async hit(name: string, subject: string, window: RateWindow): Promise<{ accepted: true } | { accepted: false; retryAfterMs: number }> {
    const decision = await this.hitAll([{ name, subject, window }]);
    return decision.accepted ? { accepted: true } : { accepted: false, retryAfterMs: decision.retryAfterMs };
  }

  /**
   * Counts one request against several limits at once (one round trip), or against none: when one refuses, the
   * others count nothing either. The refusal names the limit that frees last.
   */
  async hitAll(limits: ReadonlyArray<RequestLimit>): Promise<RequestLimitDecision> {
    const decision = await this.windows.tryAcceptAll(this.keyWindowsOf(limits), this.member());
    return decision.accepted ? { accepted: true } : { accepted: false, retryAfterMs: decision.retryAfterMs, name: limits[decision.key].name };
  }

  /**
   * `hitAll` as a part of another owner's script, for a request whose limits are counted in the same round trip as
   * its own work (a plain send: SendRateLimiter's script). The keys are these limits' own; the script passes them
   * and `args` to RateWindows' TRY_ACCEPT_ALL_FN, so the decision is `hitAll`'s, by the same code.
   */
  prepare(limits: ReadonlyArray<RequestLimit>): RequestLimitsHit {
    const windows = this.keyWindowsOf(limits);
    return { keys: windows.map((w) => w.key), args: [this.member(), ...keyWindowsArgs(windows)], names: limits.map((l) => l.name) };
  }

  /** Each limit's window key and its one window. */
  private keyWindowsOf(limits: ReadonlyArray<RequestLimit>): KeyWindows[] {
    return limits.map((l) => ({ key: this.windowKey(l.name, l.subject), windows: [l.window] }));
  }

  /** Unique per hit across replicas and restarts. */
  private member(): string {
    return `${process.pid}.${Date.now()}.${++this.seq}.${Math.random().toString(36).slice(2, 8)}`;
  }

  /** `rate:<name>:<digest(subject)>` under the prefix; subjects are IPs and credential ids, never secrets. */
  private windowKey(name: string, subject: string): string {
    const lookup = `${name} ${subject}`;
    let key = this.windowKeys.get(lookup);
    if (key === undefined) {
      key = this.keys.key(`rate:${name}:${digest(subject)}`);
      if (this.windowKeys.size >= KEYS_REMEMBERED) this.windowKeys.delete(this.windowKeys.keys().next().value!);
      this.windowKeys.set(lookup, key);
    }
    return key;
  }
}

/** One limit of a request: (`ip`, 203.0.113.7) at 3000 per minute. */
export interface RequestLimit {
  name: string;
  subject: string;
  window: RateWindow;
}

/**
 * A request's limits ready for a script: KEYS `keys`, then ARGV `args` (the hit's member, then TRY_ACCEPT_ALL_FN's
 * `readKeyWindows` encoding); a refusal's key k (1-based) is the limit `names[k - 1]`.
 */
export interface RequestLimitsHit {
  keys: string[];
  args: Array<string | number>;
  names: string[];
}

export type RequestLimitDecision = { accepted: true } | { accepted: false; retryAfterMs: number; name: string };

export interface BackoffPolicy {
  /** failures allowed before the first block */
  freeFailures: number;
  /** first block; doubles per further failure */
  baseMs: number;
  maxMs: number;
  /** failures are forgotten this long after the last one */
  memoryMs: number;
}

/**
 * Counts a failure; past the free ones, blocks the subject for base·2^(n-free-1), capped. Atomic, so concurrent
 * failures of one subject each double the block once.
 */
const FAIL = `
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local over = n - tonumber(ARGV[1])
if over <= 0 then return {n, 0} end
local block = tonumber(ARGV[2]) * (2 ^ math.min(over - 1, 40))
if block > tonumber(ARGV[3]) then block = tonumber(ARGV[3]) end
redis.call('SET', KEYS[2], '1', 'PX', math.floor(block))
return {n, math.floor(block)}
`;

/**
 * Exponential backoff after failed logins, per subject (an account's email, a client IP), across replicas.
 * Keys: `login-failures:<digest>` (count, forgotten after memoryMs) and `login-block:<digest>` (expires with the block).
 */
export class LoginBackoff {
  private readonly failScript: (numKeys: number, ...args: Array<string | number>) => Promise<[number, number]>;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    this.failScript = scriptCommand(redis, 'gwLoginBackoffFail', FAIL);
  }

  private failuresKey(subject: string): string {
    return this.keys.key(`login-failures:${digest(subject)}`);
  }

  private blockKey(subject: string): string {
    return this.keys.key(`login-block:${digest(subject)}`);
  }

  /** Milliseconds the subject must still wait, 0 when it may try. */
  async blockedFor(subject: string): Promise<number> {
    return Math.max(0, await this.redis.pttl(this.blockKey(subject)));
  }

  /** Counts a failed attempt; returns the block it earned (0 while within the free failures). */
  async failed(subject: string, policy: BackoffPolicy): Promise<number> {
    const [, block] = await this.failScript(
      2,
      this.failuresKey(subject),
      this.blockKey(subject),
      policy.freeFailures,
      policy.baseMs,
      policy.maxMs,
      policy.memoryMs,
    );
    return block;
  }

  /** A successful login forgets the subject's failures. */
  async succeeded(subject: string): Promise<void> {
    await this.redis.del(this.failuresKey(subject), this.blockKey(subject));
  }
}
