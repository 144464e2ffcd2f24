import type { MediaStoreKind } from '@app/contracts';
import type { MediaBlob, MediaBlobKey } from '@app/database';

/** Where a kept medium belongs: its message, and that message's session and organization (as `media_blobs` keys it). */
export type MediaStoreKey = MediaBlobKey;

/** A medium as kept: the decrypted bytes with their mimetype, size and sha256 (hex); a `media_blobs` row's, in any store. */
export type StoredMedia = MediaBlob;

/**
 * Inbound media kept once downloaded (MEDIA_STORE, docs/media-store.md): the gateways' eager downloads write, the API's
 * `GET …/media` reads before it asks the network, and deleting a session (or an organization's data) forgets its media.
 * One implementation per kind of storage: PostgreSQL (`media_blobs`) or an S3-compatible bucket.
 */
export interface MediaStore {
  readonly kind: Exclude<MediaStoreKind, 'none'>;
  /** Keeps the medium; a second put for the same message changes nothing. */
  put(key: MediaStoreKey, media: StoredMedia): Promise<void>;
  get(key: MediaStoreKey): Promise<StoredMedia | null>;
  has(key: MediaStoreKey): Promise<boolean>;
  /** One message's medium (a message deleted while its download ran). */
  forget(key: MediaStoreKey): Promise<void>;
  forgetSession(organizationId: string, sessionId: string): Promise<void>;
  forgetOrganization(organizationId: string): Promise<void>;
  close(): Promise<void>;
}
