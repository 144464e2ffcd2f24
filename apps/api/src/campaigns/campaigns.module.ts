import { Module } from '@nestjs/common';
import { CampaignSignal } from '@app/messaging';
import { RedisKeys } from '@app/redis';
import { CampaignsController } from './campaigns.controller';
import { CampaignsService } from './campaigns.service';

/** Campaigns and opt-outs (CONTRACT 17); the gateway runs them. */
@Module({
  controllers: [CampaignsController],
  providers: [CampaignsService, { provide: CampaignSignal, inject: [RedisKeys], useFactory: (keys: RedisKeys) => new CampaignSignal(keys) }],
})
export class CampaignsModule {}
