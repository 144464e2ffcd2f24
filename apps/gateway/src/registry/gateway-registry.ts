import type { Redis } from 'ioredis';
import { GatewayInfo, REGISTRY_KEYS } from '@app/contracts';
import type { RedisKeys } from '@app/redis';

/**
 * This node's entry in the gateway registry: a JSON GatewayInfo in the `gateways` hash (what it is) and an
 * `alive` key with a TTL (that it is). The API places sessions only on gateways whose alive key exists.
 */
export class GatewayRegistry {
  private readonly startedAt: number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly node: Pick<GatewayInfo, 'id' | 'capacity' | 'engine' | 'version'>,
    private readonly ttlMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.startedAt = clock();
  }

  async heartbeat(sessionCount: number): Promise<GatewayInfo> {
    const info: GatewayInfo = { ...this.node, sessionCount, startedAt: this.startedAt, lastHeartbeatAt: this.clock() };
    await this.redis
      .multi()
      .hset(this.keys.key(REGISTRY_KEYS.gateways), this.node.id, JSON.stringify(info))
      .set(this.keys.key(REGISTRY_KEYS.alive(this.node.id)), String(info.lastHeartbeatAt), 'PX', this.ttlMs)
      .exec();
    return info;
  }

  async deregister(): Promise<void> {
    await this.redis
      .multi()
      .hdel(this.keys.key(REGISTRY_KEYS.gateways), this.node.id)
      .del(this.keys.key(REGISTRY_KEYS.alive(this.node.id)))
      .exec();
  }
}
