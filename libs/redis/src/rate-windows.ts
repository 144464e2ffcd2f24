import type { Redis } from 'ioredis';
import { scriptCommand } from './redis';

/** At most `limit` hits in any `windowMs`. */
export interface RateWindow {
  limit: number;
  windowMs: number;
}

export type WindowDecision = { accepted: true; at: number } | { accepted: false; retryAfterMs: number; window: number };

/** `redisNow()`: Redis' own clock in ms, so every replica counts against one time line. A Lua function for scripts to share. */
export const REDIS_NOW_FN = `
local function redisNow()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * A sliding-window log per key, in one sorted set: a member per accepted hit, scored by Redis' clock. Accepting is
 * atomic over every key of the call: `tryAcceptAll(now, keys, member, windows)` counts the hits inside each window of
 * each key (windows[k]: a list of {limit, window (ms)} for keys[k]) and adds the member to all of them only when every
 * window stays within its limit. A refusal adds nothing anywhere and says when the oldest hit that blocks it leaves
 * its window (the exact Retry-After) and which key and window refused (the one that frees last, both 1-based):
 * {1, now} or {0, wait, key, window}. `readKeyWindows(first, count)` reads `count` keys' windows from ARGV[first] on
 * (per key: its number of windows, then limit and window (ms) per window). Lua functions, so that a script of another
 * owner that must count a request's limits in its own round trip (SendRateLimiter's) runs this very code.
 */
export const TRY_ACCEPT_ALL_FN = `
local function readKeyWindows(first, count)
  local windows = {}
  local a = first
  for k = 1, count do
    local n = tonumber(ARGV[a])
    local list = {}
    for i = a + 1, a + 2 * n, 2 do list[#list + 1] = {tonumber(ARGV[i]), tonumber(ARGV[i + 1])} end
    windows[k] = list
    a = a + 1 + 2 * n
  end
  return windows
end

local function tryAcceptAll(now, keys, member, windows)
  local wait = 0
  local whichKey = 0
  local whichWindow = 0
  local longest = {}
  for k = 1, #keys do
    local long = 0
    for _, w in ipairs(windows[k]) do
      if w[2] > long then long = w[2] end
    end
    longest[k] = long
    redis.call('ZREMRANGEBYSCORE', keys[k], '-inf', now - long)
    for i, w in ipairs(windows[k]) do
      local c = redis.call('ZCOUNT', keys[k], '(' .. (now - w[2]), '+inf')
      if c >= w[1] then
        local e = redis.call('ZRANGEBYSCORE', keys[k], '(' .. (now - w[2]), '+inf', 'WITHSCORES', 'LIMIT', c - w[1], 1)
        local thisWait = tonumber(e[2]) + w[2] - now
        if thisWait < 1 then thisWait = 1 end
        if thisWait > wait then
          wait = thisWait
          whichKey = k
          whichWindow = i
        end
      end
    end
  end
  if wait > 0 then return {0, wait, whichKey, whichWindow} end
  for k = 1, #keys do
    redis.call('ZADD', keys[k], now, member)
    redis.call('PEXPIRE', keys[k], longest[k])
  end
  return {1, now}
end
`;

/** KEYS: the keys. ARGV: member, then readKeyWindows' windows of every key. */
const TRY_ACCEPT = `${REDIS_NOW_FN}${TRY_ACCEPT_ALL_FN}
return tryAcceptAll(redisNow(), KEYS, ARGV[1], readKeyWindows(2, #KEYS))
`;

/** One key's windows in a call of `tryAcceptAll`. */
export interface KeyWindows {
  key: string;
  windows: readonly RateWindow[];
}

export type MultiWindowDecision =
  | { accepted: true; at: number }
  | { accepted: false; retryAfterMs: number; /** index of the refusing key in the call */ key: number; window: number };

/** ARGV of TRY_ACCEPT_ALL_FN's `readKeyWindows` for these keys' windows (one encoding, whichever script reads it). */
export function keyWindowsArgs(keys: readonly KeyWindows[]): Array<string | number> {
  const args: Array<string | number> = [];
  for (const k of keys) {
    args.push(k.windows.length);
    for (const w of k.windows) args.push(w.limit, w.windowMs);
  }
  return args;
}

type TryAcceptCommand = (numKeys: number, ...args: Array<string | number>) => Promise<[number, number, number?, number?]>;

/**
 * The one sliding-window algorithm behind every rate limit (per-session sends, API requests, logins). It speaks no
 * protocol of its own: the object that owns a limit builds the keys and hands them in. The script is sent once per
 * connection and then called by its digest (EVALSHA), not shipped and hashed on every hit.
 */
export class RateWindows {
  private readonly command: TryAcceptCommand;

  constructor(private readonly redis: Redis) {
    this.command = scriptCommand(redis, 'gwRateWindowsTryAccept', TRY_ACCEPT);
  }

  /** Counts `member` (unique per hit) against `key` if every window allows it; a refusal counts nothing. */
  async tryAccept(key: string, member: string, windows: readonly RateWindow[]): Promise<WindowDecision> {
    const decision = await this.tryAcceptAll([{ key, windows }], member);
    return decision.accepted ? decision : { accepted: false, retryAfterMs: decision.retryAfterMs, window: decision.window };
  }

  /**
   * Counts `member` against every key, or against none: one round trip for several limits of one request (a client's
   * IP and its credential), and a refusal by one of them leaves the others uncounted.
   */
  async tryAcceptAll(keys: readonly KeyWindows[], member: string): Promise<MultiWindowDecision> {
    const args: Array<string | number> = keys.map((k) => k.key);
    args.push(member, ...keyWindowsArgs(keys));
    const [accepted, value, whichKey, whichWindow] = await this.command(keys.length, ...args);
    if (accepted === 1) return { accepted: true, at: value };
    return { accepted: false, retryAfterMs: value, key: (whichKey ?? 1) - 1, window: (whichWindow ?? 1) - 1 };
  }

  /** Takes back a counted hit that did not happen after all. */
  async release(key: string, member: string): Promise<void> {
    await this.redis.zrem(key, member);
  }
}
