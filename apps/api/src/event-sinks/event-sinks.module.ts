import { Module } from '@nestjs/common';
import { WebhookChanges } from '@app/events';
import { REDIS_CLIENT } from '@app/infra';
import { Redis, RedisKeys } from '@app/redis';
import { DeliveriesModule } from '../deliveries/deliveries.module';
import { WebhookTargetPolicy } from '../webhooks/webhook-target.policy';
import { EventSinksController } from './event-sinks.controller';
import { EventSinksService } from './event-sinks.service';

/** RabbitMQ and NATS JetStream destinations (CONTRACT 15); their publishes are the webhook dispatcher's. */
@Module({
  imports: [DeliveriesModule],
  controllers: [EventSinksController],
  providers: [
    EventSinksService,
    WebhookTargetPolicy,
    { provide: WebhookChanges, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new WebhookChanges(redis, keys) },
  ],
})
export class EventSinksModule {}
