import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { BaileysMediaSource, MediaSourceByEngine, SimMediaSource } from '@app/media';
import { SendSignal } from '@app/messaging';
import { RedisKeys } from '@app/redis';
import { MediaFetcher } from './media-fetcher';
import { MEDIA_SOURCE } from '../media/media-tokens';
import { MediaStoreModule } from '../media/media-store.module';
import { SessionsModule } from '../sessions/sessions.module';
import { LinkPreviewer } from './link-preview';
import { CallsController, MessageActionsController } from './message-actions.controller';
import { MessageActionsService } from './message-actions.service';
import { MessagesBatchController } from './messages-batch.controller';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';
import { MessageLogService } from './message-log.service';
import { MediaReupload } from './media-reupload';

/** Sending (rates, idempotency, media) and the message log. */
@Module({
  imports: [SessionsModule, MediaStoreModule],
  controllers: [MessagesController, MessagesBatchController, MessageActionsController, CallsController],
  providers: [
    MessagesService,
    MessageLogService,
    MediaReupload,
    MessageActionsService,
    // link previews of texts, fetched through the same SSRF guard and test allowance as media URLs
    { provide: LinkPreviewer, inject: [ApiConfig], useFactory: (c: ApiConfig) => new LinkPreviewer({ allowPrivateTargets: c.WEBHOOK_ALLOW_PRIVATE_TARGETS }) },
    { provide: SendSignal, inject: [RedisKeys], useFactory: (keys: RedisKeys) => new SendSignal(keys) },
    {
      provide: MediaFetcher,
      inject: [ApiConfig],
      useFactory: (c: ApiConfig) =>
        new MediaFetcher({ maxBytes: c.MEDIA_MAX_BYTES, timeoutMs: c.MEDIA_FETCH_TIMEOUT_MS, allowPrivateTargets: c.WEBHOOK_ALLOW_PRIVATE_TARGETS }),
    },
    // inbound media streams from the network that holds it: the WhatsApp CDN (decrypted as it streams) or the simulator
    {
      provide: MEDIA_SOURCE,
      inject: [ApiConfig],
      useFactory: (c: ApiConfig) =>
        new MediaSourceByEngine({ sim: new SimMediaSource(c.NETWORK_SIM_URL), baileys: new BaileysMediaSource(undefined, { emulatorUrl: c.WHATSAPP_EMULATOR_URL }) }),
    },
  ],
  // the one fetcher of client media URLs (SSRF guard, bounds), for other media a client gives (profile pictures)
  exports: [MediaFetcher, MessagesService],
})
export class MessagesModule implements OnApplicationShutdown {
  constructor(
    @Inject(MediaFetcher) private readonly fetcher: MediaFetcher,
    @Inject(LinkPreviewer) private readonly previews: LinkPreviewer,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.fetcher.close(), this.previews.close()]);
  }
}
