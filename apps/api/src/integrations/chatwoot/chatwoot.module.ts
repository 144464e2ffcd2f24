import { Module } from '@nestjs/common';
import { DeliveriesModule } from '../../deliveries/deliveries.module';
import { DestinationsModule } from '../../destinations/destinations.module';
import { MessagesModule } from '../../messages/messages.module';
import { ChatwootInboundService } from './chatwoot-inbound.service';
import { ChatwootIntegrationService } from './chatwoot-integration.service';
import { ChatwootIntegrationController, ChatwootWebhookController } from './chatwoot.controller';

/** The Chatwoot integration (CONTRACT 16): its management, and Chatwoot's webhook; its deliveries are the dispatcher's. */
@Module({
  imports: [DeliveriesModule, DestinationsModule, MessagesModule],
  controllers: [ChatwootIntegrationController, ChatwootWebhookController],
  providers: [ChatwootIntegrationService, ChatwootInboundService],
})
export class ChatwootModule {}
