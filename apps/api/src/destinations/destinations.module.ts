import { Module } from '@nestjs/common';
import { WebhookChanges } from '@app/events';
import { REDIS_CLIENT } from '@app/infra';
import { Redis, RedisKeys } from '@app/redis';
import { DestinationTargetPolicy } from './destination-target.policy';
import { Destinations } from './destinations';

/** What webhooks, event sinks and the Chatwoot integration share: the row's life, the address guard, the change notice. */
@Module({
  providers: [
    Destinations,
    DestinationTargetPolicy,
    { provide: WebhookChanges, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new WebhookChanges(redis, keys) },
  ],
  exports: [Destinations, DestinationTargetPolicy, WebhookChanges],
})
export class DestinationsModule {}
