import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';

/** Webhook delivery log, replay and test sends (CONTRACT 4); the POSTs themselves are the dispatcher's. */
@Module({
  imports: [WebhooksModule],
  controllers: [DeliveriesController],
  providers: [DeliveriesService],
})
export class DeliveriesModule {}
