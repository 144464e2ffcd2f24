import type { Redis } from 'ioredis';
import type { RedisKeys } from '@app/redis';

/** What hears a pub/sub channel (GatewaySignals in a gateway process): the returned function stops hearing it. */
export interface ChannelSubscriber {
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
}

/**
 * Tells a gateway that a session it holds has new queued messages. Only a nudge: PostgreSQL is the queue, and a
 * gateway also sweeps its sessions for queued rows, so a signal lost with Redis only delays a send.
 * One channel per gateway; the message is the session id.
 */
export class SendSignal {
  constructor(private readonly keys: RedisKeys) {}

  private channel(gatewayId: string): string {
    return this.keys.key(`message-sends:${gatewayId}`);
  }

  async notify(redis: Redis, gatewayId: string, sessionId: string): Promise<void> {
    await redis.publish(this.channel(gatewayId), sessionId);
  }

  /**
   * Hears this gateway's signals through the process's one subscriber connection (libs/fleet GatewaySignals, which
   * also carries the adopt signal), which dispatches by channel and subscribes once the connection is ready.
   */
  listen(signals: ChannelSubscriber, gatewayId: string, onSession: (sessionId: string) => void): Promise<() => Promise<void>> {
    return signals.subscribe(this.channel(gatewayId), onSession);
  }
}
