/**
 * What a contact's phone sends a WhatsApp Web device, as WhatsApp writes it: texts, locations and contact cards with
 * the reply and mentions they carry (contextInfo; media is media-messages.ts'), the sealed vote of a poll
 * (`pollUpdateMessage`, the key derivation of Baileys' `decryptPollVote` run forwards), presence and chat state
 * stanzas, and the call offer. The Signal layer (1:1 or sender key) is contact-delivery.ts's; these are the contents.
 */
import { vcardFor, type Presence, type SimInboundMessage } from '@app/contracts';
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { Baileys, BinaryNode, nowSeconds } from './wa-kit';

/** A WAProto Message as Baileys' encodeWAMessage takes it. */
export type WaMessage = Parameters<Baileys['encodeWAMessage']>[0];

/** The outer stanza of what a contact sends: id, sender, chat (its own jid 1:1, or a group), stanza type, seconds. */
export interface ContactEnvelope {
  id: string;
  from: string;
  chatJid: string;
  /** `text`, `reaction`, `poll`, `media` (the `<message type>` WhatsApp uses) */
  type: string;
  t: number;
}

/** A message id as a phone draws one. */
export function newStanzaId(): string {
  return `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
}

/** The message a reply quotes, as the replying phone names it: its author, and its text when it has one. */
export interface QuotedMessage {
  waMessageId: string;
  /** who wrote it: the account (a message the device sent) or a contact */
  author: string;
  text: string | null;
}

/**
 * The contextInfo of a contact's message that replies or mentions (WhatsApp's own: `stanzaId` and `participant` name
 * the quoted message and its author, `quotedMessage` is a copy of its content; `mentionedJid` the mentioned users),
 * or null when it does neither.
 */
export function contextInfoOf(quoted: QuotedMessage | null, mentions: string[]): Record<string, unknown> | null {
  if (!quoted && mentions.length === 0) return null;
  return {
    ...(quoted
      ? { stanzaId: quoted.waMessageId, participant: quoted.author, ...(quoted.text !== null ? { quotedMessage: { conversation: quoted.text } } : {}) }
      : {}),
    ...(mentions.length ? { mentionedJid: mentions } : {}),
  };
}

/**
 * A contact's text, location or contact card as its phone writes it: a plain text is `conversation`, a reply or a
 * mention makes it an `extendedTextMessage` (where contextInfo lives); a location is `locationMessage`, a card
 * `contactMessage` with the vCard WhatsApp writes (`waid`). Null for media (media-messages.ts) and empty texts.
 */
export function contactContentOf(message: SimInboundMessage, quoted: QuotedMessage | null): WaMessage | null {
  const contextInfo = contextInfoOf(quoted, message.mentions);
  return CONTACT_CONTENT[message.type](message, contextInfo);
}

const mediaMessage = () => null;

/**
 * How a contact's phone writes each kind it sends, one entry per type (docs/messages.md, "adding a message type"): media
 * kinds are media-messages.ts's (null here), a vote is sealed by sealPollVote.
 */
const CONTACT_CONTENT: Record<SimInboundMessage['type'], (message: SimInboundMessage, contextInfo: Record<string, unknown> | null) => WaMessage | null> = {
  text: (message, contextInfo) => {
    if (!message.text) return null;
    return contextInfo ? { extendedTextMessage: { text: message.text, contextInfo } } : { conversation: message.text };
  },
  location: (message, contextInfo) => {
    if (!message.location) return null;
    const { latitude, longitude, name, address } = message.location;
    return {
      locationMessage: { degreesLatitude: latitude, degreesLongitude: longitude, ...(name ? { name } : {}), ...(address ? { address } : {}), ...(contextInfo ? { contextInfo } : {}) },
    };
  },
  contact: (message, contextInfo) =>
    message.contact ? { contactMessage: { displayName: message.contact.fullName, vcard: vcardFor(message.contact), ...(contextInfo ? { contextInfo } : {}) } } : null,
  image: mediaMessage,
  video: mediaMessage,
  audio: mediaMessage,
  voice: mediaMessage,
  document: mediaMessage,
  sticker: mediaMessage,
  pollVote: () => null,
};

/** The stanza type of a contact's text, location or card: a card is `media` (Baileys' getMediaType `vcard`), the rest `text`. */
export function stanzaTypeOf(content: WaMessage): 'text' | 'media' {
  return content.contactMessage ? 'media' : 'text';
}

/**
 * A vote as the voter's phone seals it: AES-256-GCM under HMAC(HMAC(0³², secret), pollId ‖ creator ‖ voter ‖ "Poll
 * Vote" ‖ 0x01), additional data `pollId \0 voter`, the options as SHA-256 of their names.
 */
export function sealPollVote(
  baileys: Baileys,
  input: { secret: Uint8Array; pollId: string; creatorJid: string; voterJid: string; options: string[] },
): { encPayload: Buffer; encIv: Buffer } {
  const sign = Buffer.concat([Buffer.from(input.pollId), Buffer.from(input.creatorJid), Buffer.from(input.voterJid), Buffer.from('Poll Vote'), Buffer.from([1])]);
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(input.secret).digest();
  const key = createHmac('sha256', key0).update(sign).digest();
  const encIv = randomBytes(12);
  const selectedOptions = input.options.map((name) => createHash('sha256').update(name).digest());
  const plain = baileys.proto.Message.PollVoteMessage.encode({ selectedOptions }).finish();
  const cipher = createCipheriv('aes-256-gcm', key, encIv);
  cipher.setAAD(Buffer.from(`${input.pollId}\u0000${input.voterJid}`));
  const encPayload = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return { encPayload, encIv };
}

/** `<presence from type>` for available / unavailable; `<chatstate from [participant]><composing|paused/>` otherwise. */
export function presenceStanza(event: { chatJid: string; jid: string; presence: Presence }): BinaryNode {
  const inGroup = event.chatJid !== event.jid;
  if (event.presence === 'available' || event.presence === 'unavailable') {
    return { tag: 'presence', attrs: { from: event.jid, type: event.presence } };
  }
  const state: BinaryNode =
    event.presence === 'paused' ? { tag: 'paused', attrs: {} } : { tag: 'composing', attrs: event.presence === 'recording' ? { media: 'audio' } : {} };
  return { tag: 'chatstate', attrs: { from: event.chatJid, ...(inGroup ? { participant: event.jid } : {}) }, content: [state] };
}

/** `<call from id t><offer call-id call-creator>[<video/>]<audio/></offer></call>`: a contact rings the device. */
export function callOffer(id: string, event: { callId: string; from: string; isVideo: boolean }): BinaryNode {
  const media: BinaryNode[] = [{ tag: 'audio', attrs: { enc: 'opus', rate: '16000' } }];
  if (event.isVideo) media.push({ tag: 'video', attrs: { enc: 'vp8', dec: 'vp8' } });
  return {
    tag: 'call',
    attrs: { from: event.from, id, t: nowSeconds() },
    content: [{ tag: 'offer', attrs: { 'call-id': event.callId, 'call-creator': event.from }, content: media }],
  };
}

/** The device's `<chatstate to><composing [media=audio]|paused/>` as the chat presence the network logs; null otherwise. */
export function deviceChatState(node: BinaryNode): { chatJid: string; presence: 'composing' | 'recording' | 'paused' } | null {
  if (node.tag !== 'chatstate' || !node.attrs.to) return null;
  const state = Array.isArray(node.content) ? (node.content[0] as BinaryNode | undefined) : undefined;
  if (state?.tag === 'composing') return { chatJid: node.attrs.to, presence: state.attrs.media === 'audio' ? 'recording' : 'composing' };
  if (state?.tag === 'paused') return { chatJid: node.attrs.to, presence: 'paused' };
  return null;
}

/**
 * The device's `<presence>`: `type=available|unavailable` (with the account's `name`) is the account's presence;
 * `type=subscribe to=<jid>` asks for a contact's. Null for anything else.
 */
export function devicePresenceRequest(node: BinaryNode): { kind: 'account'; presence: 'available' | 'unavailable' } | { kind: 'subscribe'; jid: string } | null {
  if (node.tag !== 'presence') return null;
  const { type, to } = node.attrs;
  if (type === 'available' || type === 'unavailable') return { kind: 'account', presence: type };
  if (type === 'subscribe' && to) return { kind: 'subscribe', jid: to.replace(/:\d+@/, '@') };
  return null;
}

/**
 * The key of a message a contact sent the device, as the contact's phone names it in a protocolMessage: its own
 * (`fromMe`), in the chat with the account (1:1) or in the group.
 */
function ownKeyOfContact(event: { waMessageId: string; chatJid: string }, accountJid: string) {
  return { id: event.waMessageId, remoteJid: event.chatJid.endsWith('@g.us') ? event.chatJid : accountJid, fromMe: true };
}

/** A contact's edit as WhatsApp carries it: protocolMessage MESSAGE_EDIT (14) inside `editedMessage`. */
export function contactEdit(event: { waMessageId: string; chatJid: string; text: string }, accountJid: string): WaMessage {
  const protocolMessage = { key: ownKeyOfContact(event, accountJid), type: 14, editedMessage: { conversation: event.text }, timestampMs: Date.now() };
  return { editedMessage: { message: { protocolMessage } } };
}

/** A contact's delete for everyone: protocolMessage REVOKE (0). */
export function contactRevoke(event: { waMessageId: string; chatJid: string }, accountJid: string): WaMessage {
  return { protocolMessage: { key: ownKeyOfContact(event, accountJid), type: 0 } };
}

/**
 * The `verified_name` node WhatsApp adds to a business's messages: its verified name certificate, whose details name
 * the business (Baileys reads `details.verifiedName` into the message's `verifiedBizName`). The emulator signs nothing.
 */
export function verifiedNameNode(baileys: Baileys, verifiedName: string): BinaryNode {
  const details = baileys.proto.VerifiedNameCertificate.Details.encode({ serial: 1, issuer: 'smb:wa', verifiedName }).finish();
  return { tag: 'verified_name', attrs: { v: '2' }, content: baileys.proto.VerifiedNameCertificate.encode({ details }).finish() };
}
