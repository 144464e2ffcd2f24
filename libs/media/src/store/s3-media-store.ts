import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { MediaStore, MediaStoreKey, StoredMedia } from './media-store';

export interface S3MediaStoreOptions {
  bucket: string;
  region: string;
  /** an S3-compatible server; unset = AWS */
  endpoint?: string;
  forcePathStyle: boolean;
  /** prepended to every key: `<prefix><organizationId>/<sessionId>/<messageId>` */
  prefix: string;
}

const notFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
};

/**
 * MEDIA_STORE=s3: one object per message in an S3-compatible bucket, through the AWS SDK (credentials from its standard
 * chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, web identity, instance roles). The object's
 * Content-Type is the mimetype and its `sha256` metadata the digest. A session's or organization's media is a key prefix,
 * listed and deleted in batches of 1000.
 */
export class S3MediaStore implements MediaStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly options: S3MediaStoreOptions, client?: S3Client) {
    this.client =
      client ??
      new S3Client({
        region: options.region,
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        forcePathStyle: options.forcePathStyle,
        // checksums only where S3 requires them: many S3-compatible servers reject the SDK's default CRC headers
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
  }

  private key(k: MediaStoreKey): string {
    return `${this.options.prefix}${k.organizationId}/${k.sessionId}/${k.messageId}`;
  }

  async put(key: MediaStoreKey, media: StoredMedia): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: this.key(key),
        Body: media.bytes,
        ContentType: media.mimetype,
        ContentLength: media.size,
        Metadata: { sha256: media.sha256 },
      }),
    );
  }

  async get(key: MediaStoreKey): Promise<StoredMedia | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
      const bytes = Buffer.from(await out.Body!.transformToByteArray());
      return { mimetype: out.ContentType ?? 'application/octet-stream', size: bytes.length, sha256: out.Metadata?.sha256 ?? '', bytes };
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  }

  async has(key: MediaStoreKey): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
      return true;
    } catch (err) {
      if (notFound(err)) return false;
      throw err;
    }
  }

  async forget(key: MediaStoreKey): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
  }

  forgetSession(organizationId: string, sessionId: string): Promise<void> {
    return this.forgetPrefix(`${this.options.prefix}${organizationId}/${sessionId}/`);
  }

  forgetOrganization(organizationId: string): Promise<void> {
    return this.forgetPrefix(`${this.options.prefix}${organizationId}/`);
  }

  /** Every object under the prefix (keys are ids, so one organization's prefix never covers another's). */
  private async forgetPrefix(prefix: string): Promise<void> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: prefix, ContinuationToken: token, MaxKeys: 1000 }));
      const objects = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (objects.length) {
        const out = await this.client.send(new DeleteObjectsCommand({ Bucket: this.options.bucket, Delete: { Objects: objects, Quiet: true } }));
        if (out.Errors?.length) throw new Error(`S3 kept ${out.Errors.length} object(s) under ${prefix}: ${out.Errors[0].Code} ${out.Errors[0].Message}`);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
