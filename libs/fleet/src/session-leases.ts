import type { Redis } from 'ioredis';
import { REGISTRY_KEYS } from '@app/contracts';
import type { RedisKeys } from '@app/redis';

/**
 * Extends the lease while this gateway is the holder. A lease that merely expired (a stalled heartbeat, a Redis
 * blip) and that nobody else took is taken back; only another holder's id means the lease is lost.
 */
const RENEW = `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
/** Deletes the lease only while this gateway is still the holder. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/**
 * Session leases in Redis: value = holder gateway id, PX TTL renewed with every heartbeat.
 * Two sockets on one device make WhatsApp drop both, so a runner opens a socket only while it holds the lease;
 * a gateway that dies stops renewing, and the lease frees itself after the TTL.
 * Everything that reads or writes a `session-lease:<id>` key goes through this class.
 */
export class RedisSessionLeases {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly holder: string,
    private readonly ttlMs: number,
  ) {}

  private key(sessionId: string): string {
    return this.keys.key(REGISTRY_KEYS.lease(sessionId));
  }

  async acquire(sessionId: string): Promise<boolean> {
    const set = await this.redis.set(this.key(sessionId), this.holder, 'PX', this.ttlMs, 'NX');
    if (set === 'OK') return true;
    // ours already (a restarted gateway with the same id, or a second start): keep it
    return (await this.redis.eval(RENEW, 1, this.key(sessionId), this.holder, String(this.ttlMs))) === 1;
  }

  /** Renews many leases in one round trip; returns the sessions whose lease is no longer ours. */
  async renew(sessionIds: string[]): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of sessionIds) pipeline.eval(RENEW, 1, this.key(id), this.holder, String(this.ttlMs));
    const results = (await pipeline.exec()) ?? [];
    return sessionIds.filter((_, i) => {
      const [err, value] = results[i] ?? [null, 0];
      return !err && value !== 1;
    });
  }

  async release(sessionId: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.key(sessionId), this.holder);
  }
}
