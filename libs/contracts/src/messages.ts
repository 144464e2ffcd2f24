import type { StatusPostOptions } from './account-extras';

/**
 * Messages: the send API's body, the Message resource of the log, and the payloads of message events
 * (CONTRACT section 10). Shared by the API, the gateway, the engines and the simulator.
 */

/** Types a client can send. */
export const OUTBOUND_MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'document', 'location', 'contact', 'reaction', 'poll'] as const;
export type OutboundMessageType = (typeof OUTBOUND_MESSAGE_TYPES)[number];

/** Types a message in the log can have: what can be sent, plus what only arrives (stickers, anything unknown). */
export const MESSAGE_TYPES = [...OUTBOUND_MESSAGE_TYPES, 'sticker', 'unknown'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const MEDIA_MESSAGE_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type MediaMessageType = (typeof MEDIA_MESSAGE_TYPES)[number];
export const isMediaType = (type: string): type is MediaMessageType => (MEDIA_MESSAGE_TYPES as readonly string[]).includes(type);

export const ACK_STATUSES = ['delivered', 'read', 'played'] as const;
export type AckStatus = (typeof ACK_STATUSES)[number];

export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'read', 'played', 'failed', 'received'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Order of outbound statuses: an ack never moves a message backwards (a late `delivered` after `read`). */
export const OUTBOUND_STATUS_RANK: Record<Exclude<MessageStatus, 'received' | 'failed'>, number> = {
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
  played: 4,
};

export type MessageDirection = 'out' | 'in';

export interface MediaView {
  mimetype: string;
  /** bytes; null when the network did not say */
  size: number | null;
  filename: string | null;
  caption: string | null;
}

export interface LocationContent {
  latitude: number;
  longitude: number;
  name?: string | null;
  address?: string | null;
}

export interface ContactContent {
  fullName: string;
  phoneNumber: string;
}

export interface PollContent {
  name: string;
  options: string[];
  /** how many options a voter may pick; 1 by default */
  selectableCount: number;
}

/** The Message resource (body of 202 and the GETs, `payload.message` in message events). */
export interface MessageView {
  id: string; // msg_<ulid>
  sessionId: string;
  organizationId: string;
  waMessageId: string;
  direction: MessageDirection;
  chatJid: string;
  from: string | null;
  type: MessageType;
  text: string | null;
  media: MediaView | null;
  location: LocationContent | null;
  contact: ContactContent | null;
  poll: PollContent | null;
  quotedMessageId: string | null;
  status: MessageStatus;
  error: string | null;
  createdAt: number;
  updatedAt: number;
  sentAt: number | null;
}

// ------------------------------------------------------------------------------------------------
// What the gateway hands an engine to send. Media bytes are already fetched and bounded by the API.

export interface OutboundMedia {
  data: Buffer;
  mimetype: string;
  filename: string | null;
}

export type OutboundContent =
  | { type: 'text'; text: string }
  | { type: 'image' | 'video' | 'document'; media: OutboundMedia; caption: string | null }
  | { type: 'audio'; media: OutboundMedia }
  | { type: 'location'; location: LocationContent }
  | { type: 'contact'; contact: ContactContent }
  /** `emoji` "" removes the reaction */
  | { type: 'reaction'; target: MessageKeyRef; emoji: string }
  | { type: 'poll'; poll: PollContent };

/** Enough of a stored message to address it on the network (quote it, react to it, mark it read). */
export interface MessageKeyRef {
  waMessageId: string;
  chatJid: string;
  fromMe: boolean;
  /** the sender in a group chat (`in` messages) */
  participant: string | null;
}

export interface OutboundMessage {
  /** fixed when the API accepted the message; every (re)send uses it */
  waMessageId: string;
  to: string;
  content: OutboundContent;
  /** the message replied to, with its stored network content when we have it (Baileys quotes the content) */
  quoted: (MessageKeyRef & { raw: Uint8Array | null }) | null;
  mentions: string[];
  /** a status post (to status@broadcast): who may see it and its background (CONTRACT 13); absent otherwise */
  statusPost?: StatusPostOptions | null;
}

export interface SentMessage {
  waMessageId: string;
  /** epoch ms the network took it */
  timestamp: number;
  /** engine-specific encoded content (Baileys: proto.Message bytes), kept for retry receipts and quotes */
  raw: Uint8Array | null;
}

// ------------------------------------------------------------------------------------------------
// Event payloads (envelope of CONTRACT 6)

export interface MessageEventPayload {
  message: MessageView;
}

export interface MessageAckPayload {
  messageId: string;
  waMessageId: string;
  chatJid: string;
  status: AckStatus;
  /** a group message: the member whose receipt this is; absent on the message's own step (every member reached it) */
  participant?: string;
}

export interface MessageReactionPayload {
  /** our id of the message reacted to, null when it is not in the log */
  messageId: string | null;
  waMessageId: string;
  chatJid: string;
  from: string;
  /** "" = removed */
  emoji: string;
}

export interface PollVotePayload {
  pollMessageId: string | null;
  chatJid: string;
  voter: string;
  selectedOptions: string[];
}

export const PRESENCES = ['available', 'unavailable', 'composing', 'recording', 'paused'] as const;
export type Presence = (typeof PRESENCES)[number];

export interface PresenceUpdatePayload {
  chatJid: string;
  jid: string;
  presence: Presence;
}

export interface CallIncomingPayload {
  callId: string;
  from: string;
  isVideo: boolean;
  isGroup: boolean;
}

export interface GroupChanges {
  subject?: string;
  description?: string;
  isAnnounce?: boolean;
  isLocked?: boolean;
}

export interface GroupUpdatePayload {
  groupJid: string;
  changes: GroupChanges;
}

export const GROUP_PARTICIPANT_ACTIONS = ['add', 'remove', 'promote', 'demote'] as const;
export type GroupParticipantAction = (typeof GROUP_PARTICIPANT_ACTIONS)[number];

export interface GroupParticipantsPayload {
  groupJid: string;
  action: GroupParticipantAction;
  participants: string[];
}

/** `<digits>@s.whatsapp.net`, `<digits>@lid` or a group `<id>@g.us`. */
export const CHAT_JID_PATTERN = /^(\d{5,20}@s\.whatsapp\.net|\d{5,20}@lid|(\d+-\d+|\d{5,})@g\.us)$/;

/** Bare digits with `+`, spaces or dashes → `<digits>@s.whatsapp.net`; a JID as it is; null when neither. */
export function normalizeChatJid(to: string): string | null {
  const trimmed = to.trim();
  if (CHAT_JID_PATTERN.test(trimmed)) return trimmed;
  if (!/^\+?[\d\s-]+$/.test(trimmed)) return null;
  const digits = trimmed.replace(/\D/g, '');
  return digits.length >= 5 && digits.length <= 20 ? `${digits}@s.whatsapp.net` : null;
}

/**
 * Where an inbound message's media bytes can be fetched later (JSON, stored with the message). The bytes are never
 * kept by us: `GET …/messages/{id}/media` streams them from the network through libs/media.
 */
export type MediaRef =
  | {
      engine: 'baileys';
      /** Baileys' media type for downloadContentFromMessage */
      mediaType: 'image' | 'video' | 'audio' | 'document' | 'sticker';
      directPath: string;
      /** base64 */
      mediaKey: string;
      url: string | null;
    }
  | { engine: 'sim'; mediaId: string };
