import type { AckStatus } from '@app/contracts';
import type { AckOutcome, EditedMessage, MemberAckOutcome, MessageRow, NewMessage, QueueHead, SentRecord } from '@app/database';
import type { StoreOutbox, StoreTx } from '../store-ports';

export type { AckOutcome, EditedMessage, MemberAckOutcome, MessageRow, NewMessage, QueueHead, SentRecord };

/**
 * The part of the message log (`MessagesRepository`, PostgreSQL) a gateway uses. PostgreSQL is the send queue:
 * a `queued` row is a message to send, and every status change is a conditional update there.
 */
export interface MessageStore {
  /** the first `limit` queued outbound messages of the session, in acceptance order, and its presenceTyping */
  nextQueued(sessionId: string, limit: number): Promise<QueueHead>;
  sessionsWithQueued(sessionIds: string[]): Promise<string[]>;
  /**
   * A drained batch's sends recorded in one statement: each row queued → sent once (`updatedAt` its new updatedAt), the
   * i-th event of `outbox` (`SessionEventSink.withOutboxEach`) written by the same statement only when the i-th row
   * moved. Answers the rows that moved, by id, each with `heldAck`: a receipt kept on the row while it was queued, to
   * apply now. A row missing from the answer was not queued any more.
   */
  markSentMany(sends: ReadonlyArray<SentRecord>, outbox?: StoreOutbox): Promise<Map<string, { heldAck: AckStatus | null }>>;
  /** queued → failed, once */
  markFailed(id: string, error: string, tx?: StoreTx): Promise<MessageRow | null>;
  /** a sent message forward only (`moved`); on a queued one the ack is kept on the row (`held`); null: nothing to do */
  applyAck(sessionId: string, waMessageId: string, status: AckStatus, tx?: StoreTx): Promise<AckOutcome | null>;
  /**
   * a group member's receipt: kept per member on the row (forward only); the message's status moves to what every one of
   * `members` has reached. null: nothing changed
   */
  applyMemberAck(sessionId: string, waMessageId: string, member: string, status: AckStatus, members: string[], tx?: StoreTx): Promise<MemberAckOutcome | null>;
  /** acks kept on rows that are sent by now but were never applied (a gateway stopped in between) */
  heldAcksOf(sessionId: string): Promise<Array<{ waMessageId: string; status: AckStatus }>>;
  /** null when (session, waMessageId) is already stored */
  insert(message: NewMessage, tx?: StoreTx): Promise<MessageRow | null>;
  /** a network edit: the text (or caption) replaced; null for an unknown, revoked or unchanged message */
  applyEdit(sessionId: string, waMessageId: string, text: string, tx?: StoreTx): Promise<EditedMessage | null>;
  /** a network delete for everyone: the row marked once; null for an unknown or already revoked message */
  markRevoked(sessionId: string, waMessageId: string, tx?: StoreTx): Promise<MessageRow | null>;
  /** a reaction kept on the message (the reactor's latest; `""` removes it); null: unknown message or no change */
  applyReaction(sessionId: string, waMessageId: string, from: string, emoji: string, tx?: StoreTx): Promise<MessageRow | null>;
  /** a vote kept on the poll (the voter's latest); null: not a stored poll or the same vote again */
  applyPollVote(sessionId: string, pollWaMessageId: string, voter: string, options: string[], tx?: StoreTx): Promise<MessageRow | null>;
  idsByWaIds(sessionId: string, waMessageIds: string[]): Promise<Map<string, string>>;
  findByWaId(sessionId: string, waMessageId: string): Promise<MessageRow | null>;
  rawOf(sessionId: string, waMessageId: string): Promise<Uint8Array | null>;
  mediaOf(messageId: string): Promise<Buffer | null>;
}

export interface MessagingSettings {
  /** a queued message older than this ends `failed` */
  ttlMs: number;
  typingMsPerChar: number;
  typingMinMs: number;
  typingMaxMs: number;
}

export const isGroupJid = (jid: string) => jid.endsWith('@g.us');
