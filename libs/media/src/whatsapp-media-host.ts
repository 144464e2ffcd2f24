import { MediaUnavailableError } from './media-source';

/** Where Baileys downloads media by default (its DEF_MEDIA_HOST) and where a reference without a usable `url` is fetched. */
export const WHATSAPP_MEDIA_HOST = 'mmg.whatsapp.net';

/**
 * WhatsApp's own media CDN: mmg.whatsapp.net, mmg-fallback.whatsapp.net (both in Baileys' WABinary constants), the
 * media-*.cdn.whatsapp.net and *.fna.whatsapp.net edges `media_conn` names. HTTPS on its default port only: a `url` with a
 * port or another domain is not WhatsApp's.
 */
export function isWhatsAppMediaHost(host: string): boolean {
  const name = host.toLowerCase();
  return name === WHATSAPP_MEDIA_HOST || /^[a-z0-9-]+(\.[a-z0-9-]+)*\.whatsapp\.net$/.test(name);
}

/**
 * A media reference the product refuses to fetch: its host is not WhatsApp's media CDN, or its path is not a path. The
 * sender of a message writes the reference, so a crafted one could aim our downloads at any host:port (issue 37).
 */
export class MediaReferenceRefusedError extends MediaUnavailableError {
  constructor(message: string) {
    super(message);
    this.name = 'MediaReferenceRefusedError';
  }
}

/**
 * True for a direct path that can only be a path on the media host: `/…`, without whitespace, control characters or
 * backslashes. Baileys downloads `https://<host><directPath>`, so a direct path like `@127.0.0.1:6379/x` or `.evil.example/x`
 * would otherwise pick the host itself.
 */
export function isMediaDirectPath(directPath: unknown): directPath is string {
  if (typeof directPath !== 'string' || !directPath.startsWith('/') || directPath.length > 2048) return false;
  return ![...directPath].some((c) => c <= ' ' || c === '\x7f' || c === '\\' || /\s/.test(c));
}

/**
 * The one host a media reference is downloaded from, or a MediaReferenceRefusedError. `trustedHost` is the emulator's
 * media host under the test seam (then it is the only host); otherwise WhatsApp's CDN. The reference's `url` may only
 * name an allowed host (it picks among WhatsApp's edges); without one the default host serves the direct path.
 */
export function mediaHostFor(ref: { directPath: string; url?: string | null }, trustedHost?: string): string {
  if (!isMediaDirectPath(ref.directPath)) {
    throw new MediaReferenceRefusedError(`the media reference is refused: its directPath ${JSON.stringify(String(ref.directPath).slice(0, 80))} is not a path`);
  }
  const allowed = (host: string) => (trustedHost ? host === trustedHost : isWhatsAppMediaHost(host));
  const fallback = trustedHost ?? WHATSAPP_MEDIA_HOST;
  if (!ref.url) return fallback;
  let url: URL;
  try {
    url = new URL(ref.url);
  } catch {
    throw new MediaReferenceRefusedError('the media reference is refused: its url is not a URL');
  }
  if (url.protocol !== 'https:' || url.username || url.password || !allowed(url.host)) {
    throw new MediaReferenceRefusedError(`the media reference is refused: its url names ${url.protocol}//${url.host}, which is not a WhatsApp media host`);
  }
  return url.host;
}

/**
 * The `url` of a media reference as it is kept: only an `https://` URL on WhatsApp's media CDN, else null (the direct
 * path on the default host serves it). The sender writes it, so anything else is never stored to be followed.
 */
export function trustedMediaUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && !parsed.username && !parsed.password && isWhatsAppMediaHost(parsed.host) ? url : null;
  } catch {
    return null;
  }
}
