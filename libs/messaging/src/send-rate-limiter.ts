import type { Redis } from 'ioredis';
import { RateWindows, REDIS_NOW_FN, type RedisKeys, type RequestLimitsHit, scriptCommand, TRY_ACCEPT_ALL_FN } from '@app/redis';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** The limit that refused a send (the one whose window frees last, when both are full). */
export type RateLimitName = 'ratePerMin' | 'ratePerHour';

export type RateDecision = { accepted: true; at: number } | { accepted: false; retryAfterMs: number; limit: RateLimitName };

/**
 * A send counted against the rates this limiter keeps (`tryAcceptKept`), or why it could not be decided here; with
 * the request's limits, `requestLimited` when one of them refused the request (nothing counted).
 */
export type KeptRateDecision =
  | RateDecision
  | { unknown: true; gen: string }
  | { stranger: true }
  | { requestLimited: { name: string; retryAfterMs: number } };

export interface SendRates {
  ratePerMin: number;
  ratePerHour: number;
}

/**
 * A batch against one session's windows (the sliding-window log of RateWindows, same key and members): the first k
 * members are counted, k being the most every window still allows (a prefix, so acceptance keeps the batch's order);
 * the rest count nothing. A refused member would be admitted once the window holding the oldest blocking hit lets it
 * go, the same wait for each of them (refusals are not counted): that wait and the window that frees last.
 * `acceptMany(now, key, members, windows)`, now Redis' clock (ms), windows a list of {limit, window (ms)}, returns
 * {k, now, wait, window (1-based; 0 when all were accepted)}. A Lua function, for the scripts below to call (one copy
 * of the Lua).
 */
const ACCEPT_MANY_FN = `
local function acceptMany(now, key, members, windows)
  local n = #members
  local long = 0
  for _, w in ipairs(windows) do
    if w[2] > long then long = w[2] end
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - long)
  local k = n
  local counts = {}
  for i, w in ipairs(windows) do
    local c = redis.call('ZCOUNT', key, '(' .. (now - w[2]), '+inf')
    counts[i] = c
    local room = w[1] - c
    if room < 0 then room = 0 end
    if room < k then k = room end
  end
  for j = 1, k do
    redis.call('ZADD', key, now, members[j])
  end
  if k > 0 then redis.call('PEXPIRE', key, long) end
  local wait = 0
  local which = 0
  if k < n then
    for i, w in ipairs(windows) do
      local limit = w[1]
      local c = counts[i]
      if c + k >= limit then
        local thisWait = w[2]
        if c + k - limit < c then
          local e = redis.call('ZRANGEBYSCORE', key, '(' .. (now - w[2]), '+inf', 'WITHSCORES', 'LIMIT', c + k - limit, 1)
          thisWait = tonumber(e[2]) + w[2] - now
        end
        if thisWait < 1 then thisWait = 1 end
        if thisWait > wait then
          wait = thisWait
          which = i
        end
      end
    end
  end
  return {k, now, wait, which}
end
`;

/** KEYS[1]: the session's key. ARGV: number of members, the members, then limit and window (ms) per window. */
const TRY_ACCEPT_MANY = `${REDIS_NOW_FN}${ACCEPT_MANY_FN}
local n = tonumber(ARGV[1])
local members = {}
for j = 1, n do members[j] = ARGV[1 + j] end
local windows = {}
for i = n + 2, #ARGV, 2 do windows[#windows + 1] = {tonumber(ARGV[i]), tonumber(ARGV[i + 1])} end
return acceptMany(redisNow(), KEYS[1], members, windows)
`;

/**
 * One send against the session's windows with the session's rates as this limiter keeps them (KEYS[2], a hash: the
 * session's organization `org`, `min`, `hour`, and `gen`, which a change of the rates bumps), so a send needs no read
 * of the session first. ARGV: member, organization id, mode, gen, ratePerMin, ratePerHour, the hash's lifetime (ms).
 * Mode `read`: the kept rates; returns {-1, gen} when none are kept (the caller reads the session and calls again in
 * mode `fill`), {-2} when the session is of another organization (nothing counted). Mode `fill`: the rates given,
 * kept for the next sends unless `gen` moved since the `read` (a change of the rates came between: the rates read may
 * be the old ones). Otherwise acceptMany's answer for the one member.
 * The request's API-wide limits, when the API deferred them to this round trip (RequestRateLimits.prepare), are
 * KEYS[3..] with ARGV[8..] (their member, then their windows), counted first by RateWindows' own tryAcceptAll: a
 * refusal returns {-3, wait, key (1-based among them), window} and counts nothing anywhere; once counted they stay
 * counted whatever the send's answer ({-1}, {-2}, a refused rate), as the middleware would have counted them.
 */
