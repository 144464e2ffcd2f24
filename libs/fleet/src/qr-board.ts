import type { Redis } from 'ioredis';
import { SessionQr, sessionQrKey } from '@app/contracts';
import type { RedisKeys } from '@app/redis';

/**
 * The current QR of each session waiting for a scan: shown and cleared by the session's gateway, read by any API
 * replica, gone when it expires.
 */
export class RedisQrBoard {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  private key(sessionId: string): string {
    return this.keys.key(sessionQrKey(sessionId));
  }

  async show(sessionId: string, qr: SessionQr, ttlMs: number): Promise<void> {
    await this.redis.set(this.key(sessionId), JSON.stringify(qr), 'PX', ttlMs);
  }

  async clear(sessionId: string): Promise<void> {
    await this.redis.del(this.key(sessionId));
  }

  /** null when the session shows no QR (never did, expired, or paired since). */
  async read(sessionId: string): Promise<SessionQr | null> {
    const raw = await this.redis.get(this.key(sessionId));
    return raw ? (JSON.parse(raw) as SessionQr) : null;
  }
}
