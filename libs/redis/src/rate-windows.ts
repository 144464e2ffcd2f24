import type { Redis } from 'ioredis';
import { scriptCommand } from './redis';

/** At most `limit` hits in any `windowMs`. */
export interface RateWindow {
  limit: number;
  windowMs: number;
}

export type WindowDecision = { accepted: true; at: number } | { accepted: false; retryAfterMs: number; window: number };

/**
 * A sliding-window log per key, in one sorted set: a member per accepted hit, scored by Redis' own clock (so every
 * replica counts against one time line). Accepting is atomic over every key of the call: the script counts the hits
 * inside each window of each key and adds the new one to all of them only when every window stays within its limit.
 * A refusal adds nothing anywhere and says when the oldest hit that blocks it leaves its window (the exact
 * Retry-After) and which key and window refused (the one that frees last).
 * ARGV: member, then per key: its number of windows, then limit and window (ms) per window.
 */
const TRY_ACCEPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wait = 0
local whichKey = 0
local whichWindow = 0
local longest = {}
local a = 2
for k = 1, #KEYS do
  local n = tonumber(ARGV[a])
  local first = a + 1
  a = first + 2 * n
  local long = 0
  for i = first, a - 1, 2 do
    local w = tonumber(ARGV[i + 1])
    if w > long then long = w end
  end
  longest[k] = long
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', now - long)
  for i = first, a - 1, 2 do
    local limit = tonumber(ARGV[i])
    local w = tonumber(ARGV[i + 1])
    local c = redis.call('ZCOUNT', KEYS[k], '(' .. (now - w), '+inf')
    if c >= limit then
      local e = redis.call('ZRANGEBYSCORE', KEYS[k], '(' .. (now - w), '+inf', 'WITHSCORES', 'LIMIT', c - limit, 1)
      local thisWait = tonumber(e[2]) + w - now
      if thisWait < 1 then thisWait = 1 end
      if thisWait > wait then
        wait = thisWait
        whichKey = k
        whichWindow = (i - first) / 2 + 1
      end
    end
  end
end
if wait > 0 then return {0, wait, whichKey, whichWindow} end
for k = 1, #KEYS do
  redis.call('ZADD', KEYS[k], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[k], longest[k])
end
return {1, now}
`;

/** One key's windows in a call of `tryAcceptAll`. */
export interface KeyWindows {
  key: string;
  windows: readonly RateWindow[];
}

export type MultiWindowDecision =
  | { accepted: true; at: number }
  | { accepted: false; retryAfterMs: number; /** index of the refusing key in the call */ key: number; window: number };

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
    args.push(member);
    for (const k of keys) {
      args.push(k.windows.length);
      for (const w of k.windows) args.push(w.limit, w.windowMs);
    }
    const [accepted, value, whichKey, whichWindow] = await this.command(keys.length, ...args);
    if (accepted === 1) return { accepted: true, at: value };
    return { accepted: false, retryAfterMs: value, key: (whichKey ?? 1) - 1, window: (whichWindow ?? 1) - 1 };
  }

  /** Takes back a counted hit that did not happen after all. */
  async release(key: string, member: string): Promise<void> {
    await this.redis.zrem(key, member);
  }
}