const TRY_ACCEPT_KEPT = `${REDIS_NOW_FN}${TRY_ACCEPT_ALL_FN}${ACCEPT_MANY_FN}
local now = redisNow()
if #KEYS > 2 then
  local requestKeys = {}
  for k = 3, #KEYS do requestKeys[k - 2] = KEYS[k] end
  local request = tryAcceptAll(now, requestKeys, ARGV[8], readKeyWindows(9, #requestKeys))
  if request[1] == 0 then return {-3, request[2], request[3], request[4]} end
end
local perMin, perHour
if ARGV[3] == 'fill' then
  perMin = tonumber(ARGV[5])
  perHour = tonumber(ARGV[6])
  local gen = redis.call('HGET', KEYS[2], 'gen') or ''
  if gen == ARGV[4] then
    redis.call('HSET', KEYS[2], 'org', ARGV[2], 'min', ARGV[5], 'hour', ARGV[6])
    redis.call('PEXPIRE', KEYS[2], ARGV[7])
  end
else
  local kept = redis.call('HMGET', KEYS[2], 'org', 'min', 'hour', 'gen')
  if not kept[2] then return {-1, kept[4] or ''} end
  if kept[1] ~= ARGV[2] then return {-2} end
  perMin = tonumber(kept[2])
  perHour = tonumber(kept[3])
end
return acceptMany(now, KEYS[1], {ARGV[1]}, {{perMin, ${MINUTE_MS}}, {perHour, ${HOUR_MS}}})
`;

/** How long the kept rates of a session live without a send or a change (a bound on a lost `forgetRates`). */
const KEPT_RATES_MS = 60_000;

/** What a batch got: the first `accepted` members are counted; the rest wait `retryAfterMs` for the `limit` that frees last. */
export type BatchRateDecision = { accepted: number; retryAfterMs: number; limit: RateLimitName | null };

/**
 * The per-session send rate (CONTRACT 10): at most ratePerMin sends in any 60 s and ratePerHour in any 3600 s, one
 * sorted set per session counted by the shared sliding-window script.
 */
export class SendRateLimiter {
  private readonly windows: RateWindows;
  private readonly many: (numKeys: number, ...args: Array<string | number>) => Promise<[number, number, number, number]>;
  private readonly kept: (numKeys: number, ...args: Array<string | number>) => Promise<number[] | [number, string]>;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    this.windows = new RateWindows(redis);
    this.many = scriptCommand(redis, 'gwSendRateTryAcceptMany', TRY_ACCEPT_MANY);
    this.kept = scriptCommand(redis, 'gwSendRateTryAcceptKept', TRY_ACCEPT_KEPT);
  }

  private key(sessionId: string): string {
    return this.keys.key(`send-rate:${sessionId}`);
  }

  private ratesKey(sessionId: string): string {
    return this.keys.key(`send-rates:${sessionId}`);
  }

  /**
   * `tryAccept` with the session's rates as kept here, in one round trip and without reading the session: `unknown`
   * when none are kept (read the session, then `tryAcceptFilling` with its rates and this `gen`), `stranger` when the
   * session is not of `organizationId` (nothing counted). `request`: the API-wide limits of the request, counted in
   * the same round trip before the send (`requestLimited`: refused, nothing counted anywhere; otherwise counted,
   * whatever the send's answer).
   */
  async tryAcceptKept(sessionId: string, organizationId: string, sendId: string, request?: RequestLimitsHit): Promise<KeptRateDecision> {
    const keys = [this.key(sessionId), this.ratesKey(sessionId)];
    const args: Array<string | number> = [sendId, organizationId, 'read', '', 0, 0, KEPT_RATES_MS];
    if (request) {
      keys.push(...request.keys);
      args.push(...request.args);
    }
    const answer = await this.kept(keys.length, ...keys, ...args);
    if (answer[0] === -1) return { unknown: true, gen: String(answer[1]) };
    if (answer[0] === -2) return { stranger: true };
    if (answer[0] === -3) return { requestLimited: { name: request!.names[Number(answer[2]) - 1], retryAfterMs: Number(answer[1]) } };
    return this.decision(answer as number[]);
  }

  /** `tryAccept` with the rates read from the session after `tryAcceptKept` found none, keeping them for the next sends. */
  async tryAcceptFilling(sessionId: string, organizationId: string, sendId: string, rates: SendRates, gen: string): Promise<RateDecision> {
    const answer = await this.kept(2, this.key(sessionId), this.ratesKey(sessionId), sendId, organizationId, 'fill', gen, rates.ratePerMin, rates.ratePerHour, KEPT_RATES_MS);
    return this.decision(answer as number[]);
  }

  /**
   * The session's rates changed (or it is gone): the kept ones are dropped and `gen` moves, so a fill that read the
   * session before the change keeps nothing. Call it after the change committed; the very next send reads the row.
   */
  async forgetRates(sessionId: string): Promise<void> {
    const key = this.ratesKey(sessionId);
    await this.redis.multi().hdel(key, 'org', 'min', 'hour').hincrby(key, 'gen', 1).pexpire(key, KEPT_RATES_MS).exec();
  }

  private decision([accepted, now, wait, which]: number[]): RateDecision {
    if (accepted === 1) return { accepted: true, at: now };
    return { accepted: false, retryAfterMs: wait, limit: which === 2 ? 'ratePerHour' : 'ratePerMin' };
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
