import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { REDIS_CLIENT } from '@app/infra';
import { BaileysMediaSource, SimMediaSource } from '@app/media';
import { SendRateLimiter, SendSignal } from '@app/messaging';
import { Redis, RedisKeys } from '@app/redis';
import { MediaFetcher } from './media-fetcher';
import { MEDIA_SOURCE, MediaSourceByEngine } from './media-source.provider';
import { MessagesBatchController } from './messages-batch.controller';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';

/** Sending (rates, idempotency, media) and the message log. */
@Module({
  controllers: [MessagesController, MessagesBatchController],
  providers: [
    MessagesService,
    { provide: SendRateLimiter, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new SendRateLimiter(redis, keys) },
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
      useFactory: (c: ApiConfig) => new MediaSourceByEngine({ sim: new SimMediaSource(c.NETWORK_SIM_URL), baileys: new BaileysMediaSource() }),
    },
  ],
})
export class MessagesModule implements OnApplicationShutdown {
  constructor(@Inject(MediaFetcher) private readonly fetcher: MediaFetcher) {}

  async onApplicationShutdown(): Promise<void> {
    await this.fetcher.close();
  }
}
