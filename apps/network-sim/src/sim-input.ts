import {
  ACK_STATUSES,
  AckStatus,
  CHAT_JID_PATTERN,
  ContactContent,
  DomainError,
  GROUP_PARTICIPANT_ACTIONS,
  GroupChanges,
  GroupParticipantAction,
  isCaptionedMediaType,
  LinkPreview,
  LocationContent,
  MediaMessageType,
  OUTBOUND_MESSAGE_TYPES,
  PollContent,
  Presence,
  PRESENCES,
  SimInboundMessage,
  SimSentMessage,
  USER_JID_PATTERN,
  STATUS_BROADCAST_JID,
  StatusPostOptions,
} from '@app/contracts';

/**
 * Validation of what the control API and the device protocol receive. Pure: every parser returns a typed value or
 * throws a `validation_error` whose details name the offending field (the dotted path inside the body).
 */

export const GROUP_JID_PATTERN = /^(\d+-\d+|\d{5,})@g\.us$/;
const LID_PATTERN = /^\d{5,20}@lid$/;
/** A status's background as a device sends it: `#rrggbb`. */
export const BACKGROUND_COLOR_PATTERN = /^#[0-9a-fA-F]{6}$/;
/** waMessageIds are chosen by devices (the gateway); anything printable and short is one. */
const MESSAGE_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;
const BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/;
export const MAX_TEXT_LENGTH = 65536;
export const MAX_SUBJECT_LENGTH = 100;
export const MAX_MEDIA_BYTES = 16 * 1024 * 1024;
const DEFAULT_GENERATED_MEDIA_BYTES = 1024;

export const INBOUND_MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contact'] as const satisfies readonly SimInboundMessage['type'][];
export type InboundMessageType = (typeof INBOUND_MESSAGE_TYPES)[number];
type InboundMediaType = Extract<InboundMessageType, 'image' | 'video' | 'audio' | 'document' | 'sticker'>;

/** What a generated medium is when the caller names no mimetype. */
const DEFAULT_MIMETYPES: Record<InboundMediaType, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/ogg; codecs=opus',
  document: 'application/pdf',
  sticker: 'image/webp',
};
/** WhatsApp shows no caption on these. */
const CAPTIONLESS = new Set(['audio', 'sticker']);

type Body = Record<string, unknown>;

export function validation(field: string, message: string): DomainError {
  return new DomainError('validation_error', `${field} ${message}`, { [field]: message });
}

function objectAt(field: string, value: unknown): Body {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw validation(field, 'must be an object');
  return value as Body;
}

export function requireText(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw validation(field, 'must be a non-empty string');
  if (value.length > max) throw validation(field, `must be at most ${max} characters`);
  return value;
}

function optionalText(field: string, value: unknown, max: number): string | null {
  return value === undefined || value === null ? null : requireText(field, value, max);
}

function optionalBoolean(field: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw validation(field, 'must be a boolean');
  return value;
}

