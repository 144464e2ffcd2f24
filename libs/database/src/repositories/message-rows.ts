import type {
  AckStatus,
  ContactContent,
  LocationContent,
  MediaRef,
  MediaView,
  MessageDirection,
  MessageSendOptions,
  MessageStatus,
  MessageReaction,
  MessageType,
  MessageView,
  PollContent,
  PollVoteRecord,
} from '@app/contracts';
import { OUTBOUND_STATUS_RANK } from '@app/contracts';
import type { Queryable } from '../pg';

/**
 * The `messages` table's row shapes and the pieces its three repositories share: the log (`MessagesRepository`),
 * the send queue (`MessageQueueRepository`) and the receipts (`MessageAcksRepository`). The table's SQL stays in those
 * three files; this one only names its columns and maps its rows.
 */

/** A row of `messages` as the apps see it (the view plus what only the gateway needs). */
export interface MessageRow extends MessageView {
  mediaRef: MediaRef | null;
  reaction: { waMessageId: string; emoji: string } | null;
  quotedWaMessageId: string | null;
  mentions: string[];
  idempotencyKey: string | null;
  /** a group message we sent: each member's furthest receipt */
  memberAcks: Record<string, AckStatus>;
  /** an outbound message's forward source, poll vote or link preview (MessageSendOptions); null for the others */
  sendOptions: MessageSendOptions | null;
}

/** What an edit changed: the row after it and the text (or caption) before it. */
export interface EditedMessage {
  row: MessageRow;
  previousText: string | null;
}

/** What an insert provides; the rest is defaulted. */
export interface NewMessage {
  id: string;
  organizationId: string;
  sessionId: string;
  waMessageId: string;
  direction: MessageDirection;
  chatJid: string;
  from: string | null;
  type: MessageType;
  text?: string | null;
  media?: MediaView | null;
  mediaRef?: MediaRef | null;
  location?: LocationContent | null;
  contact?: ContactContent | null;
  poll?: PollContent | null;
  reaction?: { waMessageId: string; emoji: string } | null;
  quotedMessageId?: string | null;
  quotedWaMessageId?: string | null;
  mentions?: string[];
  status: MessageStatus;
  idempotencyKey?: string | null;
  sendOptions?: MessageSendOptions | null;
  raw?: Uint8Array | null;
  /** the session's acceptance order of an outbound message (taken by `insertOutbound`, see `takeMessageSeqsSql`) */
  seq?: number | null;
  /** epoch ms; default now */
  createdAt?: number;
  sentAt?: number | null;
  /** stored from a history sync on pairing (no `message.received` for it, no unread count) */
  fromHistory?: boolean;
  /** epoch ms a `scheduled` send is due (CONTRACT 17) */
  sendAt?: number | null;
  /** the campaign it is sent for */
  campaignId?: string | null;
}

/** A send the network took, to record (`markSentMany`): `updatedAt` (epoch ms, default now) is the row's new updatedAt. */
export interface SentRecord {
  id: string;
  sentAt: number;
  raw: Uint8Array | null;
  updatedAt?: number;
  /** whether the message is a media message (its row's `media`), whose bytes the record drops; absent: it may be */
  media?: boolean;
}

/** The head of a session's send queue, and how the session sends (read in the same query). */
export interface QueueHead {
  /** the first queued outbound messages, in acceptance order */
  messages: MessageRow[];
  /** the session's `presenceTyping` ("typing…" before each text); false when nothing is queued */
  presenceTyping: boolean;
}

export interface MessageFilter {
  direction?: MessageDirection;
  chatJid?: string;
  status?: MessageStatus;
}

/** What a group member's receipt did: `row` after it, and whether the message as a whole moved (`moved`). */
export interface MemberAckOutcome {
  row: MessageRow;
  moved: boolean;
}

/** What a receipt did: moved a sent message (announce it), or was kept on a queued one until it is recorded sent. */
export type AckOutcome = { moved: MessageRow } | { held: true };

/** The columns a message row is read with (`MessageRawRow`). */
export const MESSAGE_COLUMNS = `id, organization_id, session_id, wa_message_id, direction, chat_jid, from_jid, type, text, media, media_ref,
  location, contact, poll, reaction, quoted_message_id, quoted_wa_message_id, mentions, status, error, idempotency_key,
  created_at, updated_at, sent_at, revoked_at, member_acks, edited_at, reactions, poll_votes, from_history, send_options,
  send_at, campaign_id`;

