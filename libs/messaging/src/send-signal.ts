import type { Redis } from 'ioredis';
import type { RedisKeys } from '@app/redis';

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

  /** `subscriber` must be a connection of its own (it enters subscriber mode). */
  async listen(subscriber: Redis, gatewayId: string, onSession: (sessionId: string) => void): Promise<() => Promise<void>> {
    const channel = this.channel(gatewayId);
    const handler = (ch: string, message: string) => {
      if (ch === channel) onSession(message);
    };
    subscriber.on('message', handler);
    await subscriber.subscribe(channel);
    return async () => {
      subscriber.off('message', handler);
      await subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }
}
