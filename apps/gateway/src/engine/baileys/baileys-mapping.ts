import type {
  BaileysEventMap,
  Contact,
  GroupMetadata,
  GroupParticipant,
  MessageUserReceiptUpdate,
  proto,
  WACallEvent,
  WAMessage,
  WAMessageKey,
  WAMessageUpdate,
} from '@whiskeysockets/baileys';
import { contactFromVcard } from '@app/contracts';
import { isMediaDirectPath, trustedMediaUrl } from '@app/media';
import type { AckStatus, GroupChanges, GroupNetwork, GroupNetworkParticipant, GroupParticipantAction, MediaRef, MessageType, PollContent, Presence } from '@app/contracts';
import type { AccountIdentity, CloseReason, EngineEvent, GroupInfo, InboundMedia, InboundMessage } from '../engine.interface';
import type { PollCrypto } from './baileys-runtime';

/** Baileys' DisconnectReason values, copied because the enum lives in the ESM-only module jest cannot load. */
export const DISCONNECT = {
  loggedOut: 401,
  forbidden: 403,
  /** not in Baileys' enum: a `<failure reason="405">` (this client's WhatsApp Web version is refused) */
  clientVersionRefused: 405,
  connectionLost: 408,
  timedOut: 408,
  multideviceMismatch: 411,
  connectionClosed: 428,
  connectionReplaced: 440,
  badSession: 500,
  unavailableService: 503,
  restartRequired: 515,
} as const;

/** Baileys closes with a Boom error; its status code says why. Anything else is a network error. */
export function statusCodeOf(error: unknown): number | null {
  const code = (error as { output?: { statusCode?: unknown } } | undefined)?.output?.statusCode;
  return typeof code === 'number' ? code : null;
}

/** The socket-level error (DNS, TCP, TLS) Baileys wraps in its close Boom as `data`, when the close came from one. */
export function transportErrorOf(error: unknown): { code: string | null; message: string } | null {
  const data = (error as { data?: unknown } | undefined)?.data as { code?: unknown; message?: unknown } | undefined;
  if (!data || typeof data.message !== 'string') return null;
  return { code: typeof data.code === 'string' ? data.code : null, message: data.message };
}

const TLS_CODE = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|EPROTO/;

/**
 * A close as a user can act on it: the transport error as Node words it (`getaddrinfo ENOTFOUND web.whatsapp.com`,
 * `TLS: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)`, `connect ECONNREFUSED …`), or the network's own
 * message. `statusCode` is null for a transport error: Baileys invents one (408, or 500 for most TLS errors).
 */
export function closeCauseOf(error: unknown): { statusCode: number | null; message: string; transport: boolean } {
  const transport = transportErrorOf(error);
  if (transport) {
    const code = transport.code && !transport.message.includes(transport.code) ? ` (${transport.code})` : '';
    const tls = transport.code && TLS_CODE.test(transport.code) ? 'TLS: ' : '';
    return { statusCode: null, message: `${tls}${transport.message}${code}`, transport: true };
  }
  return { statusCode: statusCodeOf(error), message: error instanceof Error ? error.message : error ? String(error) : 'connection closed', transport: false };
}

/**
 * What WhatsApp means by a close code (Baileys' DisconnectReason), as the table in docs/baileys-engine.md shows.
 * Only 401 says "this device is gone". 500 is what Baileys reports for a stream error without a code (`<ack/>`,
 * `<xml-not-well-formed/>`…): transient, never a reason to drop the pairing. Unknown codes are transient too: the
 * runner reconnects with capped backoff.
 */
export function closeReasonFor(statusCode: number | null): CloseReason {
  switch (statusCode) {
    case DISCONNECT.restartRequired:
      return 'restart_required';
    case DISCONNECT.loggedOut:
      return 'logged_out';
    case DISCONNECT.connectionReplaced:
      return 'replaced';
    case DISCONNECT.forbidden:
      return 'forbidden';
    case DISCONNECT.clientVersionRefused:
      return 'client_version_refused';
    default:
      return 'transient';
  }
}