function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) throw validation(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

export function messageId(field: string, value: unknown): string {
  if (typeof value !== 'string' || !MESSAGE_ID_PATTERN.test(value)) throw validation(field, 'must be a message id ([A-Za-z0-9_.:-], 1-128 characters)');
  return value;
}

/** Digits of a phone number written as digits, `+digits`, or with spaces/dashes. */
export function normalizePhoneNumber(value: unknown, field = 'phoneNumber'): string {
  if (typeof value !== 'string') throw validation(field, 'must be a string of digits');
  const digits = value.replace(/[\s\-()]/g, '').replace(/^\+/, '');
  if (!/^\d{5,20}$/.test(digits)) throw validation(field, 'must be 5-20 digits');
  return digits;
}

/** A contact written as a jid (`<digits>@s.whatsapp.net`, `<digits>@lid`) or as a phone number. */
export function contactJid(field: string, value: unknown): string {
  if (typeof value === 'string' && (USER_JID_PATTERN.test(value) || LID_PATTERN.test(value))) return value;
  try {
    return `${normalizePhoneNumber(value, field)}@s.whatsapp.net`;
  } catch {
    throw validation(field, 'must be a jid <digits>@s.whatsapp.net or a phone number');
  }
}

function userJids(field: string, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw validation(field, 'must be an array of jids');
  const invalid = value.filter((p) => typeof p !== 'string' || !(USER_JID_PATTERN.test(p) || LID_PATTERN.test(p)));
  if (invalid.length > 0) {
    throw new DomainError('validation_error', `${field} must be jids of the form <digits>@s.whatsapp.net`, { [field]: invalid });
  }
  return [...new Set(value as string[])];
}

function base64Bytes(field: string, value: unknown): Buffer {
  if (typeof value !== 'string') throw validation(field, 'must be base64');
  const compact = value.replace(/\s+/g, '');
  if (compact === '' || !BASE64_PATTERN.test(compact)) throw validation(field, 'must be non-empty base64');
  const data = Buffer.from(compact, 'base64');
  if (data.length > MAX_MEDIA_BYTES) throw validation(field, `must be at most ${MAX_MEDIA_BYTES} bytes`);
  return data;
}

function mimetype(field: string, value: unknown): string {
  if (typeof value !== 'string' || !/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/.test(value)) throw validation(field, 'must be a mimetype like image/jpeg');
  return value;
}

function location(field: string, value: unknown): LocationContent {
  const l = objectAt(field, value);
  const lat = l.latitude;
  const lng = l.longitude;
  if (typeof lat !== 'number' || !Number.isFinite(lat) || lat < -90 || lat > 90) throw validation(`${field}.latitude`, 'must be a number in [-90, 90]');
  if (typeof lng !== 'number' || !Number.isFinite(lng) || lng < -180 || lng > 180) throw validation(`${field}.longitude`, 'must be a number in [-180, 180]');
  return { latitude: lat, longitude: lng, name: optionalText(`${field}.name`, l.name, 1000), address: optionalText(`${field}.address`, l.address, 1000) };
}

function contact(field: string, value: unknown): ContactContent {
  const c = objectAt(field, value);
  return { fullName: requireText(`${field}.fullName`, c.fullName, 1000), phoneNumber: normalizePhoneNumber(c.phoneNumber, `${field}.phoneNumber`) };
}

function poll(field: string, value: unknown): PollContent {
  const p = objectAt(field, value);
  const name = requireText(`${field}.name`, p.name, 255);
  const options = p.options;
  if (!Array.isArray(options) || options.length < 2 || options.length > 12) throw validation(`${field}.options`, 'must be 2-12 option names');
  options.forEach((o, i) => requireText(`${field}.options[${i}]`, o, 100));
  if (new Set(options).size !== options.length) throw validation(`${field}.options`, 'must be distinct');
  const selectableCount = p.selectableCount ?? 1;
  if (!Number.isInteger(selectableCount) || (selectableCount as number) < 1 || (selectableCount as number) > options.length) {
    throw validation(`${field}.selectableCount`, `must be an integer in [1, ${options.length}]`);
  }
  return { name, options: options as string[], selectableCount: selectableCount as number };
}

/** Media bytes and how the network describes them. */
export interface MediaInput {
  data: Buffer;
  mimetype: string;
  filename: string | null;
  caption: string | null;
}

// ---- control API -----------------------------------------------------------------------------

/** An inbound message before the network gives it an id and keeps its media. */
export type InboundInput = Omit<SimInboundMessage, 'id' | 'timestamp' | 'media'> & { media: MediaInput | null };

/**
 * `POST /sim/sessions/{id}/inbound`. Media is `{base64, mimetype, filename?}`, or `{mimetype?, size?}` for generated
 * bytes (absent entirely: generated bytes of the type's usual mimetype), so tests need no fixtures.
 */
export function parseInbound(body: Body): InboundInput {
  const from = contactJid('from', body.from);
  const type = body.type === undefined ? 'text' : oneOf('type', body.type, INBOUND_MESSAGE_TYPES);
  let chatJid = from;
  if (body.chatJid !== undefined) {
    if (typeof body.chatJid !== 'string' || !(GROUP_JID_PATTERN.test(body.chatJid) || body.chatJid === from)) {
      throw validation('chatJid', 'must be a group jid …@g.us (or the sender)');
    }
    chatJid = body.chatJid;
  }
  const input: InboundInput = {
    from,
    chatJid,
    type,
    text: null,
    media: null,
    location: null,
    contact: null,
    quotedWaMessageId: body.quotedWaMessageId === undefined || body.quotedWaMessageId === null ? null : messageId('quotedWaMessageId', body.quotedWaMessageId),
    mentions: userJids('mentions', body.mentions),
  };
  INBOUND_CONTENT[type](body, input);
  return input;
}

const inboundMediaOf =
  (type: InboundMediaType) =>
  (body: Body, input: InboundInput): void => {
    if (CAPTIONLESS.has(type) && body.text !== undefined) throw validation('text', `a ${type} has no caption`);
    const caption = optionalText('text', body.text, MAX_TEXT_LENGTH);
    input.text = caption;
    input.media = inboundMedia(type, body.media, caption);
  };

/** What each type a contact can send reads of the body (docs/messages.md, "adding a message type"). */
const INBOUND_CONTENT: Record<InboundMessageType, (body: Body, input: InboundInput) => void> = {
  text: (body, input) => {
    input.text = requireText('text', body.text, MAX_TEXT_LENGTH);
  },
  location: (body, input) => {
    input.location = location('location', body.location);
  },
  contact: (body, input) => {
    input.contact = contact('contact', body.contact);
  },
  image: inboundMediaOf('image'),
  video: inboundMediaOf('video'),
  audio: inboundMediaOf('audio'),
  document: inboundMediaOf('document'),
  sticker: inboundMediaOf('sticker'),
};

function inboundMedia(type: InboundMediaType, value: unknown, caption: string | null): MediaInput {
  const m = value === undefined ? {} : objectAt('media', value);
  const type_ = m.mimetype === undefined ? DEFAULT_MIMETYPES[type] : mimetype('media.mimetype', m.mimetype);
  const filename = optionalText('media.filename', m.filename, 255);
  let data: Buffer;
  if (m.base64 !== undefined) {
    data = base64Bytes('media.base64', m.base64);
  } else {
    const size = m.size ?? DEFAULT_GENERATED_MEDIA_BYTES;
    if (!Number.isInteger(size) || (size as number) < 1 || (size as number) > MAX_MEDIA_BYTES) {
      throw validation('media.size', `must be an integer in [1, ${MAX_MEDIA_BYTES}]`);
    }
    data = generatedBytes(size as number);
  }
  return { data, mimetype: type_, filename, caption };
}

/** Deterministic filler, so a test that generates media can still know its hash. */
function generatedBytes(size: number): Buffer {
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + 7) & 0xff;
  return data;
}

