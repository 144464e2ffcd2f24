import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS without types
const S3rver = require('@20minutes/s3rver') as new (options: object) => { run(): Promise<AddressInfo>; close(): Promise<void> };

/** The credentials s3rver accepts (its dummy account). */
export const S3RVER_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

export interface S3Server {
  endpoint: string;
  port: number;
  bucket: string;
  /** the settings every process of the test gives the media store */
  env: Record<string, string>;
  /** stops answering (connections refused) until `start` again on the same port and files */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** stops and removes its files */
  close(): Promise<void>;
}

/**
 * An S3-compatible server in the test's own process (s3rver, files in a temporary folder), standing in for a bucket
 * of AWS, MinIO or R2. `close` (in afterAll) stops it and deletes its folder.
 */
export async function startS3Server(bucket = 'media-e2e', port = 0): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  let server: { close(): Promise<void> } | null = null;
  let bound = port;
  const start = async () => {
    // allowMismatchedSignatures: s3rver canonicalizes a path-style bucket URL as `/bucket`, while AWS SDK v3 signs
    // `/bucket/` for bucket operations (ListObjectsV2, DeleteObjects), so those would be refused though AWS takes them
    const s = new S3rver({ address: '127.0.0.1', port: bound, directory, silent: true, allowMismatchedSignatures: true, configureBuckets: [{ name: bucket }] });
    bound = (await s.run()).port;
    server = s;
  };
  await start();
  const endpoint = `http://127.0.0.1:${bound}`;
  return {
    endpoint,
    port: bound,
    bucket,
    env: {
      MEDIA_STORE: 's3',
      MEDIA_STORE_S3_BUCKET: bucket,
      MEDIA_STORE_S3_ENDPOINT: endpoint,
      MEDIA_STORE_S3_FORCE_PATH_STYLE: 'true',
      ...S3RVER_CREDENTIALS,
    },
    stop: async () => {
      await server?.close();
      server = null;
    },
    start,
    close: async () => {
      await server?.close().catch(() => undefined);
      server = null;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