const USER_SERVER = 's.whatsapp.net';
const LID_SERVER = 'lid';

/** `<user>[_<agent>][:<device>]@<server>` → `{user, server}`; null for anything that is not a JID. */
function splitJid(jid: string | null | undefined): { user: string; server: string } | null {
  if (!jid) return null;
  const at = jid.indexOf('@');
  if (at <= 0) return null;
  const user = jid.slice(0, at).split(':')[0].split('_')[0];
  const server = jid.slice(at + 1);
  return user ? { user, server } : null;
}

/** A phone-number JID without its device part (`4912345:3@s.whatsapp.net` → `4912345@s.whatsapp.net`), or null. */
export function toUserJid(jid: string | null | undefined): string | null {
  const parts = splitJid(jid);
  return parts && parts.server === USER_SERVER && /^\d+$/.test(parts.user) ? `${parts.user}@${USER_SERVER}` : null;
}

export function toLid(jid: string | null | undefined): string | null {
  const parts = splitJid(jid);
  return parts && parts.server === LID_SERVER && /^\d+$/.test(parts.user) ? `${parts.user}@${LID_SERVER}` : null;
}

/** Baileys 7 may name the account by its LID in `id` and by its number in `phoneNumber`; take whichever is a number. */
export function accountFrom(user: Contact | undefined): AccountIdentity | null {
  if (!user) return null;
  const jid = toUserJid(user.id) ?? toUserJid(user.phoneNumber);
  if (!jid) return null;
  return { jid, lid: toLid(user.lid) ?? toLid(user.id), phoneNumber: jid.slice(0, jid.indexOf('@')) };
}

/** Prefer the phone-number form of an address when WhatsApp sent the LID form with the number as its alternative. */
export function preferUserJid(jid: string | null | undefined, alt: string | null | undefined): string {
  if (toUserJid(jid)) return jid!;
  if (toUserJid(alt)) return alt!;
  return jid ?? alt ?? '';
}

/**
 * Wrappers around the real content, unwrapped before reading it: Baileys' normalizeMessageContent list (disappearing,
 * view-once, captioned document, an edit's `editedMessage`, `associatedChildMessage`, group status wrappers) plus
 * `groupMentionedMessage`.
 */
const WRAPPERS = [
  'ephemeralMessage',
  'viewOnceMessage',
  'documentWithCaptionMessage',
  'viewOnceMessageV2',
  'viewOnceMessageV2Extension',
  'editedMessage',
  'associatedChildMessage',
  'groupStatusMessage',
  'groupStatusMessageV2',
  'groupMentionedMessage',
] as const;

/** proto.Message.ProtocolMessage.Type, copied as numbers for the same reason as DISCONNECT. */
export const PROTOCOL_TYPE = { REVOKE: 0, MESSAGE_EDIT: 14 } as const;

/** Content keys that carry no message of their own (key distribution, protocol stanzas, other events). */
const NOT_A_MESSAGE = new Set(['protocolMessage', 'senderKeyDistributionMessage', 'messageContextInfo', 'reactionMessage', 'pollUpdateMessage']);

/** A protobuf int64 arrives as a number or a Long. */
type Int64 = number | { toNumber(): number } | null | undefined;

function toNumber(value: Int64): number | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'number' ? value : value.toNumber();
}

export function unwrapContent(content: proto.IMessage): proto.IMessage {
  let current = content;
  for (let depth = 0; depth < 5; depth += 1) {
    const wrapper = WRAPPERS.find((key) => current[key]?.message);
    if (!wrapper) break;
    const inner = current[wrapper]!.message!;
    // the poll's messageSecret may sit beside the wrapper; keep it with the content so stored polls stay decryptable
    current = !inner.messageContextInfo && current.messageContextInfo ? { ...inner, messageContextInfo: current.messageContextInfo } : inner;
  }
  return current;
}