export function parseReceipt(body: Body): { waMessageId: string; status: AckStatus; from?: string } {
  const from = body.from === undefined ? undefined : contactJid('from', body.from);
  return { waMessageId: messageId('waMessageId', body.waMessageId), status: oneOf('status', body.status, ACK_STATUSES), ...(from ? { from } : {}) };
}

export function parseReaction(body: Body): { from: string; waMessageId: string; emoji: string } {
  if (typeof body.emoji !== 'string' || body.emoji.length > 16) throw validation('emoji', 'must be an emoji, or "" to remove the reaction');
  return { from: contactJid('from', body.from), waMessageId: messageId('waMessageId', body.waMessageId), emoji: body.emoji };
}

export function parsePollVote(body: Body): { from: string; pollWaMessageId: string; options: string[] } {
  const options = body.options;
  if (!Array.isArray(options) || options.some((o) => typeof o !== 'string')) throw validation('options', 'must be an array of option names');
  return { from: contactJid('from', body.from), pollWaMessageId: messageId('pollWaMessageId', body.pollWaMessageId), options: [...new Set(options as string[])] };
}

export function parsePresence(body: Body): { jid: string; chatJid: string; presence: Presence } {
  const jid = contactJid('jid', body.jid);
  let chatJid = jid;
  if (body.chatJid !== undefined) {
    if (typeof body.chatJid !== 'string' || !(GROUP_JID_PATTERN.test(body.chatJid) || body.chatJid === jid)) {
      throw validation('chatJid', 'must be a group jid …@g.us (or the contact)');
    }
    chatJid = body.chatJid;
  }
  return { jid, chatJid, presence: oneOf('presence', body.presence, PRESENCES) };
}

export function parseContactEdit(body: Body): { from: string; waMessageId: string; text: string } {
  return { from: contactJid('from', body.from), waMessageId: messageId('waMessageId', body.waMessageId), text: requireText('text', body.text, MAX_TEXT_LENGTH) };
}

export function parseContactRevoke(body: Body): { from: string; waMessageId: string } {
  return { from: contactJid('from', body.from), waMessageId: messageId('waMessageId', body.waMessageId) };
}

export function parseCall(body: Body): { from: string; isVideo: boolean } {
  return { from: contactJid('from', body.from), isVideo: optionalBoolean('isVideo', body.isVideo) ?? false };
}

