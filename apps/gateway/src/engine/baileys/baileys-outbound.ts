import type { AnyMessageContent, MiscMessageGenerationOptions, proto, WAMessage, WAMessageKey, WAUrlInfo } from '@whiskeysockets/baileys';
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { DomainError, vcardFor, type LinkPreview, type MessageKeyRef, type OutboundContent, type OutboundMessage } from '@app/contracts';
import type { EngineLookups } from '../engine.interface';
import { voiceShapeOf } from './voice-waveform';

/**
 * What we send → what Baileys' sendMessage takes. Pure: the engine hands the result to the socket, specs assert it.
 */

export function messageKeyFor(ref: MessageKeyRef): WAMessageKey {
  return { remoteJid: ref.chatJid, id: ref.waMessageId, fromMe: ref.fromMe, ...(ref.participant ? { participant: ref.participant } : {}) };
}

/** A voice note goes as Ogg/Opus (what WhatsApp plays as one), named so: iOS refuses one whose mimetype does not say so. */
const VOICE_MIMETYPE = 'audio/ogg; codecs=opus';

/**
 * A voice note's bars and length as WhatsApp shows them (voice-waveform.ts); none when the audio cannot be read, and
 * Baileys then measures the length itself. `waveform` is AudioMessage's field, which Baileys' content type leaves out.
 */
export function messageContentFor(content: OutboundContent, mentions: string[]): AnyMessageContent {
  // only text, image, video and poll carry mentions in Baileys' content types
  const mentioned = mentions.length ? { mentions } : {};
  return (CONTENT_FOR[content.type] as (c: OutboundContent, mentioned: { mentions?: string[] }) => AnyMessageContent)(content, mentioned);
}

type ContentBuilders = { [K in OutboundContent['type']]: (content: Extract<OutboundContent, { type: K }>, mentioned: { mentions?: string[] }) => AnyMessageContent };

const captionOf = (caption: string | null) => (caption ? { caption } : {});

/** Each content type as Baileys' sendMessage takes it, one entry per type (docs/messages.md, "adding a message type"). */
const CONTENT_FOR: ContentBuilders = {
  // always said (null: none): left undefined, Baileys would fetch a preview of its own, past our SSRF guard
  text: (c, mentioned) => ({ text: c.text, linkPreview: c.linkPreview ? urlInfoFor(c.linkPreview) : null, ...mentioned }),
  image: (c, mentioned) => ({ image: c.media.data, mimetype: c.media.mimetype, ...captionOf(c.caption), ...mentioned }),
  video: (c, mentioned) => ({ video: c.media.data, mimetype: c.media.mimetype, ...captionOf(c.caption), ...mentioned }),
  document: (c) => ({ document: c.media.data, mimetype: c.media.mimetype, ...(c.media.filename ? { fileName: c.media.filename } : {}), ...captionOf(c.caption) }),
  // an audio file, whatever its format: a voice note is the `voice` type (CONTRACT 12), as on the sim engine
  audio: (c) => ({ audio: c.media.data, mimetype: c.media.mimetype, ptt: false }),
  voice: (c) => ({ audio: c.media.data, mimetype: VOICE_MIMETYPE, ptt: true, ...(voiceShapeOf(c.media.data) ?? {}) }),
  sticker: (c) => ({ sticker: c.media.data }),
  location: (c) => {
    const { latitude, longitude, name, address } = c.location;
    return { location: { degreesLatitude: latitude, degreesLongitude: longitude, ...(name ? { name } : {}), ...(address ? { address } : {}) } };
  },
  contact: (c) => ({ contacts: { displayName: c.contact.fullName, contacts: [{ displayName: c.contact.fullName, vcard: vcardFor(c.contact) }] } }),
  reaction: (c) => ({ react: { text: c.emoji, key: messageKeyFor(c.target) } }),
  poll: (c, mentioned) => ({ poll: { name: c.poll.name, values: c.poll.options, selectableCount: c.poll.selectableCount }, ...mentioned }),
  pollVote: (c) => needsOriginal(c.type),
  forward: (c) => needsOriginal(c.type),
};

function needsOriginal(type: string): never {
  throw new Error(`a ${type} needs its stored original: build it with outboundFor`);
}

/** Our link preview as Baileys' WAUrlInfo (it puts it on the extendedTextMessage as WhatsApp does). */
export function urlInfoFor(preview: LinkPreview): WAUrlInfo {
  return {
    'canonical-url': preview.url,
    'matched-text': preview.url,
    title: preview.title,
    ...(preview.description ? { description: preview.description } : {}),
    ...(preview.thumbnailBase64 ? { jpegThumbnail: Buffer.from(preview.thumbnailBase64, 'base64') } : {}),
    ...(preview.imageUrl ? { originalThumbnailUrl: preview.imageUrl } : {}),
  };
}

/** The stored content a forward copies or a vote is for (the original's proto.Message bytes), read before the send. */
export async function storedOriginalFor(content: OutboundContent, lookups: EngineLookups | null): Promise<Uint8Array | null> {
  const key = content.type === 'forward' ? content.original : content.type === 'pollVote' ? content.poll : null;
  if (!key || !lookups) return null;
  return lookups.message(key.chatJid, key.waMessageId);
}