export function epochMs(seconds: WAMessage['messageTimestamp']): number {
  const value = toNumber(seconds);
  return value === null ? Date.now() : value * 1000;
}

/** The one encoding of `raw` (Baileys' proto.Message bytes), injected because protobuf lives in the ESM module. */
export type EncodeMessage = (content: proto.IMessage) => Uint8Array;

type MediaMessage =
  | proto.Message.IImageMessage
  | proto.Message.IVideoMessage
  | proto.Message.IAudioMessage
  | proto.Message.IDocumentMessage
  | proto.Message.IStickerMessage;

function mediaFrom(
  media: MediaMessage,
  mediaType: Extract<MediaRef, { engine: 'baileys' }>['mediaType'],
  details: { filename?: string | null; caption?: string | null; defaultMimetype: string },
): InboundMedia | null {
  // without both, the bytes can never be fetched: the message is kept, its media is not offered. The sender writes the
  // reference (issue 37): a direct path that is not a path could pick the download's host, so it is not offered either,
  // and a `url` off WhatsApp's media CDN is not kept (the direct path on WhatsApp's host serves the media)
  if (!media.directPath || !media.mediaKey?.length || !isMediaDirectPath(media.directPath)) return null;
  return {
    mimetype: media.mimetype || details.defaultMimetype,
    size: toNumber(media.fileLength),
    filename: details.filename ?? null,
    caption: details.caption ?? null,
    ref: {
      engine: 'baileys',
      mediaType,
      directPath: media.directPath,
      mediaKey: Buffer.from(media.mediaKey).toString('base64'),
      url: trustedMediaUrl(media.url),
    },
  };
}

function pollFrom(poll: proto.Message.IPollCreationMessage): PollContent {
  const options = (poll.options ?? []).map((o) => o.optionName ?? '');
  // 0 means "any number" on WhatsApp
  return { name: poll.name ?? '', options, selectableCount: poll.selectableOptionsCount || options.length };
}

export function pollCreationOf(content: proto.IMessage): proto.Message.IPollCreationMessage | null {
  return content.pollCreationMessage ?? content.pollCreationMessageV2 ?? content.pollCreationMessageV3 ?? content.pollCreationMessageV5 ?? null;
}

type ContentFields = Pick<InboundMessage, 'type' | 'text' | 'media' | 'location' | 'contact' | 'poll'>;

const EMPTY: Omit<ContentFields, 'type'> = { text: null, media: null, location: null, contact: null, poll: null };

type ContentReader = (c: proto.IMessage) => ContentFields | null;

const none: ContentReader = () => null;

/**
 * How each message type is read off a proto.Message, one entry per type (docs/messages.md, "adding a message type"),
 * tried in this order; the first that knows the content says what it is.
 */
