import type { Logger } from 'pino';
import type { CatalogEvent } from '@app/contracts';
import { newId, toMessageView } from '@app/database';
import type { EngineConnection, EngineEvent, InboundMessage } from '../engine/engine.interface';
import type { SessionEventSink, SessionRecords } from '../sessions/session-ports';
import { isGroupJid, MessageStore } from './message-store';
import type { OutboundSender } from './outbound-sender';

export type InboundEngineEvent = Extract<
  EngineEvent,
  { type: 'message' | 'receipt' | 'reaction' | 'poll-vote' | 'presence' | 'call' | 'group-update' | 'group-participants' }
>;

const INBOUND_TYPES: ReadonlySet<string> = new Set<InboundEngineEvent['type']>([
  'message', 'receipt', 'reaction', 'poll-vote', 'presence', 'call', 'group-update', 'group-participants',
]);

export const isInboundEvent = (e: EngineEvent): e is InboundEngineEvent => INBOUND_TYPES.has(e.type);

export interface InboundEventsDeps {
  sessionId: string;
  organizationId: string;
  store: MessageStore;
  records: SessionRecords;
  events: SessionEventSink;
  sender: Pick<OutboundSender, 'onReceipt'>;
  logger: Logger;
  clock?: () => number;
}

/**
 * Turns what the network tells a session into the message log and events (CONTRACT 10). Every inbound message is
 * stored once (unique session + waMessageId): a re-delivery stores nothing and publishes nothing.
 */
export class InboundEvents {
  private readonly clock: () => number;

  constructor(private readonly deps: InboundEventsDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  /** `conn` is the connection the event came from (read receipts go back on it). */
  async handle(event: InboundEngineEvent, conn: EngineConnection | null): Promise<void> {
    const { sessionId } = this.deps;
    switch (event.type) {
      case 'message':
        return this.message(event.message, conn);
      case 'receipt':
        return this.deps.sender.onReceipt(event.waMessageId, event.status);
      case 'reaction': {
        const messageId = (await this.deps.store.idsByWaIds(sessionId, [event.waMessageId])).get(event.waMessageId) ?? null;
        return this.publish({ event: 'message.reaction', payload: { messageId, waMessageId: event.waMessageId, chatJid: event.chatJid, from: event.from, emoji: event.emoji } });
      }
      case 'poll-vote': {
        const pollMessageId = (await this.deps.store.idsByWaIds(sessionId, [event.pollWaMessageId])).get(event.pollWaMessageId) ?? null;
        return this.publish({ event: 'poll.vote', payload: { pollMessageId, chatJid: event.chatJid, voter: event.voter, selectedOptions: event.selectedOptions } });
      }
      case 'presence':
        return this.publish({ event: 'presence.update', payload: { chatJid: event.chatJid, jid: event.jid, presence: event.presence } });
      case 'call':
        return this.publish({ event: 'call.incoming', payload: { callId: event.callId, from: event.from, isVideo: event.isVideo, isGroup: event.isGroup } });
      case 'group-update':
        await this.deps.records.updateGroup(sessionId, event.groupJid, event.changes, event.network);
        // a refresh that only brought the network form is no news to announce
        if (!Object.keys(event.changes).length) return;
        return this.publish({ event: 'group.update', payload: { groupJid: event.groupJid, changes: event.changes } });
      case 'group-participants': {
        const { records } = this.deps;
        if (event.action === 'add') await records.addGroupParticipants(sessionId, event.groupJid, event.participants, event.network);
        if (event.action === 'remove') await records.removeGroupParticipants(sessionId, event.groupJid, event.participants, event.network);
        if (event.action === 'promote' || event.action === 'demote') {
          await records.setGroupAdmins(sessionId, event.groupJid, event.participants, event.action === 'promote' ? 'admin' : null, event.network);
        }
        return this.publish({ event: 'group.participants', payload: { groupJid: event.groupJid, action: event.action, participants: event.participants } });
      }
    }
  }

  /**
   * Messages the account sent from its phone (`fromMe`) are logged as `out`/`sent` without an event: they belong in
   * the conversation's log, but nobody asked the API to send them. Our own sends echoing back collide with their row
   * (same waMessageId) and store nothing.
   */
  private async message(m: InboundMessage, conn: EngineConnection | null): Promise<void> {
    const { store, sessionId, organizationId } = this.deps;
    const quotedMessageId = m.quotedWaMessageId ? ((await store.idsByWaIds(sessionId, [m.quotedWaMessageId])).get(m.quotedWaMessageId) ?? null) : null;
    const media = m.media ? { mimetype: m.media.mimetype, size: m.media.size, filename: m.media.filename, caption: m.media.caption } : null;
    // stored and announced together: a crash between the two would otherwise drop the event for good (the
    // network's re-delivery finds the row and publishes nothing)
    const row = await this.deps.events.transact(async (tx, publish) => {
      const stored = await store.insert(
        {
          id: newId('msg'),
          organizationId,
          sessionId,
          waMessageId: m.id,
          direction: m.fromMe ? 'out' : 'in',
          chatJid: m.chatJid,
          from: m.from,
          type: m.type ?? 'text',
          text: m.text,
          media,
          mediaRef: m.media?.ref ?? null,
          location: m.location ?? null,
          contact: m.contact ?? null,
          poll: m.poll ?? null,
          quotedMessageId,
          quotedWaMessageId: m.quotedWaMessageId ?? null,
          mentions: m.mentions ?? [],
          status: m.fromMe ? 'sent' : 'received',
          raw: m.raw ?? null,
          createdAt: this.clock(),
          sentAt: m.fromMe ? m.timestamp : null,
        },
        tx,
      );
      if (stored && !m.fromMe) publish({ event: 'message.received', organizationId, sessionId, payload: { message: toMessageView(stored) } });
      return stored;
    });
    if (!row || m.fromMe) return;
    if (conn && (await this.deps.records.find(sessionId))?.autoRead) {
      const key = { waMessageId: m.id, chatJid: m.chatJid, fromMe: false, participant: isGroupJid(m.chatJid) ? m.from : null };
      await conn.markRead([key]).catch((err) => this.deps.logger.warn({ err: String(err) }, 'marking a message read failed'));
    }
  }

  private publish(named: CatalogEvent): Promise<void> {
    return this.deps.events
      .publish({ ...named, organizationId: this.deps.organizationId, sessionId: this.deps.sessionId })
      .then(() => undefined);
  }
}
