import type { MediaBlobsRepository } from '@app/database';
import type { MediaStore, MediaStoreKey, StoredMedia } from './media-store';

/** MEDIA_STORE=postgres: the `media_blobs` table (its repository owns the SQL); rows go with their message. */
export class PostgresMediaStore implements MediaStore {
  readonly kind = 'postgres' as const;

  constructor(private readonly blobs: Pick<MediaBlobsRepository, 'put' | 'get' | 'has' | 'deleteSession' | 'deleteOrganization' | 'deleteMessage'>) {}

  async put(key: MediaStoreKey, media: StoredMedia): Promise<void> {
    await this.blobs.put(key, media);
  }

  get(key: MediaStoreKey): Promise<StoredMedia | null> {
    return this.blobs.get(key);
  }

  has(key: MediaStoreKey): Promise<boolean> {
    return this.blobs.has(key.messageId);
  }

  async forget(key: MediaStoreKey): Promise<void> {
    await this.blobs.deleteMessage(key.messageId);
  }

  async forgetSession(_organizationId: string, sessionId: string): Promise<void> {
    await this.blobs.deleteSession(sessionId);
  }

  async forgetOrganization(organizationId: string): Promise<void> {
    await this.blobs.deleteOrganization(organizationId);
  }

  async close(): Promise<void> {}
}