const CONTENT_READERS: Record<MessageType, ContentReader> = {
  text: (c) => {
    if (c.conversation !== null && c.conversation !== undefined) return { ...EMPTY, type: 'text', text: c.conversation };
    return c.extendedTextMessage ? { ...EMPTY, type: 'text', text: c.extendedTextMessage.text ?? '' } : null;
  },
  image: (c) => (c.imageMessage ? { ...EMPTY, type: 'image', media: mediaFrom(c.imageMessage, 'image', { caption: c.imageMessage.caption, defaultMimetype: 'image/jpeg' }) } : null),
  video: (c) => {
    const video = c.videoMessage ?? c.ptvMessage;
    return video ? { ...EMPTY, type: 'video', media: mediaFrom(video, 'video', { caption: video.caption, defaultMimetype: 'video/mp4' }) } : null;
  },
  audio: (c) => (c.audioMessage ? { ...EMPTY, type: 'audio', media: mediaFrom(c.audioMessage, 'audio', { defaultMimetype: 'audio/ogg; codecs=opus' }) } : null),
  document: (c) => {
    const doc = c.documentMessage;
    return doc ? { ...EMPTY, type: 'document', media: mediaFrom(doc, 'document', { filename: doc.fileName, caption: doc.caption, defaultMimetype: 'application/octet-stream' }) } : null;
  },
  sticker: (c) => (c.stickerMessage ? { ...EMPTY, type: 'sticker', media: mediaFrom(c.stickerMessage, 'sticker', { defaultMimetype: 'image/webp' }) } : null),
  location: (c) => {
    const place = c.locationMessage ?? c.liveLocationMessage;
    if (!place) return null;
    const named = c.locationMessage ?? {};
    return { ...EMPTY, type: 'location', location: { latitude: place.degreesLatitude ?? 0, longitude: place.degreesLongitude ?? 0, name: named.name ?? null, address: named.address ?? null } };
  },
  contact: (c) => {
    if (c.contactMessage) return { ...EMPTY, type: 'contact', contact: contactFromVcard(c.contactMessage.vcard, c.contactMessage.displayName) };
    const first = c.contactsArrayMessage?.contacts?.[0];
    return first ? { ...EMPTY, type: 'contact', contact: contactFromVcard(first.vcard, first.displayName) } : null;
  },
  poll: (c) => {
    const poll = pollCreationOf(c);
    return poll ? { ...EMPTY, type: 'poll', poll: pollFrom(poll) } : null;
  },
  // a voice note's audioMessage reads as `audio` (above); reactions and votes arrive as events of their own
  voice: none,
  reaction: none,
  pollVote: none,
  // kinds we do not model (buttons, events, payments…)
  unknown: () => ({ ...EMPTY, type: 'unknown' }),
};

/** Reads what the log shows of a content; `unknown` for kinds we do not model (buttons, events, payments…). */
export function fieldsOf(c: proto.IMessage): ContentFields {
  for (const read of Object.values(CONTENT_READERS)) {
    const fields = read(c);
    if (fields) return fields;
  }
  return { ...EMPTY, type: 'unknown' };
}

/** The contextInfo of whichever content this is: where replies (stanzaId) and mentions live. */
function contextInfoOf(content: proto.IMessage): proto.IContextInfo | null {
  for (const [name, value] of Object.entries(content)) {
    if (name === 'messageContextInfo' || !value || typeof value !== 'object') continue;
    const info = (value as { contextInfo?: proto.IContextInfo | null }).contextInfo;
    if (info) return info;
  }
  return null;
}

const STATUS_BROADCAST = 'status@broadcast';

/** Chats whose posts are not conversation: status updates and channel (newsletter) posts. Not `message.received`. */
export function isNotAChat(jid: string): boolean {
  return jid === STATUS_BROADCAST || jid.endsWith('@newsletter');
}

/** A broadcast list (`<id>@broadcast`): each recipient gets the message in the 1:1 chat with its sender. */
function isBroadcastList(jid: string): boolean {
  return jid.endsWith('@broadcast') && jid !== STATUS_BROADCAST;
}

/**
 * A user-visible inbound message, or null for what is not one (status broadcasts and newsletter posts, protocol and
 * key-distribution stanzas, reactions and poll votes, which are other events).
 */
