import { Module } from '@nestjs/common';
import { WebhookChanges } from '@app/events';
import { Redis, RedisKeys } from '@app/redis';
import { REDIS_CLIENT } from '@app/infra';
import { WebhookTargetPolicy } from './webhook-target.policy';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

@Module({
  controllers: [WebhooksController],
  providers: [
    WebhooksService,
    WebhookTargetPolicy,
    { provide: WebhookChanges, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new WebhookChanges(redis, keys) },
  ],
  exports: [WebhooksService],
})
export class WebhooksModule {}
