/**
 * Media messages over the WhatsApp Web front door, both ways. From the device: the contact that decrypted the message
 * fetches the encrypted file from the media host by its direct path and decrypts it with the message's media key, as
 * its phone would; the network records the plain bytes as the sim door does. To the device: the contact's phone
 * encrypts the network's bytes under a fresh media key, uploads them to the media host, and sends the message that
 * names them (url, direct path, key, hashes), which the gateway downloads and decrypts.
 */
import { isMediaType, mediaContent, type MediaMessageType, type SimInboundMessage, type SimOutboundContent, type SimOutboundMedia } from '@app/contracts';
import type { WaMessage } from './contact-messages';
import { decryptMedia, encryptMedia, WaMediaType } from './media-crypto';
import type { MediaHost } from './media-server';
import type { Baileys, DecodedMessage } from './wa-kit';

/** What the network records of a media message the device sent: the plain bytes, base64, and the caption. */
export type SentMedia = Extract<SimOutboundContent, { media: SimOutboundMedia }>;

interface MediaFields {
  url?: string | null;
  directPath?: string | null;
  mediaKey?: Uint8Array | null;
  mimetype?: string | null;
  fileSha256?: Uint8Array | null;
  fileEncSha256?: Uint8Array | null;
}

/** The media part of a message the device sent (wrappers such as documentWithCaption unwrapped), or null. */
function mediaPartOf(baileys: Baileys, message: DecodedMessage): { type: SentMedia['type']; mediaType: WaMediaType; media: MediaFields; caption: string | null; filename: string | null } | null {
  const m = baileys.normalizeMessageContent(message);
  if (!m) return null;
  if (m.imageMessage) return { type: 'image', mediaType: 'image', media: m.imageMessage, caption: m.imageMessage.caption || null, filename: null };
  if (m.videoMessage) return { type: 'video', mediaType: 'video', media: m.videoMessage, caption: m.videoMessage.caption || null, filename: null };
  if (m.documentMessage) return { type: 'document', mediaType: 'document', media: m.documentMessage, caption: m.documentMessage.caption || null, filename: m.documentMessage.fileName || null };
  if (m.audioMessage) return { type: m.audioMessage.ptt ? 'voice' : 'audio', mediaType: 'audio', media: m.audioMessage, caption: null, filename: null };
  if (m.stickerMessage) return { type: 'sticker', mediaType: 'sticker', media: m.stickerMessage, caption: null, filename: null };
  return null;
}

/**
 * A media message the device sent, as the contact reads it: downloaded from the media host and decrypted (hashes and
 * mac checked). Null when the message carries no media; throws when the file is missing or does not decrypt.
 */
export async function sentMediaOf(baileys: Baileys, host: MediaHost | undefined, message: DecodedMessage): Promise<SentMedia | null> {
  const part = mediaPartOf(baileys, message);
  if (!part) return null;
  const { media } = part;
  const where = media.directPath || media.url;
  if (!host || !where || !media.mediaKey?.length) throw new Error(`a ${part.type} without a direct path or media key`);
  const file = host.get(where);
  if (!file) throw new Error(`the media host has no file at ${where}`);
  const plain = await decryptMedia(baileys, file, { mediaKey: media.mediaKey, mediaType: part.mediaType, fileSha256: media.fileSha256, fileEncSha256: media.fileEncSha256 });
  const wire: SimOutboundMedia = { data: plain.toString('base64'), mimetype: media.mimetype || 'application/octet-stream', filename: part.filename };
  return mediaContent(part.type, wire, part.caption);
}

/**
 * Baileys' HKDF media type of each inbound kind that carries a file; null for those contact-messages.ts writes. One
 * entry per type: a new one does not compile until it is said here (docs/messages.md, "adding a message type").
 */
const INBOUND_MEDIA_TYPE: Record<SimInboundMessage['type'], WaMediaType | null> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  voice: 'audio',
  document: 'document',
  sticker: 'sticker',
  text: null,
  location: null,
  contact: null,
  pollVote: null,
};

export function isInboundMedia(message: SimInboundMessage): boolean {
  return message.media !== null && INBOUND_MEDIA_TYPE[message.type] !== null;
}

/** How a contact's phone writes each media kind around the fields of its encrypted file. */
const MEDIA_MESSAGE: Record<MediaMessageType, (fields: Record<string, unknown>, caption: { caption?: string }, filename: string | null) => WaMessage> = {
  image: (fields, caption) => ({ imageMessage: { ...fields, ...caption } }),
  video: (fields, caption) => ({ videoMessage: { ...fields, ...caption } }),
  document: (fields, caption, filename) => ({ documentMessage: { ...fields, ...caption, fileName: filename ?? 'file' } }),
  audio: (fields) => ({ audioMessage: { ...fields, ptt: false } }),
  voice: (fields) => ({ audioMessage: { ...fields, ptt: true } }),
  sticker: (fields) => ({ stickerMessage: fields }),
};

/**
 * A contact's media message: the bytes encrypted and uploaded to the media host, the message naming them (with the
 * reply and mentions it carries, `contextInfo`, contact-messages.ts).
 */
export async function inboundMediaMessage(
  baileys: Baileys,
  host: MediaHost,
  message: SimInboundMessage,
  bytes: Buffer,
  contextInfo: Record<string, unknown> | null = null,
): Promise<WaMessage> {
  const mediaType = INBOUND_MEDIA_TYPE[message.type];
  if (!mediaType || !message.media || !isMediaType(message.type)) throw new Error(`not a media message: ${message.type}`);
  const encrypted = await encryptMedia(baileys, bytes, mediaType);
  const stored = host.put(encrypted.file, mediaType);
  const fields = {
    url: stored.url,
    directPath: stored.directPath,
    mediaKey: encrypted.mediaKey,
    mimetype: message.media.mimetype,
    fileSha256: encrypted.fileSha256,
    fileEncSha256: encrypted.fileEncSha256,
    fileLength: encrypted.fileLength,
    mediaKeyTimestamp: Math.floor(message.timestamp / 1000),
    ...(contextInfo ? { contextInfo } : {}),
  };
  const caption = message.text ? { caption: message.text } : {};
  return MEDIA_MESSAGE[message.type](fields, caption, message.media.filename);
}