export function inboundMessageFrom(msg: WAMessage, ownJid: string | null, encode: EncodeMessage): InboundMessage | null {
  const key = msg.key;
  if (!msg.message || !key?.remoteJid || isNotAChat(key.remoteJid)) return null;
  const content = unwrapContent(msg.message);
  if (Object.keys(content).every((name) => NOT_A_MESSAGE.has(name))) return null;
  const fromMe = Boolean(key.fromMe);
  // Baileys names a broadcast-list message's sender as participant and its other form as remoteJidAlt; the message
  // shows in the 1:1 chat with the sender (a list we sent to from the phone stays the list's own chat)
  const listSender = isBroadcastList(key.remoteJid) && key.participant ? preferUserJid(key.participant, key.participantAlt ?? key.remoteJidAlt) : null;
  const chatJid = listSender && !fromMe ? listSender : preferUserJid(key.remoteJid, key.remoteJidAlt);
  const sender = listSender ?? (key.participant ? preferUserJid(key.participant, key.participantAlt) : chatJid);
  const context = contextInfoOf(content);
  return {
    id: key.id ?? '',
    from: fromMe && ownJid ? ownJid : sender,
    chatJid,
    timestamp: epochMs(msg.messageTimestamp),
    fromMe,
    ...fieldsOf(content),
    quotedWaMessageId: context?.stanzaId || null,
    mentions: (context?.mentionedJid ?? []).map((jid) => toUserJid(jid) ?? jid),
    raw: encode(content),
    pushName: fromMe ? undefined : msg.pushName || undefined,
    verifiedName: fromMe ? undefined : msg.verifiedBizName || undefined,
  };
}

/** The text an edit gives a message: its text, or the caption of its media. */
function editedTextOf(content: proto.IMessage): string | null {
  const c = unwrapContent(content);
  if (typeof c.conversation === 'string') return c.conversation;
  const text = c.extendedTextMessage?.text ?? c.imageMessage?.caption ?? c.videoMessage?.caption ?? c.documentMessage?.caption;
  return typeof text === 'string' ? text : null;
}

/**
 * An edit (protocolMessage MESSAGE_EDIT, as WhatsApp sends it: inside `editedMessage`) or a delete for everyone
 * (REVOKE) of an earlier message, or null. Baileys also re-emits both as messages.update; only this upsert form is
 * read, so each reaches the log once.
 */
export function protocolEventFrom(msg: WAMessage, ownJid: string | null): EngineEvent | null {
  const key = msg.key;
  if (!msg.message || !key?.remoteJid || isNotAChat(key.remoteJid)) return null;
  const protocol = unwrapContent(msg.message).protocolMessage;
  const target = protocol?.key?.id;
  if (!protocol || !target) return null;
  const chatJid = chatOf(key);
  const by = authorOf(key, ownJid);
  if (protocol.type === PROTOCOL_TYPE.REVOKE) return { type: 'revoke', waMessageId: target, chatJid, by };
  if (protocol.type === PROTOCOL_TYPE.MESSAGE_EDIT && protocol.editedMessage) {
    const text = editedTextOf(protocol.editedMessage);
    return text === null ? null : { type: 'edit', waMessageId: target, chatJid, from: by, text };
  }
  return null;
}

/** The author of a message key as the log names it: us, the group participant, or the chat. */
export function authorOf(key: WAMessageKey, ownJid: string | null): string {
  if (key.fromMe && ownJid) return ownJid;
  return key.participant ? preferUserJid(key.participant, key.participantAlt) : preferUserJid(key.remoteJid, key.remoteJidAlt);
}

export function chatOf(key: WAMessageKey): string {
  return preferUserJid(key.remoteJid, key.remoteJidAlt);
}

// ------------------------------------------------------------------------------------------------
// Everything else the network reports: receipts, reactions, poll votes, presence, calls, group changes

type ReceiptEvent = Extract<EngineEvent, { type: 'receipt' }>;

/** proto.WebMessageInfo.Status, copied as numbers for the same reason as DISCONNECT. */
export const WA_STATUS = { ERROR: 0, PENDING: 1, SERVER_ACK: 2, DELIVERY_ACK: 3, READ: 4, PLAYED: 5 } as const;

const STATUS_ACK: Partial<Record<number, AckStatus>> = {
  [WA_STATUS.DELIVERY_ACK]: 'delivered',
  [WA_STATUS.READ]: 'read',
  [WA_STATUS.PLAYED]: 'played',
};

