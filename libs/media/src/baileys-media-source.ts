import type { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import { SIM_WA_WEB_TRUST_PATH, type MediaRef } from '@app/contracts';
import { Agent, type Dispatcher } from 'undici';
import { type MediaSource, MediaUnavailableError } from './media-source';

type BaileysMediaRef = Extract<MediaRef, { engine: 'baileys' }>;

/** Baileys' downloadContentFromMessage, narrowed to what a MediaRef holds: fetches and decrypts as it streams. */
export type DownloadContent = (
  media: { mediaKey: Uint8Array; directPath: string; url: string | null },
  mediaType: BaileysMediaRef['mediaType'],
) => Promise<Readable>;

/**
 * Baileys is ESM-only and heavy: loaded on the first download, never by a process that serves none (or by jest, which
 * cannot load it: e2e suites download through an API process). `dispatcher` (the emulator's test seam, below) is the
 * HTTP client its fetch uses; none: the global one.
 */
function loadDownload(dispatcher: Dispatcher | undefined): DownloadContent {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first download (above), synchronously
  const baileys = require('@whiskeysockets/baileys') as typeof import('@whiskeysockets/baileys');
  // Baileys hands `options` to the global fetch, which takes an undici dispatcher (the DOM RequestInit type lacks it)
  const opts = dispatcher ? { options: { dispatcher } as unknown as RequestInit } : {};
  return (media, mediaType) => baileys.downloadContentFromMessage(media, mediaType, opts);
}

/**
 * The test seam of CONTRACT 9 on the API's side (WHATSAPP_EMULATOR_URL, refused when NODE_ENV=production): the media
 * host of the simulator's WhatsApp Web door has a certificate signed by a CA made per simulator run, handed out as
 * `mediaCa` by `GET /sim/whatsapp-web/trust`. Downloads then verify TLS against the system roots plus that CA, through
 * a client of their own (nothing process-wide changes, and verification stays on).
 */
export async function emulatorMediaDispatcher(emulatorUrl: string): Promise<Dispatcher> {
  const res = await fetch(new URL(SIM_WA_WEB_TRUST_PATH, emulatorUrl), { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`the WhatsApp emulator's trust answered ${res.status}`);
  const { mediaCa } = (await res.json()) as { mediaCa?: unknown };
  if (typeof mediaCa !== 'string' || !mediaCa.startsWith('-----BEGIN CERTIFICATE-----')) throw new Error('the WhatsApp emulator named no media CA');
  return new Agent({ connect: { ca: [...rootCertificates, mediaCa] } });
}

export interface BaileysMediaSourceOptions {
  /** test seam only (see emulatorMediaDispatcher): the simulator whose media host downloads trust */
  emulatorUrl?: string;
}

/** The CDN's answer once WhatsApp dropped the file (expired or deleted): nothing to retry. */
const GONE = new Set([404, 410]);

/**
 * Media of messages received through Baileys, streamed from WhatsApp's CDN and decrypted on the way (AES-CBC chunk by
 * chunk, so the file is never held whole in memory).
 */
export class BaileysMediaSource implements MediaSource {
  private download: DownloadContent | null;

  constructor(download?: DownloadContent, private readonly options: BaileysMediaSourceOptions = {}) {
    this.download = download ?? null;
  }

  async open(ref: MediaRef): Promise<Readable> {
    if (ref.engine !== 'baileys') throw new Error(`BaileysMediaSource cannot open ${ref.engine} media`);
    // the emulator's trust is asked for on the first download (a failure is asked again on the next)
    this.download ??= loadDownload(this.options.emulatorUrl ? await emulatorMediaDispatcher(this.options.emulatorUrl) : undefined);
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
