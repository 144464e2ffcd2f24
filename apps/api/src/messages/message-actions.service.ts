import { Injectable } from '@nestjs/common';
import { CAPTIONED_MEDIA_TYPES, DomainError, EDIT_WINDOW_MS, MessageType, MessageView } from '@app/contracts';
import { MessageQueueRepository, MessageRow, MessagesRepository, OwnedSession, toMessageView } from '@app/database';
import { EventPublisher } from '@app/events';
import { ApiValidationPipe } from '../common/validation.pipe';
import { SessionActions } from '../sessions/session-actions';
import { EditMessageDto, ForwardMessageDto } from './dto/message-actions.dto';
import { messageKeyOf } from './message-keys';
import { assertSendable, MessagesService } from './messages.service';
import { newWaMessageId } from './wa-message-id';

/** What WhatsApp lets one edit: a text, or the caption of a captioned medium. */
const EDITABLE = new Set<string>(['text', ...CAPTIONED_MEDIA_TYPES]);
/**
 * What WhatsApp forwards (not reactions, polls or votes: those belong to their chat), one entry per type
 * (docs/messages.md, "adding a message type").
 */
const FORWARDABLE: Record<MessageType, boolean> = {
  text: true,
  image: true,
  video: true,
  audio: true,
  voice: true,
  document: true,
  sticker: true,
  location: true,
  contact: true,
  reaction: false,
  poll: false,
  pollVote: false,
  unknown: false,
};

/**
 * CONTRACT 12's actions on a message of the log: edit and delete for everyone (own sent messages, through the session's
 * connection: `SessionActions`), forward (a new outbound message, accepted as a send is: counted against the rates,
 * queued, sent by the session in order), and CONTRACT 13's rejection of a ringing call.
 * What an action changed is stored and announced here, in one transaction (`EventPublisher.transact`).
 */
@Injectable()
export class MessageActionsService {
  private readonly validation = new ApiValidationPipe();

  constructor(
    private readonly actions: SessionActions,
    private readonly messages: MessagesRepository,
    private readonly queue: MessageQueueRepository,
    private readonly events: EventPublisher,
    private readonly sends: MessagesService,
  ) {}

  /** 404 → 409 (not own, not sent yet, deleted, not text, past the window, not connected) → the network → stored + `message.edited`. */
  async edit(organizationId: string, sessionId: string, messageId: string, rawBody: unknown): Promise<MessageView> {
    const session = await this.actions.session(organizationId, sessionId);
    const row = await this.find(session, messageId);
    const { text } = await this.validate(rawBody, EditMessageDto);
    this.requireOwnSent(row, 'edited');
    if (!EDITABLE.has(row.type) || (row.type !== 'text' && !row.media)) {
      throw new DomainError('conflict', `a ${row.type} message has no text to edit`, { type: row.type });
    }
    const sentAt = row.sentAt!;
    if (Date.now() - sentAt > EDIT_WINDOW_MS) {
      throw new DomainError('conflict', 'the edit window of this message (15 minutes after sending) has passed', { sentAt, windowMs: EDIT_WINDOW_MS });
    }
    await this.actions.perform(organizationId, sessionId, 'messages.edit', { key: messageKeyOf(row), text, sentAt });
    const edited = await this.events.transact(async (tx, publish) => {
      const result = await this.messages.applyEdit(session, row.waMessageId, text, tx);
      if (result) {
        publish({ event: 'message.edited', organizationId, sessionId: session.id, payload: { message: toMessageView(result.row), previousText: result.previousText } });
      }
      return result;
    });
    // the same text again changes nothing, and announces nothing
    return toMessageView(edited?.row ?? row);
  }

