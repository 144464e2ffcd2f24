import type { Redis } from 'ioredis';
import { SessionQr, sessionQrKey } from '@app/contracts';
import type { RedisKeys } from '@app/redis';
import type { QrBoard } from './session-ports';

/** The current QR of each session waiting for a scan, readable by any API replica, gone when it expires. */
export class RedisQrBoard implements QrBoard {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async show(sessionId: string, qr: SessionQr, ttlMs: number): Promise<void> {
    await this.redis.set(this.keys.key(sessionQrKey(sessionId)), JSON.stringify(qr), 'PX', ttlMs);
  }

  async clear(sessionId: string): Promise<void> {
    await this.redis.del(this.keys.key(sessionQrKey(sessionId)));
  }
}
