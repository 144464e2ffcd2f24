import type { Redis } from 'ioredis';

/** At most `limit` hits in any `windowMs`. */
export interface RateWindow {
  limit: number;
  windowMs: number;
}

export type WindowDecision = { accepted: true; at: number } | { accepted: false; retryAfterMs: number; window: number };

/**
 * A sliding-window log in one sorted set: a member per accepted hit, scored by Redis' own clock (so every replica
 * counts against one time line). Accepting is atomic: the script counts the hits inside each window and adds the new
 * one only when every window stays within its limit. A refusal adds nothing and says when the oldest hit that blocks
 * it leaves its window (the exact Retry-After) and which window refused (the one that frees last).
 * ARGV: member, then limit and window (ms) per window.
 */
const TRY_ACCEPT = `
local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local longest = 0
for i = 3, #ARGV, 2 do
  local w = tonumber(ARGV[i])
  if w > longest then longest = w end
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - longest)
local wait = 0
local which = 0
for i = 2, #ARGV, 2 do
  local limit = tonumber(ARGV[i])
  local w = tonumber(ARGV[i + 1])
  local n = redis.call('ZCOUNT', key, '(' .. (now - w), '+inf')
  if n >= limit then
    local e = redis.call('ZRANGEBYSCORE', key, '(' .. (now - w), '+inf', 'WITHSCORES', 'LIMIT', n - limit, 1)
    local thisWait = tonumber(e[2]) + w - now
    if thisWait < 1 then thisWait = 1 end
    if thisWait > wait then
      wait = thisWait
      which = i / 2
    end
  end
end
if wait > 0 then return {0, wait, which} end
redis.call('ZADD', key, now, ARGV[1])
redis.call('PEXPIRE', key, longest)
return {1, now}
`;

/**
 * The one sliding-window algorithm behind every rate limit (per-session sends, API requests, logins). It speaks no
 * protocol of its own: the object that owns a limit builds the key and hands it in.
 */
export class RateWindows {
  constructor(private readonly redis: Redis) {}

  /** Counts `member` (unique per hit) against `key` if every window allows it; a refusal counts nothing. */
  async tryAccept(key: string, member: string, windows: readonly RateWindow[]): Promise<WindowDecision> {
    const args = windows.flatMap((w) => [w.limit, w.windowMs]);
    const [accepted, value, which] = (await this.redis.eval(TRY_ACCEPT, 1, key, member, ...args)) as [number, number, number?];
    if (accepted === 1) return { accepted: true, at: value };
    return { accepted: false, retryAfterMs: value, window: (which ?? 1) - 1 };
  }

  /** Takes back a counted hit that did not happen after all. */
  async release(key: string, member: string): Promise<void> {
    await this.redis.zrem(key, member);
  }
}