  /** Deletes an own sent message for everyone; a message already deleted answers the same, without a second event. */
  async revoke(organizationId: string, sessionId: string, messageId: string): Promise<void> {
    const session = await this.actions.session(organizationId, sessionId);
    const row = await this.find(session, messageId);
    if (row.revokedAt !== null && row.direction === 'out') return;
    // a scheduled send (CONTRACT 17) is withdrawn, not deleted on the network: it was never sent; cancelled again is a no-op
    if (row.status === 'cancelled') return;
    if (row.status === 'scheduled' && row.campaignId === null) {
      if (await this.queue.cancelScheduled(session, row.id)) return;
      throw new DomainError('conflict', 'the message is no longer scheduled: it became due and was queued', { status: 'queued' });
    }
    this.requireOwnSent(row, 'deleted');
    await this.actions.perform(organizationId, sessionId, 'messages.revoke', { key: messageKeyOf(row) });
    await this.events.transact(async (tx, publish) => {
      const revoked = await this.messages.markRevoked(session, row.waMessageId, tx);
      if (revoked) {
        publish({
          event: 'message.revoked',
          organizationId,
          sessionId: session.id,
          payload: { messageId: revoked.id, waMessageId: revoked.waMessageId, chatJid: revoked.chatJid, by: session.waJid ?? revoked.from ?? '' },
        });
      }
    });
  }

  /**
   * A forward is a send (CONTRACT 10's order): 404 → 422 → 409 (session not sendable; the original deleted or not
   * forwardable) → 429 → stored `queued` with the original's key in its send options → the gateway sends it.
   */
  async forward(organizationId: string, sessionId: string, messageId: string, rawBody: unknown): Promise<MessageView> {
    const session = await this.actions.session(organizationId, sessionId);
    const original = await this.find(session, messageId);
    const { to } = await this.validate(rawBody, ForwardMessageDto);
    if (!FORWARDABLE[original.type]) throw new DomainError('conflict', `a ${original.type} message cannot be forwarded`, { type: original.type });
    if (original.revokedAt !== null) throw new DomainError('conflict', 'the message was deleted for everyone', { messageId });
    if (original.direction === 'out' && original.status === 'queued') throw new DomainError('conflict', 'the message is not sent yet', { status: original.status });
    if (original.status === 'failed') throw new DomainError('conflict', 'the message was never sent', { status: original.status });
    assertSendable(session);
    return this.sends.accept(session, null, async (id) => ({
      bytes: null,
      message: {
        id,
        organizationId: session.organizationId,
        sessionId: session.id,
        waMessageId: newWaMessageId(),
        direction: 'out',
        chatJid: to,
        from: session.waJid,
        type: original.type,
        text: original.text,
        media: original.media,
        location: original.location,
        contact: original.contact,
        status: 'queued',
        sendOptions: { forwardOf: messageKeyOf(original) },
      },
    }));
  }

  /** CONTRACT 13: rejects a call ringing on the session (204); the engine knows the caller. */
  async rejectCall(organizationId: string, sessionId: string, callId: string): Promise<void> {
    if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(callId)) {
      throw new DomainError('validation_error', 'request is invalid', { fields: { callId: ['callId must be a call id ([A-Za-z0-9_.:-], 1-128 characters)'] } });
    }
    await this.actions.perform(organizationId, sessionId, 'calls.reject', { callId });
  }

  /** Validated after the lookups (another organization's session or message is 404 first), by the global pipe's rules. */
  private async validate<T extends object>(raw: unknown, metatype: new () => T): Promise<T> {
    return (await this.validation.transform(raw, { type: 'body', metatype, data: '' })) as T;
  }

  private async find(session: OwnedSession, messageId: string): Promise<MessageRow> {
    const row = await this.messages.findInSession(session, messageId);
    if (!row) throw new DomainError('not_found', 'message not found', { id: messageId });
    return row;
  }

  private requireOwnSent(row: MessageRow, verb: string): void {
    if (row.direction !== 'out') throw new DomainError('conflict', `only messages the session sent can be ${verb}`, { direction: row.direction });
    if (row.revokedAt !== null) throw new DomainError('conflict', 'the message was deleted for everyone', { messageId: row.id });
    if (row.status === 'queued' || row.status === 'failed' || row.sentAt === null) {
      throw new DomainError('conflict', `the message is not sent (status ${row.status})`, { status: row.status });
    }
  }
}
