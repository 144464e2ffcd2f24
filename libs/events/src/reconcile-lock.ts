import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisKeys } from '@app/redis';

const RECONCILE_LOCK = 'dispatcher:reconcile-lock';

/**
 * One dispatcher replica reconciles per interval: a Redis key set with NX and a TTL shorter than the interval, never
 * released, so a replica that dies while holding it blocks nobody for longer than one pass.
 */
export class ReconcileLock {
  private readonly key: string;
  private readonly owner = randomBytes(8).toString('hex');

  constructor(
    private readonly redis: Redis,
    keys: RedisKeys,
  ) {
    this.key = keys.key(RECONCILE_LOCK);
  }

  /** true when this replica holds the lock for the next `ttlMs`. */
  async tryAcquire(ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.key, this.owner, 'PX', ttlMs, 'NX')) === 'OK';
  }
}
