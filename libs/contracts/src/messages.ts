/**
 * Messages: the send API's body, the Message resource of the log, and the payloads of message events
 * (CONTRACT section 10). Shared by the API, the gateway, the engines and the simulator.
 */

/** Types a client can send. */
export const OUTBOUND_MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'document', 'location', 'contact', 'reaction', 'poll', 'voice', 'sticker', 'pollVote'] as const;
export type OutboundMessageType = (typeof OUTBOUND_MESSAGE_TYPES)[number];

/** Types a message in the log can have: what can be sent, plus what only arrives (anything unknown). */
export const MESSAGE_TYPES = [...OUTBOUND_MESSAGE_TYPES, 'unknown'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const MEDIA_MESSAGE_TYPES = ['image', 'video', 'audio', 'document', 'sticker', 'voice'] as const;
export type MediaMessageType = (typeof MEDIA_MESSAGE_TYPES)[number];
export const isMediaType = (type: string): type is MediaMessageType => (MEDIA_MESSAGE_TYPES as readonly string[]).includes(type);

/** Whether each media type carries a caption: the one place that says it (docs/messages.md, "adding a message type"). */
export const MEDIA_CAPTIONED = { image: true, video: true, document: true, audio: false, voice: false, sticker: false } as const satisfies Record<MediaMessageType, boolean>;
export type CaptionedMediaType = { [K in MediaMessageType]: (typeof MEDIA_CAPTIONED)[K] extends true ? K : never }[MediaMessageType];
export type CaptionlessMediaType = Exclude<MediaMessageType, CaptionedMediaType>;
export const CAPTIONED_MEDIA_TYPES = MEDIA_MESSAGE_TYPES.filter((t): t is CaptionedMediaType => MEDIA_CAPTIONED[t]);
export const isCaptionedMediaType = (type: string): type is CaptionedMediaType => (CAPTIONED_MEDIA_TYPES as readonly string[]).includes(type);

/** A media content of type T, whatever form its bytes take (`M`: a Buffer in the gateway, base64 on the simulator's wire). */
export type MediaContent<M, T extends MediaMessageType = MediaMessageType> = T extends CaptionedMediaType
  ? { type: T; media: M; caption: string | null }
  : { type: T; media: M };

/** The media content of a type: a caption where the type carries one (MEDIA_CAPTIONED), none otherwise. */
export function mediaContent<M>(type: MediaMessageType, media: M, caption: string | null): MediaContent<M> {
  return isCaptionedMediaType(type) ? { type, media, caption } : { type, media };
}

export const ACK_STATUSES = ['delivered', 'read', 'played'] as const;
export type AckStatus = (typeof ACK_STATUSES)[number];

/** `scheduled`: accepted with a `sendAt` still ahead (CONTRACT 17); `cancelled`: a scheduled send withdrawn. */
export const MESSAGE_STATUSES = ['scheduled', 'queued', 'sent', 'delivered', 'read', 'played', 'failed', 'cancelled', 'received'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Order of outbound statuses: an ack never moves a message backwards (a late `delivered` after `read`). */
export const OUTBOUND_STATUS_RANK: Record<Exclude<MessageStatus, 'received' | 'failed' | 'scheduled' | 'cancelled'>, number> = {
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

/** How a status post goes out, beside its content (Baileys: sendMessage's `statusJidList` and `backgroundColor`). */
export interface StatusPostOptions {
  /** the user JIDs that may see the status (WhatsApp sends it to each of them) */
  audience: string[];
  /** a text status's background, `#rrggbb`; null: WhatsApp's default */
  backgroundColor: string | null;
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
  /** epoch ms of the last edit of its text or caption; null when never edited */
  editedAt: number | null;
  /** epoch ms when it was deleted for everyone (`message.revoked`); the content is kept; null while it stands */
  revokedAt: number | null;
  /** the reactions it has now: one per reactor, the latest (a removed one is gone) */
  reactions: MessageReaction[];
  /** on a poll: each voter's latest vote, by option name; empty for anything else */
  pollVotes: PollVoteRecord[];
  /** true for a message stored from a history sync on pairing (CONTRACT 12, `syncHistory`): no `message.received` was sent for it */
  fromHistory: boolean;
  /** epoch ms it is due (CONTRACT 17, a send accepted with `sendAt`); null for a send queued at once */
  sendAt: number | null;
  /** the campaign it was sent for (CONTRACT 17); null otherwise */
  campaignId: string | null;
}

export interface MessageReaction {
  from: string;
  emoji: string;
}

export interface PollVoteRecord {
  voter: string;
  options: string[];
}

// ------------------------------------------------------------------------------------------------
// What the gateway hands an engine to send. Media bytes are already fetched and bounded by the API.

export interface OutboundMedia {
  data: Buffer;
  mimetype: string;
  filename: string | null;
}

export type OutboundContent =
  /** `linkPreview`: the preview of the first URL of the text, made when the message was accepted (null: none) */
  | { type: 'text'; text: string; linkPreview?: LinkPreview | null }
  /** image, video, document carry a caption; `voice`: shown as a voice note (push to talk); `sticker`: a webp sticker */
  | MediaContent<OutboundMedia>
  | { type: 'location'; location: LocationContent }
  | { type: 'contact'; contact: ContactContent }
  /** `emoji` "" removes the reaction */
  | { type: 'reaction'; target: MessageKeyRef; emoji: string }
  | { type: 'poll'; poll: PollContent }
  /** a vote on a poll of the chat (option names; the engine encrypts them as WhatsApp does) */
  | { type: 'pollVote'; poll: MessageKeyRef; options: string[] }
  /** a message of this session forwarded: the engine sends the original's content marked as forwarded */
  | { type: 'forward'; original: MessageKeyRef };

/** Fails to compile while a type that can be sent has no content above (docs/messages.md, "adding a message type"). */
export type OutboundContentCoversEveryType = CompilesWhen<OutboundMessageType extends OutboundContent['type'] ? true : false>;

/** A type-level check: `CompilesWhen<X extends Y ? true : false>` is a compile error while X is not a Y. */
export type CompilesWhen<T extends true> = T;

/** A link preview (CONTRACT 12): read from the page's Open Graph tags when a text with a URL is accepted. */
export interface LinkPreview {
  /** the URL as it appears in the text */
  url: string;
  title: string;
  description: string | null;
  /** og:image, as the page named it */
  imageUrl: string | null;
  /** a small JPEG of og:image (base64), when it could be fetched within bounds */
  thumbnailBase64: string | null;
}

/**
 * What a queued outbound message needs besides its Message fields (stored with the row, read by the gateway): the
 * message a forward copies, the poll a vote is for, the link preview of a text.
 */
export interface MessageSendOptions {
  forwardOf?: MessageKeyRef;
  pollVote?: { poll: MessageKeyRef; options: string[] };
  linkPreview?: LinkPreview | null;
  /** a campaign's message with `pacing.typing`: "typing…" before it whatever the session's presenceTyping */
  typing?: boolean;
}

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
  /** true when the session rejected the call on its own (its `rejectCalls` setting) */
  rejected?: boolean;
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
  /** who made the change (a member's JID), when the network said; absent or null when it did not */
  actor?: string | null;
}

export const GROUP_PARTICIPANT_ACTIONS = ['add', 'remove', 'promote', 'demote'] as const;
export type GroupParticipantAction = (typeof GROUP_PARTICIPANT_ACTIONS)[number];

export interface GroupParticipantsPayload {
  groupJid: string;
  action: GroupParticipantAction;
  participants: string[];
  /** who made the change (an admin; the member itself when it joined by invite or left), when the network said */
  actor?: string | null;
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
