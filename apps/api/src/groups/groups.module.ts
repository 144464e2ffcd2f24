import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { MediaFetcher } from '../messages/media-fetcher';
import { SessionsModule } from '../sessions/sessions.module';
import { GroupsController } from './groups.controller';
import { GroupsService } from './groups.service';

/**
 * Group administration (CONTRACT 13): reading a group fresh from the network, changing it, its members and invites,
 * joining and leaving. Through SessionActions (SessionsModule); a picture is fetched like a send's media.
 */
@Module({
  imports: [SessionsModule],
  controllers: [GroupsController],
  providers: [
    GroupsService,
    {
      provide: MediaFetcher,
      inject: [ApiConfig],
      useFactory: (c: ApiConfig) =>
        new MediaFetcher({ maxBytes: c.MEDIA_MAX_BYTES, timeoutMs: c.MEDIA_FETCH_TIMEOUT_MS, allowPrivateTargets: c.WEBHOOK_ALLOW_PRIVATE_TARGETS }),
    },
  ],
})
export class GroupsModule implements OnApplicationShutdown {
  constructor(@Inject(MediaFetcher) private readonly fetcher: MediaFetcher) {}

  async onApplicationShutdown(): Promise<void> {
    await this.fetcher.close();
  }
}
