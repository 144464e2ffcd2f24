import type { Redis } from 'ioredis';
import type { RedisKeys } from '@app/redis';

/**
 * Tells a gateway that the sessions table assigns it sessions (a failover, a drain, a rebalance moved them there), so
 * it runs a converge pass now rather than at its next interval. One signal per target gateway for any number of moved
 * sessions, not one command per session; only a nudge: the gateway converges on the table every
 * GATEWAY_ADOPT_INTERVAL_MS anyway, so a signal lost with Redis only delays the adoption. One channel per gateway.
 */
export class AdoptSignal {
  constructor(private readonly keys: RedisKeys) {}

  private channel(gatewayId: string): string {
    return this.keys.key(`fleet-adopt:${gatewayId}`);
  }

  async notify(redis: Redis, gatewayId: string): Promise<void> {
    await redis.publish(this.channel(gatewayId), '1');
  }

  /** `subscriber` must be a connection of its own (it enters subscriber mode). */
  async listen(subscriber: Redis, gatewayId: string, onSignal: () => void): Promise<() => Promise<void>> {
    const channel = this.channel(gatewayId);
    const handler = (ch: string) => {
      if (ch === channel) onSignal();
    };
    subscriber.on('message', handler);
    await subscriber.subscribe(channel);
    return async () => {
      subscriber.off('message', handler);
      await subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }
}
