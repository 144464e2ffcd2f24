import type { LinkPreview } from '@app/contracts';
import { MediaFetcher } from './media-fetcher';

/** A page is read up to this much (Open Graph tags sit in the head), within this time; a thumbnail is small. */
export const PREVIEW_PAGE_MAX_BYTES = 512 * 1024;
export const PREVIEW_THUMBNAIL_MAX_BYTES = 64 * 1024;
export const PREVIEW_TIMEOUT_MS = 3000;

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"']+/i;

/** The first http(s) URL of a text, trailing punctuation left out (as WhatsApp matches it), or null. */
export function firstUrlOf(text: string): string | null {
  const match = URL_IN_TEXT.exec(text);
  if (!match) return null;
  const url = match[0].replace(/[.,;:!?)\]]+$/, '');
  try {
    return new URL(url).toString() && url;
  } catch {
    return null;
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };
const decode = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });

/** og:title, og:description and og:image of a page (falling back to <title> and the description meta). */
export function openGraphOf(html: string): { title: string | null; description: string | null; image: string | null } {
  const metas = new Map<string, string>();
  for (const tag of html.match(/<meta\b[^>]*>/gi) ?? []) {
    const attr = (name: string) => new RegExp(`\\b${name}\\s*=\\s*("([^"]*)"|'([^']*)')`, 'i').exec(tag);
    const key = attr('property') ?? attr('name');
    const content = attr('content');
    const k = key ? (key[2] ?? key[3]).toLowerCase() : null;
    if (k && content && !metas.has(k)) metas.set(k, decode(content[2] ?? content[3]).trim());
  }
  const titleTag = /<title[^>]*>([^<]*)<\/title>/i.exec(html)?.[1];
  const pick = (...keys: string[]) => keys.map((k) => metas.get(k)).find((v) => v) ?? null;
  return {
    title: pick('og:title', 'twitter:title') ?? (titleTag ? decode(titleTag).trim() || null : null),
    description: pick('og:description', 'twitter:description', 'description'),
    image: pick('og:image', 'og:image:url', 'twitter:image'),
  };
}

/**
 * Link previews of texts (CONTRACT 12), made when the message is accepted so every (re)send carries the same one: the
 * page is fetched through the SSRF guard (MediaFetcher: the resolved address of every hop is checked), bounded in size
 * and time, and its Open Graph tags read; a small JPEG og:image becomes the thumbnail. Anything that fails gives no
 * preview: the text is sent without one.
 */
export class LinkPreviewer {
  private readonly pages: MediaFetcher;
  private readonly thumbnails: MediaFetcher;

  constructor(options: { allowPrivateTargets: boolean; timeoutMs?: number }) {
    const timeoutMs = options.timeoutMs ?? PREVIEW_TIMEOUT_MS;
    this.pages = new MediaFetcher({ maxBytes: PREVIEW_PAGE_MAX_BYTES, timeoutMs, allowPrivateTargets: options.allowPrivateTargets });
    this.thumbnails = new MediaFetcher({ maxBytes: PREVIEW_THUMBNAIL_MAX_BYTES, timeoutMs, allowPrivateTargets: options.allowPrivateTargets });
  }

  async previewOf(text: string): Promise<LinkPreview | null> {
    const url = firstUrlOf(text);
    if (!url) return null;
    let page: Buffer;
    try {
      page = await this.pages.fetch(url);
    } catch {
      return null;
    }
    const og = openGraphOf(page.toString('utf8'));
    if (!og.title) return null;
    const imageUrl = og.image ? absolute(og.image, url) : null;
    return { url, title: og.title, description: og.description, imageUrl, thumbnailBase64: imageUrl ? await this.thumbnail(imageUrl) : null };
  }

  /** WhatsApp shows a JPEG thumbnail; anything else (or too big) is left out rather than converted. */
  private async thumbnail(imageUrl: string): Promise<string | null> {
    try {
      const bytes = await this.thumbnails.fetch(imageUrl);
      return bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff ? bytes.toString('base64') : null;
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.pages.close(), this.thumbnails.close()]);
  }
}

function absolute(href: string, base: string): string | null {
  try {
    const u = new URL(href, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : null;
  } catch {
    return null;
  }
}