export function parseGroupParticipants(body: Body): { action: GroupParticipantAction; participants: string[] } {
  const action = oneOf('action', body.action, GROUP_PARTICIPANT_ACTIONS);
  const participants = userJids('participants', body.participants);
  if (participants.length === 0) throw validation('participants', 'must name at least one jid');
  return { action, participants };
}

export function parseGroupPatch(body: Body): GroupChanges {
  const changes: GroupChanges = {};
  const unknown = Object.keys(body).filter((k) => !['subject', 'description', 'isAnnounce', 'isLocked'].includes(k));
  if (unknown.length > 0) throw validation(unknown[0], 'is not a group property (subject, description, isAnnounce, isLocked)');
  if (body.subject !== undefined) changes.subject = requireText('subject', body.subject, MAX_SUBJECT_LENGTH);
  if (body.description !== undefined) {
    if (typeof body.description !== 'string' || body.description.length > 2048) throw validation('description', 'must be a string of at most 2048 characters');
    changes.description = body.description;
  }
  const isAnnounce = optionalBoolean('isAnnounce', body.isAnnounce);
  if (isAnnounce !== undefined) changes.isAnnounce = isAnnounce;
  const isLocked = optionalBoolean('isLocked', body.isLocked);
  if (isLocked !== undefined) changes.isLocked = isLocked;
  if (Object.keys(changes).length === 0) throw validation('subject', 'at least one of subject, description, isAnnounce, isLocked is required');
  return changes;
}

// ---- device protocol -------------------------------------------------------------------------

/** A device's message as the network will store it, before it has an identity there (media still bytes). */
export type SendInput = Omit<SimSentMessage, 'id' | 'sessionId' | 'from' | 'timestamp' | 'sends' | 'media' | 'edits' | 'revoked' | 'forwarded' | 'type'> & {
  waMessageId: string;
  /** `forward`: the network copies the original's content (and type) */
  type: SimSentMessage['type'] | 'forward';
  media: MediaInput | null;
  /** a forward: the waMessageId of the message copied (one the device sent or received) */
  forwardOf: string | null;
};

const SEND_CONTENT_TYPES = [...OUTBOUND_MESSAGE_TYPES, 'forward'] as const;

function linkPreview(field: string, value: unknown): LinkPreview | null {
  if (value === undefined || value === null) return null;
  const p = objectAt(field, value);
  return {
    url: requireText(`${field}.url`, p.url, 2048),
    title: requireText(`${field}.title`, p.title, 1000),
    description: optionalText(`${field}.description`, p.description, 4000),
    imageUrl: optionalText(`${field}.imageUrl`, p.imageUrl, 2048),
    thumbnailBase64: p.thumbnailBase64 === undefined || p.thumbnailBase64 === null ? null : base64Bytes(`${field}.thumbnailBase64`, p.thumbnailBase64).toString('base64'),
  };
}

function chatJid(field: string, value: unknown): string {
  if (typeof value !== 'string' || !CHAT_JID_PATTERN.test(value)) throw validation(field, 'must be a jid <digits>@s.whatsapp.net, <digits>@lid or a group jid …@g.us');
  return value;
}

/** The device's `send` request (SimSendArgs). */
export function parseSend(args: Body): SendInput {
  const content = objectAt('content', args.content);
  const type = oneOf('content.type', content.type, SEND_CONTENT_TYPES);
  const quoted = args.quoted === undefined || args.quoted === null ? null : objectAt('quoted', args.quoted);
  const input: SendInput = {
    waMessageId: messageId('waMessageId', args.waMessageId),
    // a status post goes to status@broadcast, with its audience (CONTRACT 13)
    to: args.to === STATUS_BROADCAST_JID ? STATUS_BROADCAST_JID : chatJid('to', args.to),
    status: args.to === STATUS_BROADCAST_JID ? parseStatusPost(args.statusPost) : null,
    type,
    text: null,
    media: null,
    location: null,
    contact: null,
    poll: null,
    reaction: null,
    quotedWaMessageId: quoted ? messageId('quoted.waMessageId', quoted.waMessageId) : null,
    mentions: userJids('mentions', args.mentions),
    ptt: type === 'voice',
    pollVote: null,
    linkPreview: null,
    forwardOf: null,
  };
  SEND_CONTENT[type](content, input);
  return input;
}