/** messages.update with a status: the recipient's phone (1:1 chats) acked a message we sent. */
export function receiptFromUpdate({ key, update }: WAMessageUpdate): ReceiptEvent | null {
  if (!key.fromMe || !key.id || !key.remoteJid || typeof update.status !== 'number') return null;
  const status = STATUS_ACK[update.status];
  return status ? { type: 'receipt', waMessageId: key.id, chatJid: chatOf(key), status } : null;
}

/**
 * Receipts Baileys' event buffer folded into the echo of our own message: a receipt handled while that echo was still
 * buffered (Baileys buffers from login until its initial sync ends, and flushes after each stanza) updates the
 * buffered message (its `userReceipt` in a group, its `status` 1:1) and is never emitted on its own (issue 19 item 12).
 */
export function receiptsFoldedInto(msg: Pick<WAMessage, 'key' | 'userReceipt' | 'status'>): ReceiptEvent[] {
  const key = msg.key;
  if (!key?.fromMe) return [];
  const members = (msg.userReceipt ?? []).flatMap((receipt) => receiptsFromUserReceipt({ key, receipt }));
  const own = typeof msg.status === 'number' ? receiptFromUpdate({ key, update: { status: msg.status } }) : null;
  return own ? [...members, own] : members;
}

/**
 * message-receipt.update: one member's receipts (groups), with the member (`userJid`): one event per step it reports,
 * in order. Baileys' event buffer folds a member's receipts that arrive together into one entry (a delivery and a read
 * in one `userReceipt`), so the furthest step alone would lose the member's earlier ones (issue 19 item 12).
 */
export function receiptsFromUserReceipt({ key, receipt }: MessageUserReceiptUpdate): ReceiptEvent[] {
  if (!key.fromMe || !key.id || !key.remoteJid) return [];
  const steps: Array<[AckStatus, unknown]> = [
    ['delivered', receipt.receiptTimestamp],
    ['read', receipt.readTimestamp],
    ['played', receipt.playedTimestamp],
  ];
  const participant = receipt.userJid ? (toUserJid(receipt.userJid) ?? toLid(receipt.userJid) ?? receipt.userJid) : null;
  const waMessageId = key.id;
  const chatJid = chatOf(key);
  return steps.filter(([, at]) => Boolean(at)).map(([status]) => ({ type: 'receipt', waMessageId, chatJid, status, participant }));
}

/**
 * messages.reaction: `key` is the message reacted to, `reaction.key` the reaction's own stanza (who reacted, in which
 * chat; Baileys keeps its LID alternatives there).
 */
export function reactionFrom({ key, reaction }: BaileysEventMap['messages.reaction'][number], ownJid: string | null): EngineEvent | null {
  const by = reaction.key;
  if (!key.id || !by?.remoteJid) return null;
  const fromMe = Boolean(by.fromMe);
  return { type: 'reaction', waMessageId: key.id, chatJid: chatOf(by), from: authorOf(by, ownJid), emoji: reaction.text ?? '', fromMe };
}

/**
 * Reactions Baileys' event buffer folded into a buffered message: a reaction processed while the message it reacts to
 * was still in the buffer (its own send's echo is flushed 100 ms after it, so our reaction sent right after the text
 * lands there) updates that message's `reactions` and is never emitted as messages.reaction (issue 38 item 4).
 */
export function reactionsFoldedInto(msg: Pick<WAMessage, 'key' | 'reactions'>, ownJid: string | null): EngineEvent[] {
  return (msg.reactions ?? []).flatMap((reaction) => reactionFrom({ key: msg.key, reaction }, ownJid) ?? []);
}

/**
 * A decrypted vote → the option names this voter selected. Baileys' aggregate function hashes the creation message's
 * options and matches them; hashes it cannot match (options of another poll) are left out, not named "Unknown".
 */
