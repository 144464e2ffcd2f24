import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

/**
 * Reads a medium's stream whole with its sha256, or null as soon as it passes `maxBytes` (the stream is destroyed
 * there, so an oversized file costs at most that much memory).
 */
export async function readCapped(stream: Readable, maxBytes: number): Promise<{ bytes: Buffer; sha256: string } | null> {
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      size += buf.length;
      if (size > maxBytes) return null;
      hash.update(buf);
      chunks.push(buf);
    }
  } finally {
    if (!stream.readableEnded) stream.destroy();
  }
  return { bytes: Buffer.concat(chunks, size), sha256: hash.digest('hex') };
}
