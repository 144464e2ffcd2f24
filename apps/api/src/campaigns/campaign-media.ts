import { createHash } from 'node:crypto';
import { CampaignMedia, DomainError, MediaMessageType } from '@app/contracts';
import { MediaFetcher } from '../messages/media-fetcher';
import type { CampaignMediaInput } from './campaign-body';

/**
 * A media campaign's file, taken once when the campaign is created: a URL fetched through the API's one media fetcher
 * (the SSRF guard on every address dialled, MEDIA_MAX_BYTES, MEDIA_FETCH_TIMEOUT_MS), or base64 decoded. Every problem
 * is a 422 naming its field under `message.media`, before anything is stored. The bytes are then stored once with the
 * campaign (`campaign_media`) and every recipient's message sends them (docs/campaigns.md, "Media").
 */
export class CampaignMediaLoader {
  constructor(private readonly fetcher: Pick<MediaFetcher, 'fetch'>) {}

  async load(type: MediaMessageType, input: CampaignMediaInput): Promise<{ media: CampaignMedia; bytes: Buffer }> {
    const bytes = input.url !== null ? await this.fetch(input.url) : Buffer.from(input.base64!, 'base64');
    if (bytes.length === 0) throw campaignMediaInvalid('message.media.base64', 'the media is empty');
    return {
      media: {
        mimetype: input.mimetype ?? sniffMimetype(bytes) ?? DEFAULT_MIMETYPE[type],
        size: bytes.length,
        filename: input.filename,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      },
      bytes,
    };
  }

  /** The fetcher's refusals name `media.url`: here they name `message.media.url`, and a file too large is a 422 too. */
  private async fetch(url: string): Promise<Buffer> {
    try {
      return await this.fetcher.fetch(url);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const fields = (err.details.fields ?? {}) as Record<string, string[]>;
      const reasons = Object.values(fields).flat();
      const rest = Object.fromEntries(Object.entries(err.details).filter(([k]) => k !== 'fields'));
      throw new DomainError('validation_error', err.message, { ...rest, fields: { 'message.media.url': reasons.length ? reasons : [err.message] } });
    }
  }
}

const campaignMediaInvalid = (field: string, reason: string) => new DomainError('validation_error', 'request is invalid', { fields: { [field]: [reason] } });

/** The MIME type when none is given and the bytes do not say (what WhatsApp's clients send for each type). */
export const DEFAULT_MIMETYPE: Record<MediaMessageType, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mpeg',
  voice: 'audio/ogg; codecs=opus',
  document: 'application/octet-stream',
  sticker: 'image/webp',
};

const ascii = (b: Buffer, from: number, to: number) => b.subarray(from, to).toString('latin1');

/** The formats a campaign's file is commonly in, recognised by their first bytes (most specific first). */
const SIGNATURES: Array<[string, (b: Buffer) => boolean]> = [
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/png', (b) => ascii(b, 0, 8) === '\x89PNG\r\n\x1a\n'],
  ['image/gif', (b) => ascii(b, 0, 4) === 'GIF8'],
  ['image/webp', (b) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP'],
  ['application/pdf', (b) => ascii(b, 0, 5) === '%PDF-'],
  ['audio/ogg; codecs=opus', (b) => ascii(b, 0, 4) === 'OggS' && b.subarray(0, 64).includes('OpusHead')],
  ['audio/ogg', (b) => ascii(b, 0, 4) === 'OggS'],
  ['audio/mp4', (b) => ascii(b, 4, 8) === 'ftyp' && ascii(b, 8, 11) === 'M4A'],
  ['video/mp4', (b) => ascii(b, 4, 8) === 'ftyp'],
  ['audio/mpeg', (b) => ascii(b, 0, 3) === 'ID3' || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0)],
];

/** The MIME type the first bytes show, or null. */
export function sniffMimetype(bytes: Buffer): string | null {
  return SIGNATURES.find(([, matches]) => matches(bytes))?.[0] ?? null;
}
