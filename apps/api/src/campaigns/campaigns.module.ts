import { Module } from '@nestjs/common';
import { CampaignSignal } from '@app/messaging';
import { RedisKeys } from '@app/redis';
import { MediaFetcher } from '../messages/media-fetcher';
import { MessagesModule } from '../messages/messages.module';
import { CampaignMediaLoader } from './campaign-media';
import { CampaignsController } from './campaigns.controller';
import { CampaignsService } from './campaigns.service';

/** Campaigns and opt-outs (CONTRACT 17); the gateway runs them. */
@Module({
  // a media campaign's URL is fetched by the one fetcher of client media URLs (MessagesModule's)
  imports: [MessagesModule],
  controllers: [CampaignsController],
  providers: [
    CampaignsService,
    { provide: CampaignSignal, inject: [RedisKeys], useFactory: (keys: RedisKeys) => new CampaignSignal(keys) },
    { provide: CampaignMediaLoader, inject: [MediaFetcher], useFactory: (fetcher: MediaFetcher) => new CampaignMediaLoader(fetcher) },
  ],
})
export class CampaignsModule {}