const sentMediaOf =
  (type: MediaMessageType) =>
  (content: Body, input: SendInput): void => {
    const m = objectAt('content.media', content.media);
    const caption = isCaptionedMediaType(type) ? optionalText('content.caption', content.caption, MAX_TEXT_LENGTH) : null;
    input.text = caption;
    input.media = {
      data: base64Bytes('content.media.data', m.data),
      mimetype: mimetype('content.media.mimetype', m.mimetype),
      filename: optionalText('content.media.filename', m.filename, 255),
      caption,
    };
    if (type === 'sticker' && !/^image\/webp\b/i.test(input.media.mimetype)) throw validation('content.media.mimetype', 'a sticker must be image/webp');
  };

/** What each content type a device can send reads of `content` (docs/messages.md, "adding a message type"). */
const SEND_CONTENT: Record<(typeof SEND_CONTENT_TYPES)[number], (content: Body, input: SendInput) => void> = {
  text: (content, input) => {
    input.text = requireText('content.text', content.text, MAX_TEXT_LENGTH);
    input.linkPreview = linkPreview('content.linkPreview', content.linkPreview);
  },
  forward: (content, input) => {
    input.forwardOf = messageId('content.original.waMessageId', objectAt('content.original', content.original).waMessageId);
  },
  pollVote: (content, input) => {
    const target = objectAt('content.poll', content.poll);
    const options = content.options;
    if (!Array.isArray(options) || options.length === 0 || options.some((o) => typeof o !== 'string')) {
      throw validation('content.options', 'must be a non-empty array of option names');
    }
    input.pollVote = { pollWaMessageId: messageId('content.poll.waMessageId', target.waMessageId), options: [...new Set(options as string[])] };
  },
  location: (content, input) => {
    input.location = location('content.location', content.location);
  },
  contact: (content, input) => {
    input.contact = contact('content.contact', content.contact);
  },
  poll: (content, input) => {
    input.poll = poll('content.poll', content.poll);
  },
  reaction: (content, input) => {
    const target = objectAt('content.target', content.target);
    if (typeof content.emoji !== 'string' || content.emoji.length > 16) throw validation('content.emoji', 'must be an emoji, or "" to remove the reaction');
    input.reaction = { waMessageId: messageId('content.target.waMessageId', target.waMessageId), emoji: content.emoji };
  },
  image: sentMediaOf('image'),
  video: sentMediaOf('video'),
  audio: sentMediaOf('audio'),
  document: sentMediaOf('document'),
  voice: sentMediaOf('voice'),
  sticker: sentMediaOf('sticker'),
};

/** The device's `statusPost` of a send to status@broadcast (SimSendArgs). */
export function parseStatusPost(value: unknown): StatusPostOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw validation('statusPost', 'must be an object with audience');
  const post = value as Body;
  if (!Array.isArray(post.audience) || post.audience.length === 0) throw validation('statusPost.audience', 'must be a non-empty array of jids');
  const wrong = post.audience.filter((j) => typeof j !== 'string' || !USER_JID_PATTERN.test(j));
  if (wrong.length) throw new DomainError('validation_error', 'statusPost.audience must be jids <digits>@s.whatsapp.net', { 'statusPost.audience': wrong });
  const bg = post.backgroundColor ?? null;
  if (bg !== null && (typeof bg !== 'string' || !BACKGROUND_COLOR_PATTERN.test(bg))) throw validation('statusPost.backgroundColor', 'must be #rrggbb');
  return { audience: [...new Set(post.audience as string[])], backgroundColor: bg };
}

export function parseDevicePresence(args: Body): { chatJid: string; presence: 'composing' | 'paused' } {
  return { chatJid: chatJid('chatJid', args.chatJid), presence: oneOf('presence', args.presence, ['composing', 'paused'] as const) };
}

export function parseRead(args: Body): { chatJid: string; waMessageId: string; participant: string | null }[] {
  if (!Array.isArray(args.keys)) throw validation('keys', 'must be an array of message keys');
  return args.keys.map((k, i) => {
    const key = objectAt(`keys[${i}]`, k);
    const participant = key.participant === undefined || key.participant === null ? null : contactJid(`keys[${i}].participant`, key.participant);
    return { chatJid: chatJid(`keys[${i}].chatJid`, key.chatJid), waMessageId: messageId(`keys[${i}].waMessageId`, key.waMessageId), participant };
  });
}