export interface OutboundContext {
  /** `<digits>@s.whatsapp.net` of the account */
  ownJid: string | null;
  /** storedOriginalFor's answer */
  stored: Uint8Array | null;
  decode(bytes: Uint8Array): proto.IMessage;
  /** for specs: the vote's IV and time */
  iv?: Buffer;
  now?: number;
}

/** What the engine sends: content for sendMessage, or a message Baileys cannot build, to relay as it is (a vote). */
export type PreparedOutbound = { content: AnyMessageContent } | { relay: proto.IMessage };

export function outboundFor(message: OutboundMessage, ctx: OutboundContext): PreparedOutbound {
  const content = message.content;
  if (content.type === 'forward') {
    if (!ctx.stored) throw new DomainError('not_found', 'the forwarded message has no stored content to copy', { waMessageId: content.original.waMessageId });
    // Baileys copies the content and marks it forwarded (contextInfo.isForwarded, forwardingScore)
    return { content: { forward: { key: messageKeyFor(content.original), message: ctx.decode(ctx.stored) }, force: true } };
  }
  if (content.type === 'pollVote') return { relay: pollVoteMessage(content, ctx) };
  return { content: messageContentFor(content, message.mentions) };
}

/**
 * A vote as WhatsApp sends it: the SHA-256 of each option name in a PollVoteMessage, AES-256-GCM encrypted with a key
 * derived from the poll's messageSecret, the poll's id, its creator and the voter — the inverse of Baileys'
 * decryptPollVote (Utils/process-message.js), which is what every receiving phone runs.
 */
export function pollVoteMessage(vote: Extract<OutboundContent, { type: 'pollVote' }>, ctx: OutboundContext): proto.IMessage {
  const pollMsgId = vote.poll.waMessageId;
  if (!ctx.stored) throw new DomainError('not_found', 'the poll voted on has no stored content', { pollWaMessageId: pollMsgId });
  const secret = ctx.decode(ctx.stored).messageContextInfo?.messageSecret;
  if (!secret?.length) throw new DomainError('not_found', 'the poll voted on has no message secret', { pollWaMessageId: pollMsgId });
  if (!ctx.ownJid) throw new Error('the account is not logged in');
  const voterJid = ctx.ownJid;
  const pollCreatorJid = vote.poll.fromMe ? voterJid : (vote.poll.participant ?? vote.poll.chatJid);
  const iv = ctx.iv ?? randomBytes(12);
  const encPayload = encryptPollVote(vote.options, { pollCreatorJid, pollMsgId, pollEncKey: secret, voterJid }, iv);
  return {
    pollUpdateMessage: {
      pollCreationMessageKey: messageKeyFor(vote.poll),
      vote: { encPayload, encIv: iv },
      senderTimestampMs: ctx.now ?? Date.now(),
    },
  };
}

export interface PollVoteKeys {
  pollCreatorJid: string;
  pollMsgId: string;
  pollEncKey: Uint8Array;
  voterJid: string;
}

/** PollVoteMessage { repeated bytes selectedOptions = 1 }, each the SHA-256 of an option name, encrypted. */
export function encryptPollVote(options: string[], keys: PollVoteKeys, iv: Buffer): Buffer {
  const plain = Buffer.concat(options.map((o) => Buffer.concat([Buffer.from([0x0a, 32]), createHash('sha256').update(o).digest()])));
  const sign = Buffer.concat([Buffer.from(keys.pollMsgId), Buffer.from(keys.pollCreatorJid), Buffer.from(keys.voterJid), Buffer.from('Poll Vote'), Buffer.from([1])]);
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(keys.pollEncKey).digest();
  const key = createHmac('sha256', key0).update(sign).digest();
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${keys.pollMsgId}\u0000${keys.voterJid}`));
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

/**
 * sendMessage's options: the fixed id (a re-send after a crash reuses it, so WhatsApp keeps one message) and the quote.
 * Baileys builds a quote by copying the quoted content; without stored content there is nothing to copy, so the
 * message goes out unquoted (`quoteDropped`) rather than as a reply to an empty bubble.
 */
export function sendOptionsFor(
  message: OutboundMessage,
  decode: (bytes: Uint8Array) => proto.IMessage,
): { options: MiscMessageGenerationOptions; quoteDropped: boolean } {
  const options: MiscMessageGenerationOptions = { messageId: message.waMessageId, ...statusOptionsFor(message) };
  const quoted = message.quoted;
  if (!quoted) return { options, quoteDropped: false };
  if (!quoted.raw) return { options, quoteDropped: true };
  const quotedMessage: WAMessage = { key: messageKeyFor(quoted), message: decode(quoted.raw), ...(quoted.participant ? { participant: quoted.participant } : {}) };
  return { options: { ...options, quoted: quotedMessage }, quoteDropped: false };
}

/** A status post (to status@broadcast): WhatsApp sends it to each JID of `statusJidList`; a text status has a background. */
export function statusOptionsFor(message: OutboundMessage): Pick<MiscMessageGenerationOptions, 'statusJidList' | 'backgroundColor'> {
  const post = message.statusPost;
  if (!post) return {};
  return { statusJidList: post.audience, ...(post.backgroundColor ? { backgroundColor: post.backgroundColor } : {}) };
}
