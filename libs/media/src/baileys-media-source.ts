import type { Readable } from 'node:stream';
import { SIM_WA_WEB_TRUST_PATH, type MediaRef } from '@app/contracts';
import { Agent, type Dispatcher } from 'undici';
import { guardedConnector } from '@app/net-guard';
import { type MediaSource, MediaUnavailableError } from './media-source';
import { mediaHostFor } from './whatsapp-media-host';

type BaileysMediaRef = Extract<MediaRef, { engine: 'baileys' }>;

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Baileys' downloadContentFromMessage, narrowed to what a MediaRef holds: fetches `https://<host><directPath>` through
 * `dispatcher` and decrypts as it streams.
 */
export type DownloadContent = (
  media: { mediaKey: Uint8Array; directPath: string },
  mediaType: BaileysMediaRef['mediaType'],
  via: { host: string; dispatcher: Dispatcher },
) => Promise<Readable>;

/**
 * Baileys is ESM-only and heavy: loaded on the first download, never by a process that serves none (or by jest, which
 * cannot load it: e2e suites download through an API process). The host is always ours to choose (`opts.host`; with
 * no `url` Baileys never looks elsewhere), the dispatcher the guarded one.
 */
function loadDownload(): DownloadContent {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first download (above), synchronously
  const baileys = require('@whiskeysockets/baileys') as typeof import('@whiskeysockets/baileys');
  // Baileys hands `options` to the global fetch, which takes an undici dispatcher (the DOM RequestInit type lacks it)
  return (media, mediaType, { host, dispatcher }) =>
    baileys.downloadContentFromMessage({ ...media, url: null }, mediaType, { host, options: { dispatcher } as unknown as RequestInit });
}

/** The emulator's media host and the CA its certificate is signed with (test seam, below). */
export interface EmulatorMediaHost {
  host: string;
  ca: string;
}

/**
 * The test seam of CONTRACT 9 on the API's side (WHATSAPP_EMULATOR_URL, refused when NODE_ENV=production): the media
 * host of the simulator's WhatsApp Web door (`mediaHost`, on loopback) has a certificate signed by a CA made per
 * simulator run (`mediaCa`), both handed out by `GET /sim/whatsapp-web/trust`. Downloads then go to that host only and
 * verify TLS against the system roots plus that CA, through a client of their own (nothing process-wide changes).
 */
export async function emulatorMediaHost(emulatorUrl: string): Promise<EmulatorMediaHost> {
  const res = await fetch(new URL(SIM_WA_WEB_TRUST_PATH, emulatorUrl), { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`the WhatsApp emulator's trust answered ${res.status}`);
  const { mediaCa, mediaHost } = (await res.json()) as { mediaCa?: unknown; mediaHost?: unknown };
  if (typeof mediaCa !== 'string' || !mediaCa.startsWith('-----BEGIN CERTIFICATE-----')) throw new Error('the WhatsApp emulator named no media CA');
  if (typeof mediaHost !== 'string' || !/^[A-Za-z0-9.-]+:\d+$/.test(mediaHost)) throw new Error('the WhatsApp emulator named no media host');
  return { host: mediaHost, ca: mediaCa };
}

/**
 * The client every download goes through: the address guard's connector (no loopback, private, link-local or
 * metadata address, checked where the name is resolved), or, under the test seam, one that trusts the emulator's CA
 * and reaches its loopback host (the only host allowed then, mediaHostFor).
 */
export function mediaDispatcher(emulator: EmulatorMediaHost | null, timeoutMs = CONNECT_TIMEOUT_MS): Dispatcher {
  return new Agent({ connect: guardedConnector({ timeoutMs, allowPrivateTargets: emulator !== null, ...(emulator ? { ca: emulator.ca } : {}) }) });
}

export interface BaileysMediaSourceOptions {
  /** test seam only (see emulatorMediaHost): the simulator whose media host downloads go to */
  emulatorUrl?: string;
}


/** The CDN's answer once WhatsApp dropped the file (expired or deleted): nothing to retry. */
const GONE = new Set([404, 410]);

/**
 * Media of messages received through Baileys, streamed from WhatsApp's CDN and decrypted on the way (AES-CBC chunk by
 * chunk, so the file is never held whole in memory). The sender writes the reference, so it is fetched only from
 * WhatsApp's media hosts (mediaHostFor) through the address guard: a crafted one is refused before any connection.
 */
export class BaileysMediaSource implements MediaSource {
  private download: DownloadContent;
  private route: Promise<{ emulator: EmulatorMediaHost | null; dispatcher: Dispatcher }> | null = null;

  constructor(download?: DownloadContent, private readonly options: BaileysMediaSourceOptions = {}) {
    this.download = download ?? ((...args) => (this.download = loadDownload())(...args));
  }

  /** The emulator's host is asked for on the first download (a failure is asked again on the next). */
  private async routing(): Promise<{ emulator: EmulatorMediaHost | null; dispatcher: Dispatcher }> {
    this.route ??= (async () => {
      const emulator = this.options.emulatorUrl ? await emulatorMediaHost(this.options.emulatorUrl) : null;
      return { emulator, dispatcher: mediaDispatcher(emulator) };
    })().catch((err) => {
      this.route = null;
      throw err;
    });
    return this.route;
  }

  async open(ref: MediaRef): Promise<Readable> {
    if (ref.engine !== 'baileys') throw new Error(`BaileysMediaSource cannot open ${ref.engine} media`);
    const { emulator, dispatcher } = await this.routing();
    const host = mediaHostFor(ref, emulator?.host);
    const media = { mediaKey: Buffer.from(ref.mediaKey, 'base64'), directPath: ref.directPath };
    try {
      return await this.download(media, ref.mediaType, { host, dispatcher });
    } catch (err) {
      const status = (err as { output?: { statusCode?: unknown } } | null)?.output?.statusCode;
      if (typeof status === 'number' && GONE.has(status)) {
        throw new MediaUnavailableError(`WhatsApp no longer has this ${ref.mediaType} (HTTP ${status})`);
      }
      throw err;
    }
  }
}
