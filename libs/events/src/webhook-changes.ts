import type { Redis } from 'ioredis';
import { WEBHOOK_CHANGED_CHANNEL } from '@app/contracts';
import type { RedisKeys } from '@app/redis';
import { ChangeChannel, ChangeListener } from './change-channel';

export type WebhookChangeListener = ChangeListener<string>;

/**
 * The "webhook changed" notice between the API (which writes webhooks) and the dispatchers (which cache them), the
 * webhook id as the message. Best effort by nature, so the dispatchers reload everything now and then as well.
 */
export class WebhookChanges extends ChangeChannel<string> {
  constructor(redis: Redis, keys: RedisKeys) {
    super(redis, keys, WEBHOOK_CHANGED_CHANNEL, { encode: (webhookId) => webhookId, decode: (message) => message || null });
  }
}
