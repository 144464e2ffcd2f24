import { Module } from '@nestjs/common';
import { WebhookTargetPolicy } from './webhook-target.policy';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

@Module({
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookTargetPolicy],
  exports: [WebhooksService],
})
export class WebhooksModule {}
