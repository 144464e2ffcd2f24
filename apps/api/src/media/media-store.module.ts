import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { MediaBlobsRepository } from '@app/database';
import { createMediaStore, type MediaStore } from '@app/media';
import { MEDIA_STORE } from './media-tokens';

/**
 * The operator's MediaStore (MEDIA_STORE; null for `none`): `GET …/media` reads inbound media from it before asking the
 * network, and deleting a session forgets the session's media there. The gateways write it (eager downloads).
 */
@Module({
  providers: [{ provide: MEDIA_STORE, inject: [ApiConfig, MediaBlobsRepository], useFactory: (c: ApiConfig, blobs: MediaBlobsRepository) => createMediaStore(c, blobs) }],
  exports: [MEDIA_STORE],
})
export class MediaStoreModule implements OnApplicationShutdown {
  constructor(@Inject(MEDIA_STORE) private readonly store: MediaStore | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store?.close();
  }
}
