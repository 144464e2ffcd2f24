import type { Redis } from 'ioredis';
import { REGISTRY_KEYS } from '@app/contracts';
import { RedisKeys, scriptCommand } from '@app/redis';

/*
 * Node epochs. A session lease's value is `<holder gatewayId>|<fencing token>|<epoch>` and has no TTL of its own; the
 * holder's node key (`lease-node:<gatewayId>`, value = its current epoch) carries the TTL. A lease is live while its
 * holder's node key exists and names the lease's epoch, so one PEXPIRE of the node key renews every lease the node
 * holds: the renewal is O(1) in the sessions held. A node key that expired (a stall past the TTL, Redis restarted
 * empty) is never brought back under the same epoch: the next renewal writes a new one, so every lease of the old
 * epoch stays dead (another gateway may have taken it meanwhile) until its holder re-stamps it (`reclaim`), which it
 * does only for the sessions it still holds with trusted leases. The scripts compare the holder part only for "ours";
 * for "live" they read the holder's node key, whose name they build from ARGV's node-key prefix.
 */
const LEASE_FNS = `
local function parse(v)
  if not v then return nil, nil, nil end
  local holder, token, epoch = string.match(v, '^([^|]*)|?([^|]*)|?([^|]*)$')
  return holder, token, epoch
end
local function live(v, nodePrefix)
  local holder, token, epoch = parse(v)
  if not holder then return false end
  return epoch ~= '' and redis.call('GET', nodePrefix .. holder) == epoch
end`;
/**
 * KEYS[1] node key; ARGV: current epoch, ttl, next epoch. Extends the node key while it names the current epoch (1);
 * otherwise (expired, lost with Redis) writes the next epoch and answers 0: the leases of the old one are dead.
 */
const RENEW_NODE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
return 0`;
/**
 * KEYS[1] lease, KEYS[2] own node key; ARGV: holder, epoch, node-key prefix. Takes the lease if it is free, ours, or its
 * holder's epoch is dead, while this node's own epoch is live (-1 when not: the node must renew first). The caller
 * then stamps its fencing token.
 */
const ACQUIRE = `${LEASE_FNS}
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return -1 end
local v = redis.call('GET', KEYS[1])
local holder, token = parse(v)
if v and holder ~= ARGV[1] and live(v, ARGV[3]) then return 0 end
if holder ~= ARGV[1] then token = '0' end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. (token ~= '' and token or '0') .. '|' .. ARGV[2])
return 1`;
/** KEYS[1] lease; ARGV: holder, epoch, token. Writes the fencing token, only while this node holds the lease in this epoch. */
const STAMP = `${LEASE_FNS}
local holder, token, epoch = parse(redis.call('GET', KEYS[1]))
if holder ~= ARGV[1] or epoch ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. ARGV[3] .. '|' .. ARGV[2])
return 1`;
/**
 * KEYS[1] lease; ARGV: holder, new epoch. After an epoch change: a lease still naming this node (any epoch) is
 * re-stamped with the new epoch, keeping its token (1); a free one, or one another gateway took, is lost (0). A free one
 * is not taken back: its runner may have released it since the caller listed it, and a lease of a live epoch with no
 * runner behind it would never free itself.
 */
const RECLAIM = `${LEASE_FNS}
local holder, token = parse(redis.call('GET', KEYS[1]))
if holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. (token ~= '' and token or '0') .. '|' .. ARGV[2])
return 1`;
/** KEYS[1] lease; ARGV: node-key prefix. The lease's value while it is live, else nil. */
const HOLDER_OF = `${LEASE_FNS}
local v = redis.call('GET', KEYS[1])
if live(v, ARGV[1]) then return v end
return false`;
/** KEYS[1] lease; ARGV: holder. Deletes the lease only while this gateway is its holder (any epoch). */
const RELEASE = `${LEASE_FNS}
local holder = parse(redis.call('GET', KEYS[1]))
if holder == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface LeaseHolder {
  gatewayId: string;
  token: number;
}

type LeaseScript = (numKeys: number, ...args: string[]) => Promise<number | string | null>;

/** The name RECLAIM runs under, on the connection and on its pipelines (an epoch change re-stamps every lease held). */
const RECLAIM_COMMAND = 'gwLeaseReclaim';

/** A fresh epoch: never equal to one this node used before, so an expired node key cannot come back to life. */
export function newLeaseEpoch(): number {
  return Math.floor(Math.random() * 2 ** 47) + 1;
}

/**
 * The node's half of the lease protocol: its node key and epoch. The gateway renews it from its lease keeper thread
 * (LeaseKeeper, on a connection of its own), the renewal that must not wait for the engine's work; `renew` answers
 * whether the leases of the epoch it renewed are still live, or names the new epoch they must be re-stamped with.
 */
export class NodeLease {
  private readonly renewScript: LeaseScript;

  constructor(
    redis: Redis,
    private readonly keys: RedisKeys,
    private readonly holder: string,
    private readonly ttlMs: number,
  ) {
    this.renewScript = scriptCommand(redis, 'gwLeaseRenewNode', RENEW_NODE);
  }

  get nodeKey(): string {
    return this.keys.key(REGISTRY_KEYS.leaseNode(this.holder));
  }

