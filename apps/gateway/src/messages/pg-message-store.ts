import type { AckStatus } from '@app/contracts';
import { serviceSession, type MessageAcksRepository, type MessageQueueRepository, type MessagesRepository, type NewMessage, type OutboxRows, type SentRecord, type Tx } from '@app/database';
import type { MessageStore } from './message-store';

/**
 * The gateway's `MessageStore` on PostgreSQL: the send queue (`MessageQueueRepository`), the receipts
 * (`MessageAcksRepository`) and the log (`MessagesRepository`) behind the one port the session's handlers use. A
 * transaction (`StoreTx`) is the `Tx` of `SessionEventSink.transact`.
 */
export class PgMessageStore implements MessageStore {
  constructor(
    private readonly log: MessagesRepository,
    private readonly queue: MessageQueueRepository,
    private readonly acks: MessageAcksRepository,
  ) {}

  nextQueued(sessionId: string, limit: number) {
    return this.queue.nextQueued(sessionId, limit);
  }
  sessionsWithQueued(sessionIds: string[]) {
    return this.queue.sessionsWithQueued(sessionIds);
  }
  markSentMany(sends: ReadonlyArray<SentRecord>, outbox?: OutboxRows) {
    return this.queue.markSentMany(sends, outbox);
  }
  markFailed(id: string, error: string, tx?: Tx) {
    return this.queue.markFailed(id, error, tx);
  }
  applyAck(sessionId: string, waMessageId: string, status: AckStatus, tx?: Tx) {
    return this.acks.applyAck(sessionId, waMessageId, status, tx);
  }
  applyMemberAck(sessionId: string, waMessageId: string, member: string, status: AckStatus, members: string[], tx?: Tx) {
    return this.acks.applyMemberAck(sessionId, waMessageId, member, status, members, tx);
  }
  heldAcksOf(sessionId: string) {
    return this.acks.heldAcksOf(sessionId);
  }
  insert(message: NewMessage, tx?: Tx) {
    return this.log.insert(message, tx);
  }
  applyEdit(sessionId: string, waMessageId: string, text: string, tx?: Tx) {
    return this.log.applyEdit(serviceSession(sessionId), waMessageId, text, tx);
  }
  markRevoked(sessionId: string, waMessageId: string, tx?: Tx) {
    return this.log.markRevoked(serviceSession(sessionId), waMessageId, tx);
  }
  applyReaction(sessionId: string, waMessageId: string, from: string, emoji: string, tx?: Tx) {
    return this.log.applyReaction(sessionId, waMessageId, from, emoji, tx);
  }
  applyPollVote(sessionId: string, pollWaMessageId: string, voter: string, options: string[], tx?: Tx) {
    return this.log.applyPollVote(sessionId, pollWaMessageId, voter, options, tx);
  }
  idsByWaIds(sessionId: string, waMessageIds: string[]) {
    return this.log.idsByWaIds(sessionId, waMessageIds);
  }
  findByWaId(sessionId: string, waMessageId: string) {
    return this.log.findByWaId(sessionId, waMessageId);
  }
  rawOf(sessionId: string, waMessageId: string) {
    return this.log.rawOf(sessionId, waMessageId);
  }
  mediaOf(messageId: string) {
    return this.log.mediaOf(messageId);
  }
}
