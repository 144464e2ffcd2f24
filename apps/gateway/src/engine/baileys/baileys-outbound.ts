import type { AnyMessageContent, MiscMessageGenerationOptions, proto, WAMessage, WAMessageKey } from '@whiskeysockets/baileys';
import type { ContactContent, MessageKeyRef, OutboundContent, OutboundMessage } from '@app/contracts';

/**
 * What we send → what Baileys' sendMessage takes. Pure: the engine hands the result to the socket, specs assert it.
 */

export function messageKeyFor(ref: MessageKeyRef): WAMessageKey {
  return { remoteJid: ref.chatJid, id: ref.waMessageId, fromMe: ref.fromMe, ...(ref.participant ? { participant: ref.participant } : {}) };
}

/**
 * WhatsApp plays a voice note only from Ogg/Opus; anything else goes as an audio file. Ogg on WhatsApp is always Opus,
 * and iOS refuses a voice note whose mimetype does not say so.
 */
export function isVoiceNote(mimetype: string): boolean {
  return /^audio\/ogg\b/i.test(mimetype.trim());
}

const VOICE_MIMETYPE = 'audio/ogg; codecs=opus';

/** vCard 3.0 text values escape backslash, comma, semicolon and newlines. */
function vcardText(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/([,;])/g, '\\$1').replace(/\r?\n/g, '\\n');
}

/** The vCard WhatsApp itself sends: `waid` makes the card open the chat with that number. */
export function vcardFor(contact: ContactContent): string {
  const digits = contact.phoneNumber.replace(/\D/g, '');
  return [
    'BEGIN:VCARD',
    'VERSION:3.0',
    `FN:${vcardText(contact.fullName)}`,
    `TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`,
    'END:VCARD',
  ].join('\n');
}

export function messageContentFor(content: OutboundContent, mentions: string[]): AnyMessageContent {
  // only text, image, video and poll carry mentions in Baileys' content types
  const mentioned = mentions.length ? { mentions } : {};
  switch (content.type) {
    case 'text':
      return { text: content.text, ...mentioned };
    case 'image':
      return { image: content.media.data, mimetype: content.media.mimetype, ...(content.caption ? { caption: content.caption } : {}), ...mentioned };
    case 'video':
      return { video: content.media.data, mimetype: content.media.mimetype, ...(content.caption ? { caption: content.caption } : {}), ...mentioned };
    case 'document':
      return {
        document: content.media.data,
        mimetype: content.media.mimetype,
        ...(content.media.filename ? { fileName: content.media.filename } : {}),
        ...(content.caption ? { caption: content.caption } : {}),
      };
    case 'audio': {
      const ptt = isVoiceNote(content.media.mimetype);
      return { audio: content.media.data, mimetype: ptt ? VOICE_MIMETYPE : content.media.mimetype, ptt };
    }
    case 'location': {
      const { latitude, longitude, name, address } = content.location;
      return { location: { degreesLatitude: latitude, degreesLongitude: longitude, ...(name ? { name } : {}), ...(address ? { address } : {}) } };
    }
    case 'contact':
      return { contacts: { displayName: content.contact.fullName, contacts: [{ displayName: content.contact.fullName, vcard: vcardFor(content.contact) }] } };
    case 'reaction':
      return { react: { text: content.emoji, key: messageKeyFor(content.target) } };
    case 'poll':
      return { poll: { name: content.poll.name, values: content.poll.options, selectableCount: content.poll.selectableCount }, ...mentioned };
  }
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
