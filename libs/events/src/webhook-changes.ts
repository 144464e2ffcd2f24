import type { Redis } from 'ioredis';
import { WEBHOOK_CHANGED_CHANNEL } from '@app/contracts';
import type { RedisKeys } from '@app/redis';

export interface WebhookChangeListener {
  /** A webhook was created, updated or deleted: read it again. */
  changed(webhookId: string): void;
  /** The subscription came back after a lost connection; announcements made meanwhile are gone. */
  missed(): void;
}

/**
 * The "webhook changed" notice between the API (which writes webhooks) and the dispatchers (which cache
 * them): Redis pub/sub on one channel, the webhook id as the message. Best effort by nature, so the
 * dispatchers reload everything now and then as well.
 */
export class WebhookChanges {
  private readonly channel: string;

  /** `redis` is the API's connection for announcing, or a connection of its own for subscribing (a subscribed connection can do nothing else). */
  constructor(
    private readonly redis: Redis,
    keys: RedisKeys,
  ) {
    this.channel = keys.key(WEBHOOK_CHANGED_CHANNEL);
  }

  async announce(webhookId: string): Promise<void> {
    await this.redis.publish(this.channel, webhookId);
  }

  /** Resolves once subscribed: every announcement made after that reaches `listener`. */
  async subscribe(listener: WebhookChangeListener): Promise<void> {
    this.redis.on('message', (channel: string, webhookId: string) => {
      if (channel === this.channel) listener.changed(webhookId);
    });
    await this.redis.subscribe(this.channel);
    // attached once subscribed, so the first connection's own 'ready' is not taken for a reconnection
    this.redis.on('ready', () => listener.missed());
  }
}
