import type { Redis } from 'ioredis';
import { RateWindows, type RedisKeys } from '@app/redis';

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
 * The per-session send rate (CONTRACT 10): at most ratePerMin sends in any 60 s and ratePerHour in any 3600 s, one
 * sorted set per session counted by the shared sliding-window script.
 */
export class SendRateLimiter {
  private readonly windows: RateWindows;

  constructor(
    redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    this.windows = new RateWindows(redis);
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

  /** Takes back a counted send that was not accepted after all (its insert failed). */
  async release(sessionId: string, sendId: string): Promise<void> {
    await this.windows.release(this.key(sessionId), sendId);
  }
}
