import { Inject, Injectable } from '@nestjs/common';
import { GatewayInfo, REGISTRY_KEYS } from '@app/contracts';
import { Redis, RedisKeys } from '@app/redis';
import { REDIS_CLIENT } from '../infra/tokens';

export interface GatewayEntry extends GatewayInfo {
  /** the gateway's heartbeat key has not expired */
  alive: boolean;
}

/** Reads the gateway registry the gateway nodes keep in Redis (see apps/gateway registry). */
@Injectable()
export class GatewayDirectory {
  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async list(): Promise<GatewayEntry[]> {
    const raw = await this.redis.hgetall(this.keys.key(REGISTRY_KEYS.gateways));
    const infos = Object.values(raw)
      .map((json) => {
        try {
          return JSON.parse(json) as GatewayInfo;
        } catch {
          return null;
        }
      })
      .filter((g): g is GatewayInfo => g !== null)
      .sort((a, b) => a.id.localeCompare(b.id));
    if (infos.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const g of infos) pipeline.exists(this.keys.key(REGISTRY_KEYS.alive(g.id)));
    const alive = (await pipeline.exec()) ?? [];
    return infos.map((g, i) => ({ ...g, alive: alive[i]?.[1] === 1 }));
  }

  async live(): Promise<GatewayEntry[]> {
    return (await this.list()).filter((g) => g.alive);
  }

  async isAlive(gatewayId: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.key(REGISTRY_KEYS.alive(gatewayId)))) === 1;
  }
}
