import { Module } from '@nestjs/common';
import { WebhookChanges } from '@app/events';
import { REDIS_CLIENT } from '@app/infra';
import { Redis, RedisKeys } from '@app/redis';
import { DeliveriesModule } from '../../deliveries/deliveries.module';
import { MessagesModule } from '../../messages/messages.module';
import { ChatwootInboundService } from './chatwoot-inbound.service';
import { ChatwootIntegrationService } from './chatwoot-integration.service';
import { ChatwootIntegrationController, ChatwootWebhookController } from './chatwoot.controller';

/** The Chatwoot integration (CONTRACT 16): its management, and Chatwoot's webhook; its deliveries are the dispatcher's. */
@Module({
  imports: [DeliveriesModule, MessagesModule],
  controllers: [ChatwootIntegrationController, ChatwootWebhookController],
  providers: [
    ChatwootIntegrationService,
    ChatwootInboundService,
    { provide: WebhookChanges, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new WebhookChanges(redis, keys) },
  ],
})
export class ChatwootModule {}
