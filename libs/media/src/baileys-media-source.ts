import type { Readable } from 'node:stream';
import type { MediaRef } from '@app/contracts';
import { type MediaSource, MediaUnavailableError } from './media-source';

type BaileysMediaRef = Extract<MediaRef, { engine: 'baileys' }>;

/** Baileys' downloadContentFromMessage, narrowed to what a MediaRef holds: fetches and decrypts as it streams. */
export type DownloadContent = (
  media: { mediaKey: Uint8Array; directPath: string; url: string | null },
  mediaType: BaileysMediaRef['mediaType'],
) => Promise<Readable>;

/** Baileys is ESM-only and heavy: loaded on the first download, never by a process that serves none (or by jest). */
function loadDownload(): DownloadContent {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first download (above), synchronously
  const baileys = require('@whiskeysockets/baileys') as typeof import('@whiskeysockets/baileys');
  return (media, mediaType) => baileys.downloadContentFromMessage(media, mediaType);
}

/** The CDN's answer once WhatsApp dropped the file (expired or deleted): nothing to retry. */
const GONE = new Set([404, 410]);

/**
 * Media of messages received through Baileys, streamed from WhatsApp's CDN and decrypted on the way (AES-CBC chunk by
 * chunk, so the file is never held whole in memory).
 */
export class BaileysMediaSource implements MediaSource {
  private download: DownloadContent | null;

  constructor(download?: DownloadContent) {
    this.download = download ?? null;
  }

  async open(ref: MediaRef): Promise<Readable> {
    if (ref.engine !== 'baileys') throw new Error(`BaileysMediaSource cannot open ${ref.engine} media`);
    this.download ??= loadDownload();
    const media = { mediaKey: Buffer.from(ref.mediaKey, 'base64'), directPath: ref.directPath, url: ref.url };
    try {
      return await this.download(media, ref.mediaType);
    } catch (err) {
      const status = (err as { output?: { statusCode?: unknown } } | null)?.output?.statusCode;
      if (typeof status === 'number' && GONE.has(status)) {
        throw new MediaUnavailableError(`WhatsApp no longer has this ${ref.mediaType} (HTTP ${status})`);
      }
      throw err;
    }
  }
}
