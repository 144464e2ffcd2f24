import type { Redis } from 'ioredis';
import { REGISTRY_KEYS } from '@app/contracts';
import { RedisKeys, scriptCommand } from '@app/redis';

/*
 * A lease's value is `<holder gatewayId>|<fencing token>`; the scripts compare the holder part only, so the token a
 * holder stamps after acquiring does not change who holds it.
 */
const HOLDER = `local function holder(v) if not v then return nil end return string.match(v, '^[^|]*') end`;
/**
 * Extends the lease while this gateway is the holder. A lease that merely expired (a stalled heartbeat, a Redis
 * blip) and that nobody else took is taken back; only another holder's id means the lease is lost.
 */
const RENEW = `${HOLDER}
local v = redis.call('GET', KEYS[1])
if holder(v) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if not v then redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2]) return 1 end
return 0`;
/** Takes the lease if it is free or already ours; the caller then stamps its fencing token. */
const ACQUIRE = `${HOLDER}
local v = redis.call('GET', KEYS[1])
if v and holder(v) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], v or (ARGV[1] .. '|0'), 'PX', ARGV[2])
return 1`;
/** Writes the fencing token into the lease, only while this gateway still holds it. */
const STAMP = `${HOLDER}
if holder(redis.call('GET', KEYS[1])) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. ARGV[3], 'PX', ARGV[2])
return 1`;
/** Deletes the lease only while this gateway is still the holder. */
const RELEASE = `${HOLDER}
if holder(redis.call('GET', KEYS[1])) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface LeaseHolder {
  gatewayId: string;
  token: number;
}

/**
 * Session leases in Redis: value = holder gateway id and fencing token, PX TTL renewed with every heartbeat.
 * Two sockets on one device make WhatsApp drop both, so a runner opens a socket only while it holds the lease;
 * a gateway that dies stops renewing, and the lease frees itself after the TTL.
 * The fencing token comes from PostgreSQL (`takeToken`, the session row's counter), so it never goes backwards when
 * Redis restarts empty; the row refuses writes carrying an older one.
 * Everything that reads or writes a `session-lease:<id>` key goes through this class.
 */
type LeaseScript = (numKeys: number, ...args: string[]) => Promise<number>;

/** The name RENEW runs under, on the connection and on its pipelines (a heartbeat renews every lease in one). */
const RENEW_COMMAND = 'gwLeaseRenew';

export class RedisSessionLeases {
  // called by their digest (EVALSHA), not shipped with every call: a heartbeat renews every lease the gateway holds
  private readonly acquireScript: LeaseScript;
  private readonly stampScript: LeaseScript;
  private readonly releaseScript: LeaseScript;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly holder: string,
    private readonly ttlMs: number,
  ) {
    this.acquireScript = scriptCommand(redis, 'gwLeaseAcquire', ACQUIRE);
    this.stampScript = scriptCommand(redis, 'gwLeaseStamp', STAMP);
    this.releaseScript = scriptCommand(redis, 'gwLeaseRelease', RELEASE);
    scriptCommand(redis, RENEW_COMMAND, RENEW);
  }

  private key(sessionId: string): string {
    return this.keys.key(REGISTRY_KEYS.lease(sessionId));
  }

  /**
   * Takes the lease (free, or ours already: a restarted gateway with the same id, or a second start) and then a new
   * fencing token; returns the token, or null while another gateway holds the lease. The token is taken only once
   * the lease is ours, so a gateway waiting for a lease never fences out the holder it waits for.
   */
  async acquire(sessionId: string, takeToken: () => Promise<number>): Promise<number | null> {
    const ttl = String(this.ttlMs);
    if ((await this.acquireScript(1, this.key(sessionId), this.holder, ttl)) !== 1) return null;
    const token = await takeToken();
    if ((await this.stampScript(1, this.key(sessionId), this.holder, ttl, String(token))) !== 1) return null;
    return token;
  }

  /** Who holds a session's lease, with the token it stamped (0 before stamping); null when nobody does. */
  async holderOf(sessionId: string): Promise<LeaseHolder | null> {
    const value = await this.redis.get(this.key(sessionId));
    if (value === null) return null;
    const [gatewayId, token] = value.split('|');
    return { gatewayId, token: Number(token ?? 0) };
  }

  /** Renews many leases in one round trip; returns the sessions whose lease is no longer ours. */
  async renew(sessionIds: string[]): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const pipeline = this.redis.pipeline() as unknown as Record<typeof RENEW_COMMAND, (...args: Array<string | number>) => unknown> & {
      exec(): Promise<Array<[Error | null, unknown]> | null>;
    };
    for (const id of sessionIds) pipeline[RENEW_COMMAND](1, this.key(id), this.holder, String(this.ttlMs), `${this.holder}|0`);
    const results = (await pipeline.exec()) ?? [];
    return sessionIds.filter((_, i) => {
      const [err, value] = results[i] ?? [null, 0];
      return !err && value !== 1;
    });
  }

  async release(sessionId: string): Promise<void> {
    await this.releaseScript(1, this.key(sessionId), this.holder);
  }
}