  /** One command whatever the sessions held: true when `epoch` was extended, false when `next` replaced it. */
  async renew(epoch: number, next: number): Promise<boolean> {
    return (await this.renewScript(1, this.nodeKey, String(epoch), String(this.ttlMs), String(next))) === 1;
  }
}

/**
 * Session leases in Redis, one `session-lease:<id>` key each, live while their holder's node epoch is (see above). Two
 * sockets on one device make WhatsApp drop both, so a runner opens a socket only while it holds the lease; a gateway
 * that dies stops renewing its node key, and every lease it held frees itself after the TTL.
 * The fencing token comes from PostgreSQL (`takeToken`, the session row's counter), so it never goes backwards when
 * Redis restarts empty; the row refuses writes carrying an older one.
 * Everything that reads or writes a `session-lease:<id>` or `lease-node:<id>` key goes through this file.
 */
export class RedisSessionLeases {
  // called by their digest (EVALSHA), not shipped with every call
  private readonly acquireScript: LeaseScript;
  private readonly stampScript: LeaseScript;
  private readonly releaseScript: LeaseScript;
  private readonly holderScript: LeaseScript;
  private readonly node: NodeLease;
  /** the epoch this node's leases are stamped with; see `epochSource` */
  private ownEpoch = newLeaseEpoch();

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly holder: string,
    ttlMs: number,
    /**
     * Where the live epoch comes from when another thread renews the node key (the gateway's LeaseKeeper); unset, this
     * object renews it itself (`renew`).
     */
    private readonly epochSource?: () => number,
  ) {
    this.acquireScript = scriptCommand(redis, 'gwLeaseAcquire', ACQUIRE);
    this.stampScript = scriptCommand(redis, 'gwLeaseStamp', STAMP);
    this.releaseScript = scriptCommand(redis, 'gwLeaseRelease', RELEASE);
    this.holderScript = scriptCommand(redis, 'gwLeaseHolderOf', HOLDER_OF);
    scriptCommand(redis, RECLAIM_COMMAND, RECLAIM);
    this.node = new NodeLease(redis, keys, holder, ttlMs);
  }

  private get epoch(): number {
    return this.epochSource?.() ?? this.ownEpoch;
  }

  private key(sessionId: string): string {
    return this.keys.key(REGISTRY_KEYS.lease(sessionId));
  }

  private get nodePrefix(): string {
    return this.keys.key(REGISTRY_KEYS.leaseNode(''));
  }

  /**
   * Takes the lease (free, ours already: a restarted gateway with the same id, or its holder's epoch is dead) and then
   * a new fencing token; returns the token, or null while another live gateway holds the lease (or this node's own
   * epoch is not live yet: its next renewal makes it so). The token is taken only once the lease is ours, so a gateway
   * waiting for a lease never fences out the holder it waits for.
   */
  async acquire(sessionId: string, takeToken: () => Promise<number>): Promise<number | null> {
    let epoch = this.epoch;
    let taken = await this.acquireScript(2, this.key(sessionId), this.node.nodeKey, this.holder, String(epoch), this.nodePrefix);
    if (taken === -1 && !this.epochSource) {
      // standalone (no keeper thread): this object owns the node key, and a fresh epoch holds nothing yet
      await this.renew([]);
      epoch = this.epoch;
      taken = await this.acquireScript(2, this.key(sessionId), this.node.nodeKey, this.holder, String(epoch), this.nodePrefix);
    }
    if (taken !== 1) return null;
    const token = await takeToken();
    if ((await this.stampScript(1, this.key(sessionId), this.holder, String(epoch), String(token))) !== 1) return null;
    return token;
  }

  /** Who holds a session's lease while it is live, with the token it stamped (0 before stamping); null when nobody does. */
  async holderOf(sessionId: string): Promise<LeaseHolder | null> {
    const value = await this.holderScript(1, this.key(sessionId), this.nodePrefix);
    if (typeof value !== 'string') return null;
    const [gatewayId, token] = value.split('|');
    return { gatewayId, token: Number(token || 0) };
  }

  /**
   * Standalone renewal (no keeper thread): one command for the node key; only when its epoch had died does it re-stamp
   * `sessionIds` (the leases this node still holds) with the new one. Returns the sessions whose lease is no longer
   * ours.
   */
  async renew(sessionIds: string[]): Promise<string[]> {
    const next = newLeaseEpoch();
    if (await this.node.renew(this.ownEpoch, next)) return [];
    this.ownEpoch = next;
    return this.reclaim(sessionIds, next);
  }

  /**
   * Re-stamps the leases of `sessionIds` with `epoch`, the node's new one, in one round trip; returns the sessions whose
   * lease is gone or another gateway took while the old epoch was dead. Runs only after an epoch change, never per tick.
   */
  async reclaim(sessionIds: string[], epoch: number): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const pipeline = this.redis.pipeline() as unknown as Record<typeof RECLAIM_COMMAND, (...args: Array<string | number>) => unknown> & {
      exec(): Promise<Array<[Error | null, unknown]> | null>;
    };
    for (const id of sessionIds) pipeline[RECLAIM_COMMAND](1, this.key(id), this.holder, String(epoch));
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