export function pollVoteFrom(
  input: { creation: proto.IMessage; pollKey: WAMessageKey; chatJid: string; voteKey: WAMessageKey; vote: proto.Message.IPollVoteMessage },
  aggregate: PollCrypto['getAggregateVotesInPollMessage'],
  ownJid: string | null,
): EngineEvent | null {
  const poll = pollCreationOf(input.creation);
  if (!poll || !input.pollKey.id) return null;
  const names = new Set((poll.options ?? []).map((o) => o.optionName ?? ''));
  const tally = aggregate({ message: input.creation, pollUpdates: [{ pollUpdateMessageKey: input.voteKey, vote: input.vote }] }, ownJid ?? undefined);
  const selectedOptions = tally.filter((option) => option.voters.length > 0 && names.has(option.name)).map((option) => option.name);
  return { type: 'poll-vote', pollWaMessageId: input.pollKey.id, chatJid: input.chatJid, voter: authorOf(input.voteKey, ownJid), selectedOptions };
}

const PRESENCES: ReadonlySet<string> = new Set<Presence>(['available', 'unavailable', 'composing', 'recording', 'paused']);

export function presencesFrom({ id, presences }: BaileysEventMap['presence.update']): EngineEvent[] {
  const chatJid = toUserJid(id) ?? id;
  return Object.entries(presences)
    .filter(([, data]) => PRESENCES.has(data.lastKnownPresence))
    .map(([jid, data]) => ({ type: 'presence', chatJid, jid: toUserJid(jid) ?? jid, presence: data.lastKnownPresence as Presence }));
}

/** Only the offer is news; ringing, accept, reject and terminate follow the same call. */
export function callFrom(call: WACallEvent): EngineEvent | null {
  if (call.status !== 'offer') return null;
  return { type: 'call', callId: call.id, from: preferUserJid(call.from, call.callerPn), isVideo: Boolean(call.isVideo), isGroup: Boolean(call.isGroup) };
}

/**
 * groups.update → the fields that changed. An entry that is a whole group (Baileys' refresh of every group it
 * participates in) also carries the group's network form, which replaces the stored one.
 */
export function groupUpdateFrom(update: Partial<GroupMetadata>): EngineEvent | null {
  if (!update.id) return null;
  const changes: GroupChanges = {};
  if (typeof update.subject === 'string') changes.subject = update.subject;
  if (typeof update.desc === 'string') changes.description = update.desc;
  if (typeof update.announce === 'boolean') changes.isAnnounce = update.announce;
  if (typeof update.restrict === 'boolean') changes.isLocked = update.restrict;
  const network = isWholeGroup(update) ? groupNetworkFrom(update) : null;
  if (!Object.keys(changes).length && !network) return null;
  const actor = update.author || update.authorPn ? preferUserJid(update.author, update.authorPn) : null;
  return { type: 'group-update', groupJid: update.id, changes, ...(network ? { network } : {}), ...(actor ? { actor } : {}) };
}

const PARTICIPANT_ACTIONS: ReadonlySet<string> = new Set<GroupParticipantAction>(['add', 'remove', 'promote', 'demote']);

/** A member as the network named it in the group: the fields of Baileys' GroupParticipant a send's answer carries. */
export function networkParticipantFrom(p: GroupParticipant): GroupNetworkParticipant {
  return {
    id: p.id,
    ...(p.phoneNumber ? { phoneNumber: p.phoneNumber } : {}),
    ...(p.lid ? { lid: p.lid } : {}),
    ...(p.admin !== undefined ? { admin: p.admin } : {}),
  };
}

/** The addressing mode the network named (a string enum in Baileys' types; the values are 'lid' and 'pn'), if any. */
function addressingModeOf(meta: Partial<Pick<GroupMetadata, 'addressingMode'>>): 'lid' | 'pn' | undefined {
  const mode: string | undefined = meta.addressingMode;
  return mode === 'lid' || mode === 'pn' ? mode : undefined;
}

