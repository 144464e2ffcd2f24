import type { Redis } from 'ioredis';
import type { RedisKeys } from '@app/redis';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/**
 * One sorted set per session: a member per accepted send, scored by Redis' own clock (so every API replica counts
 * against one time line). Accepting is atomic: the script counts the sends in the last 60 s and 3600 s and adds the
 * new one only when both stay within the limits. A refusal adds nothing and says when the oldest send that blocks
 * it leaves its window, which is the exact Retry-After.
 */
const TRY_ACCEPT = `
local key = KEYS[1]
local perMin = tonumber(ARGV[1])
local perHour = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - ${HOUR_MS})
local inHour = redis.call('ZCARD', key)
local inMinute = redis.call('ZCOUNT', key, '(' .. (now - ${MINUTE_MS}), '+inf')
local wait = 0
local limit = 0
if inMinute >= perMin then
  local e = redis.call('ZRANGEBYSCORE', key, '(' .. (now - ${MINUTE_MS}), '+inf', 'WITHSCORES', 'LIMIT', inMinute - perMin, 1)
  wait = tonumber(e[2]) + ${MINUTE_MS} - now
  limit = 1
end
if inHour >= perHour then
  local e = redis.call('ZRANGE', key, inHour - perHour, inHour - perHour, 'WITHSCORES')
  local hourWait = tonumber(e[2]) + ${HOUR_MS} - now
  if hourWait > wait then
    wait = hourWait
    limit = 2
  end
end
if wait > 0 then return {0, wait, limit} end
redis.call('ZADD', key, now, ARGV[3])
redis.call('PEXPIRE', key, ${HOUR_MS})
return {1, now}
`;

/** The limit that refused a send (the one whose window frees last, when both are full). */
export type RateLimitName = 'ratePerMin' | 'ratePerHour';

export type RateDecision = { accepted: true; at: number } | { accepted: false; retryAfterMs: number; limit: RateLimitName };

export interface SendRates {
  ratePerMin: number;
  ratePerHour: number;
}

/** The per-session send rate (CONTRACT 10): at most ratePerMin sends in any 60 s and ratePerHour in any 3600 s. */
export class SendRateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  private key(sessionId: string): string {
    return this.keys.key(`send-rate:${sessionId}`);
  }

  /** Counts `sendId` against the session's windows if both allow it; a refusal counts nothing. */
  async tryAccept(sessionId: string, sendId: string, rates: SendRates): Promise<RateDecision> {
    const [accepted, value, limit] = (await this.redis.eval(TRY_ACCEPT, 1, this.key(sessionId), rates.ratePerMin, rates.ratePerHour, sendId)) as [
      number,
      number,
      number?,
    ];
    if (accepted === 1) return { accepted: true, at: value };
    return { accepted: false, retryAfterMs: value, limit: limit === 2 ? 'ratePerHour' : 'ratePerMin' };
  }

  /** Takes back a counted send that was not accepted after all (its insert failed). */
  async release(sessionId: string, sendId: string): Promise<void> {
    await this.redis.zrem(this.key(sessionId), sendId);
  }
}
