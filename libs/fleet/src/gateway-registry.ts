import type { Redis } from 'ioredis';
import { GatewayInfo, REGISTRY_KEYS } from '@app/contracts';
import type { RedisKeys } from '@app/redis';

/**
 * The registry's key layout, shared by its writer (a gateway node) and its readers (API replicas):
 * a JSON GatewayInfo per node in the `gateways` hash (what it is) and a `gateway-alive:<id>` key with a TTL (that it is).
 */
class RegistryLayout {
  constructor(private readonly keys: RedisKeys) {}

  get gateways(): string {
    return this.keys.key(REGISTRY_KEYS.gateways);
  }

  alive(gatewayId: string): string {
    return this.keys.key(REGISTRY_KEYS.alive(gatewayId));
  }

  drainRequest(gatewayId: string): string {
    return this.keys.key(REGISTRY_KEYS.drainRequest(gatewayId));
  }
}

/** A drain request outlives a gateway that is down when it is made, but not forever. */
const DRAIN_REQUEST_TTL_MS = 24 * 3600 * 1000;

/** This node's entry in the gateway registry. The API places sessions only on gateways whose alive key exists. */
export class GatewayRegistry {
  private readonly layout: RegistryLayout;
  private readonly startedAt: number;
  private draining = false;

  constructor(
    private readonly redis: Redis,
    keys: RedisKeys,
    private readonly node: Pick<GatewayInfo, 'id' | 'capacity' | 'engine' | 'version' | 'simulated'> & {
      /** read at every heartbeat: the engine learns it at start (a bounded fetch) and again after a 405 */
      waWebVersion?: () => string | null;
    },
    private readonly ttlMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.layout = new RegistryLayout(keys);
    this.startedAt = clock();
  }

  async heartbeat(sessionCount: number): Promise<GatewayInfo> {
    const { waWebVersion, ...node } = this.node;
    const info: GatewayInfo = {
      ...node,
      waWebVersion: waWebVersion?.() ?? null,
      sessionCount,
      startedAt: this.startedAt,
      lastHeartbeatAt: this.clock(),
      draining: this.draining,
    };
    await this.redis
      .multi()
      .hset(this.layout.gateways, this.node.id, JSON.stringify(info))
      .set(this.layout.alive(this.node.id), String(info.lastHeartbeatAt), 'PX', this.ttlMs)
      .exec();
    return info;
  }

  /** From now on every heartbeat says `draining: true`, so placement skips this node; written at once. */
  async startDraining(sessionCount: number): Promise<void> {
    this.draining = true;
    await this.heartbeat(sessionCount);
  }

  /** Whether an operator asked this node to drain (`GatewayDirectory.requestDrain`). */
  async drainRequested(): Promise<boolean> {
    return (await this.redis.exists(this.layout.drainRequest(this.node.id))) === 1;
  }

  async deregister(): Promise<void> {
    await this.redis
      .multi()
      .hdel(this.layout.gateways, this.node.id)
      .del(this.layout.alive(this.node.id))
      .del(this.layout.drainRequest(this.node.id))
      .exec();
  }
}

export interface GatewayEntry extends GatewayInfo {
  /** the gateway's heartbeat key has not expired */
  alive: boolean;
}

/** The readers' side of the registry: a crashed node stays listed, with `alive: false`, until it deregisters. */
export class GatewayDirectory {
  private readonly layout: RegistryLayout;

  constructor(
    private readonly redis: Redis,
    keys: RedisKeys,
  ) {
    this.layout = new RegistryLayout(keys);
  }

  async list(): Promise<GatewayEntry[]> {
    const raw = await this.redis.hgetall(this.layout.gateways);
    const infos = Object.values(raw)
      .map((json) => {
        try {
          const info = JSON.parse(json) as GatewayInfo;
          // entries written before `draining` existed read as not draining
          return { ...info, draining: info.draining ?? false };
        } catch {
          return null;
        }
      })
      .filter((g): g is GatewayInfo => g !== null)
      .sort((a, b) => a.id.localeCompare(b.id));
    if (infos.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const g of infos) pipeline.exists(this.layout.alive(g.id));
    const alive = (await pipeline.exec()) ?? [];
    return infos.map((g, i) => ({ ...g, alive: alive[i]?.[1] === 1 }));
  }

  /** Gateways that take sessions: alive and not draining. */
  async live(): Promise<GatewayEntry[]> {
    return (await this.list()).filter((g) => g.alive && !g.draining);
  }

  /**
   * Asks a listed gateway to drain (the gateway sees it within a heartbeat). False when no such gateway is listed.
   */
  async requestDrain(gatewayId: string): Promise<boolean> {
    if ((await this.redis.hexists(this.layout.gateways, gatewayId)) !== 1) return false;
    await this.redis.set(this.layout.drainRequest(gatewayId), String(Date.now()), 'PX', DRAIN_REQUEST_TTL_MS);
    return true;
  }

  async isAlive(gatewayId: string): Promise<boolean> {
    return (await this.redis.exists(this.layout.alive(gatewayId))) === 1;
  }
}