/** The group as the network addresses it (Baileys' `addressingMode` and participant ids), as given: never inferred. */
export function groupNetworkFrom(meta: Pick<GroupMetadata, 'addressingMode' | 'participants'>): GroupNetwork {
  const mode = addressingModeOf(meta);
  return {
    ...(mode ? { addressingMode: mode } : {}),
    participants: (meta.participants ?? []).map(networkParticipantFrom),
  };
}

/**
 * `modify` (a member changed number) is not one of our actions. Members by number when known; `network` keeps the
 * ids the group is addressed by.
 */
export function groupParticipantsFrom(update: BaileysEventMap['group-participants.update']): EngineEvent | null {
  if (!PARTICIPANT_ACTIONS.has(update.action)) return null;
  return {
    type: 'group-participants',
    groupJid: update.id,
    action: update.action as GroupParticipantAction,
    participants: update.participants.map((p) => preferUserJid(p.id, p.phoneNumber)),
    network: update.participants.map(networkParticipantFrom),
    ...(update.author || update.authorPn ? { actor: preferUserJid(update.author, update.authorPn) } : {}),
  };
}

/** Members by number when known (what the API shows); `network` the group as a send must address it. */
export function groupInfoFrom(meta: GroupMetadata, ownJid: string | null): GroupInfo {
  return {
    groupJid: meta.id,
    subject: meta.subject ?? '',
    description: meta.desc ?? '',
    ownerJid: preferUserJid(meta.owner, meta.ownerPn) || ownJid || '',
    participants: (meta.participants ?? []).map((p) => preferUserJid(p.id, p.phoneNumber)),
    isAnnounce: Boolean(meta.announce),
    isLocked: Boolean(meta.restrict),
    network: groupNetworkFrom(meta),
    ...groupAdminsFrom(meta),
  };
}

/** The members who are admins and super admins, in the form the member list uses (the number when known). */
export function groupAdminsFrom(meta: Pick<GroupMetadata, 'participants'>): { admins: string[]; superAdmins: string[] } {
  const participants = meta.participants ?? [];
  const jidOf = (p: GroupParticipant) => preferUserJid(p.id, p.phoneNumber);
  return {
    admins: participants.filter((p) => p.admin === 'admin' || p.admin === 'superadmin' || p.isAdmin || p.isSuperAdmin).map(jidOf),
    superAdmins: participants.filter((p) => p.admin === 'superadmin' || p.isSuperAdmin).map(jidOf),
  };
}

/**
 * A groups.update entry that is a whole group with its addressing named: Baileys' refresh of every group it
 * participates in (on a `dirty` notification) emits extractGroupMetadata's answers there, the same as groupMetadata()
 * gives. Its refresh of communities emits there too, often with no addressing mode: that is not taken as a whole group.
 */
export function isWholeGroup(update: Partial<GroupMetadata>): update is GroupMetadata {
  return Boolean(update.id) && Array.isArray(update.participants) && addressingModeOf(update) !== undefined;
}

/**
 * Our stored group → Baileys' GroupMetadata for a group send: the addressing mode and the member ids exactly as the
 * network gave them (a LID-addressed group is answered `lid` with its LIDs, even when every number is known). Without
 * a stored network form there is no answer (undefined): guessing the mode from the numbers would send a LID group's
 * message with `addressing_mode=pn` and our phone-number identity, so the caller asks the network instead.
 */
export function groupMetadataFrom(group: GroupInfo): GroupMetadata | undefined {
  const network = group.network;
  if (!network) return undefined;
  return {
    id: group.groupJid,
    subject: group.subject,
    desc: group.description,
    owner: group.ownerJid || undefined,
    announce: group.isAnnounce,
    restrict: group.isLocked,
    participants: network.participants.map((p): GroupParticipant => ({ ...p })),
    ...(network.addressingMode ? { addressingMode: network.addressingMode as GroupMetadata['addressingMode'] } : {}),
  };
}