export interface MessageRawRow {
  id: string;
  organization_id: string;
  session_id: string;
  wa_message_id: string;
  direction: MessageDirection;
  chat_jid: string;
  from_jid: string | null;
  type: MessageType;
  text: string | null;
  media: MediaView | null;
  media_ref: MediaRef | null;
  location: LocationContent | null;
  contact: ContactContent | null;
  poll: PollContent | null;
  reaction: { waMessageId: string; emoji: string } | null;
  quoted_message_id: string | null;
  quoted_wa_message_id: string | null;
  mentions: string[];
  status: MessageStatus;
  error: string | null;
  idempotency_key: string | null;
  created_at: Date;
  updated_at: Date;
  sent_at: Date | null;
  revoked_at: Date | null;
  member_acks: Record<string, AckStatus> | null;
  edited_at: Date | null;
  reactions: MessageReaction[] | null;
  poll_votes: PollVoteRecord[] | null;
  from_history: boolean;
  send_options: MessageSendOptions | null;
  send_at: Date | null;
  campaign_id: string | null;
}

export function toMessageRow(r: MessageRawRow): MessageRow {
  return {
    id: r.id,
    sessionId: r.session_id,
    organizationId: r.organization_id,
    waMessageId: r.wa_message_id,
    direction: r.direction,
    chatJid: r.chat_jid,
    from: r.from_jid,
    type: r.type,
    text: r.text,
    media: r.media,
    location: r.location,
    contact: r.contact,
    poll: r.poll,
    quotedMessageId: r.quoted_message_id,
    status: r.status,
    error: r.error,
    createdAt: r.created_at.getTime(),
    updatedAt: r.updated_at.getTime(),
    sentAt: r.sent_at ? r.sent_at.getTime() : null,
    mediaRef: r.media_ref,
    reaction: r.reaction,
    quotedWaMessageId: r.quoted_wa_message_id,
    mentions: r.mentions ?? [],
    idempotencyKey: r.idempotency_key,
    revokedAt: r.revoked_at ? r.revoked_at.getTime() : null,
    memberAcks: r.member_acks ?? {},
    editedAt: r.edited_at ? r.edited_at.getTime() : null,
    reactions: r.reactions ?? [],
    pollVotes: r.poll_votes ?? [],
    fromHistory: r.from_history,
    sendOptions: r.send_options ?? null,
    sendAt: r.send_at ? r.send_at.getTime() : null,
    campaignId: r.campaign_id ?? null,
  };
}

/** The API's Message resource: the row without what only the gateway needs. */
export function toMessageView(row: MessageRow): MessageView {
  return {
    id: row.id,
    sessionId: row.sessionId,
    organizationId: row.organizationId,
    waMessageId: row.waMessageId,
    direction: row.direction,
    chatJid: row.chatJid,
    from: row.from,
    type: row.type,
    text: row.text,
    media: row.media,
    location: row.location,
    contact: row.contact,
    poll: row.poll,
    quotedMessageId: row.quotedMessageId,
    status: row.status,
    error: row.error,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    sentAt: row.sentAt,
    editedAt: row.editedAt,
    revokedAt: row.revokedAt,
    reactions: row.reactions,
    pollVotes: row.pollVotes,
    fromHistory: row.fromHistory,
    sendAt: row.sendAt,
    campaignId: row.campaignId,
  };
}

export const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
export const ts = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms));

/**
 * `column`'s rank in the outbound order (OUTBOUND_STATUS_RANK, written out as SQL), `otherwise` for any other value:
 * an ack never moves a message backwards (a late `delivered` after `read`).
 */
export const rankSql = (column: string, otherwise: number) =>
  `CASE ${column} ${Object.entries(OUTBOUND_STATUS_RANK).map(([status, rank]) => `WHEN '${status}' THEN ${rank}`).join(' ')} ELSE ${otherwise} END`;
export const RANK_SQL = rankSql('status', -1);

/** The row an `UPDATE … RETURNING` of at most one row changed. */
export async function updatedRow(q: Queryable, sql: string, params: unknown[]): Promise<MessageRow | null> {
  const rows = await q.query<MessageRawRow>(sql, params);
  return rows[0] ? toMessageRow(rows[0]) : null;
}
