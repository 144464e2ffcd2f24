import type { BaseConfig } from '@app/config';
import type { MediaBlobsRepository } from '@app/database';
import type { MediaStore } from './media-store';
import { PostgresMediaStore } from './postgres-media-store';
import { S3MediaStore } from './s3-media-store';

/** The store MEDIA_STORE names, or null for `none` (media is fetched from the network on each GET, as before). */
export function createMediaStore(c: BaseConfig, blobs: MediaBlobsRepository): MediaStore | null {
  switch (c.MEDIA_STORE) {
    case 'none':
      return null;
    case 'postgres':
      return new PostgresMediaStore(blobs);
    case 's3':
      return new S3MediaStore({
        bucket: c.MEDIA_STORE_S3_BUCKET!,
        region: c.MEDIA_STORE_S3_REGION,
        endpoint: c.MEDIA_STORE_S3_ENDPOINT,
        forcePathStyle: c.MEDIA_STORE_S3_FORCE_PATH_STYLE,
        prefix: c.MEDIA_STORE_S3_PREFIX,
      });
  }
}
