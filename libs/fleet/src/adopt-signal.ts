import type { Redis } from 'ioredis';
import type { RedisKeys } from '@app/redis';
import type { GatewaySignals } from './gateway-signals';

/**
 * Tells a gateway that the sessions table assigns it sessions (a failover, a drain, a rebalance moved them there), so
 * it runs a converge pass now rather than at its next interval. One signal per target gateway for any number of moved
 * sessions, not one command per session; only a nudge: the gateway converges on the table every
 * GATEWAY_ADOPT_INTERVAL_MS anyway, so a signal lost with Redis only delays the adoption. One channel per gateway,
 * heard on the gateway's one subscriber connection (GatewaySignals).
 */
export class AdoptSignal {
  constructor(private readonly keys: RedisKeys) {}

  private channel(gatewayId: string): string {
    return this.keys.key(`fleet-adopt:${gatewayId}`);
  }

  async notify(redis: Redis, gatewayId: string): Promise<void> {
    await redis.publish(this.channel(gatewayId), '1');
  }

  listen(signals: Pick<GatewaySignals, 'subscribe'>, gatewayId: string, onSignal: () => void): Promise<() => Promise<void>> {
    return signals.subscribe(this.channel(gatewayId), () => onSignal());
  }
}
