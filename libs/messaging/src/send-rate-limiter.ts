import type { Redis } from 'ioredis';
import { RateWindows, scriptCommand, type RedisKeys } from '@app/redis';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** The limit that refused a send (the one whose window frees last, when both are full). */
export type RateLimitName = 'ratePerMin' | 'ratePerHour';

export type RateDecision = { accepted: true; at: number } | { accepted: false; retryAfterMs: number; limit: RateLimitName };

export interface SendRates {
  ratePerMin: number;
  ratePerHour: number;
}

/**
 * A batch against one session's windows (the sliding-window log of RateWindows, same key and members): the first k
 * members are counted, k being the most every window still allows (a prefix, so acceptance keeps the batch's order);
 * the rest count nothing. A refused member would be admitted once the window holding the oldest blocking hit lets it
 * go, the same wait for each of them (refusals are not counted): that wait and the window that frees last.
 * KEYS[1]: the session's key. ARGV: number of members, the members, then limit and window (ms) per window.
 * Returns {k, now, wait, window (1-based; 0 when all were accepted)}.
 */
const TRY_ACCEPT_MANY = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = tonumber(ARGV[1])
local first = n + 2
local long = 0
for i = first, #ARGV, 2 do
  local w = tonumber(ARGV[i + 1])
  if w > long then long = w end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - long)
local k = n
local counts = {}
for i = first, #ARGV, 2 do
  local limit = tonumber(ARGV[i])
  local w = tonumber(ARGV[i + 1])
  local c = redis.call('ZCOUNT', KEYS[1], '(' .. (now - w), '+inf')
  counts[i] = c
  local room = limit - c
  if room < 0 then room = 0 end
  if room < k then k = room end
end
for j = 1, k do
  redis.call('ZADD', KEYS[1], now, ARGV[1 + j])
end
if k > 0 then redis.call('PEXPIRE', KEYS[1], long) end
local wait = 0
local which = 0
if k < n then
  for i = first, #ARGV, 2 do
    local limit = tonumber(ARGV[i])
    local w = tonumber(ARGV[i + 1])
    local c = counts[i]
    if c + k >= limit then
      local thisWait = w
      if c + k - limit < c then
        local e = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - w), '+inf', 'WITHSCORES', 'LIMIT', c + k - limit, 1)
        thisWait = tonumber(e[2]) + w - now
      end
      if thisWait < 1 then thisWait = 1 end
      if thisWait > wait then
        wait = thisWait
        which = (i - first) / 2 + 1
      end
    end
  end
end
return {k, now, wait, which}
`;

/** What a batch got: the first `accepted` members are counted; the rest wait `retryAfterMs` for the `limit` that frees last. */
export type BatchRateDecision = { accepted: number; retryAfterMs: number; limit: RateLimitName | null };

/**
 * The per-session send rate (CONTRACT 10): at most ratePerMin sends in any 60 s and ratePerHour in any 3600 s, one
 * sorted set per session counted by the shared sliding-window script.
 */
export class SendRateLimiter {
  private readonly windows: RateWindows;
  private readonly many: (numKeys: number, ...args: Array<string | number>) => Promise<[number, number, number, number]>;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    this.windows = new RateWindows(redis);
    this.many = scriptCommand(redis, 'gwSendRateTryAcceptMany', TRY_ACCEPT_MANY);
  }

  private key(sessionId: string): string {
    return this.keys.key(`send-rate:${sessionId}`);
  }

  /** Counts `sendId` against the session's windows if both allow it; a refusal counts nothing. */
  async tryAccept(sessionId: string, sendId: string, rates: SendRates): Promise<RateDecision> {
    const decision = await this.windows.tryAccept(this.key(sessionId), sendId, [
      { limit: rates.ratePerMin, windowMs: MINUTE_MS },
      { limit: rates.ratePerHour, windowMs: HOUR_MS },
    ]);
    if (decision.accepted) return decision;
    return { accepted: false, retryAfterMs: decision.retryAfterMs, limit: decision.window === 1 ? 'ratePerHour' : 'ratePerMin' };
  }

  /**
   * Counts the longest prefix of `sendIds` both windows allow, in one round trip: a bulk send's items in order, each
   * as if sent alone one after another at this instant (so the counts are exact), the rest counted nothing.
   */
  async tryAcceptMany(sessionId: string, sendIds: readonly string[], rates: SendRates): Promise<BatchRateDecision> {
    if (sendIds.length === 0) return { accepted: 0, retryAfterMs: 0, limit: null };
    const [accepted, , wait, which] = await this.many(1, this.key(sessionId), sendIds.length, ...sendIds, rates.ratePerMin, MINUTE_MS, rates.ratePerHour, HOUR_MS);
    return { accepted, retryAfterMs: wait, limit: which === 0 ? null : which === 2 ? 'ratePerHour' : 'ratePerMin' };
  }

  /** Takes back counted sends of a batch that were not accepted after all (one ZREM). */
  async releaseMany(sessionId: string, sendIds: readonly string[]): Promise<void> {
    if (sendIds.length > 0) await this.redis.zrem(this.key(sessionId), ...sendIds);
  }

  /** Takes back a counted send that was not accepted after all (its insert failed). */
  async release(sessionId: string, sendId: string): Promise<void> {
    await this.windows.release(this.key(sessionId), sendId);
  }
}
