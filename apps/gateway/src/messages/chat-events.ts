import type { Logger } from 'pino';
import type { ChatChanges, SyncHistoryMode } from '@app/contracts';
import { newIdAt } from '@app/database';
import type { EngineEvent, HistoryChat, InboundMessage } from '../engine/engine.interface';
import type { SessionEventSink, StoreTx } from '../store-ports';
import { inboundMessageRow } from './inbound-row';
import type { MessageStore, NewMessage } from './message-store';

/**
 * The part of `chats` (ChatsRepository through PgChatStore, PostgreSQL) a gateway uses. A message's chat is kept
 * current by the message's own insert (MessageStore.insert); what is here is the chat state the network reports and a
 * history sync's chats.
 */
export interface ChatStore {
  /** applies what is known of a chat; answers the fields that really changed (empty: nothing did) */
  apply(organizationId: string, sessionId: string, facts: { jid: string } & ChatChanges, tx?: StoreTx): Promise<{ changes: ChatChanges }>;
  /** the chats of one history batch, as the phone sent them; answers how many were stored */
  applyHistory(organizationId: string, sessionId: string, chats: HistoryChat[], tx?: StoreTx): Promise<number>;
}

export interface ChatEventsDeps {
  sessionId: string;
  organizationId: string;
  store: MessageStore;
  chats: ChatStore;
  events: SessionEventSink;
  logger: Logger;
  clock?: () => number;
}

/**
 * Chats as the network reports them (CONTRACT 12): a chat's state changed on another device of the account (the
 * phone archived, pinned, muted or read it) — stored, and `chat.update` announced in the same transaction when
 * something really changed; and the history the phone sends on pairing, stored batch by batch, each batch in one
 * transaction with its one `history.synced` (no `message.received` per message, which stays for live messages).
 */
export class ChatEvents {
  private readonly clock: () => number;

  constructor(private readonly deps: ChatEventsDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  async update(event: Extract<EngineEvent, { type: 'chat-update' }>): Promise<void> {
    const { chats, sessionId, organizationId } = this.deps;
    await this.deps.events.transact(async (tx, publish) => {
      for (const facts of event.chats) {
        const { changes } = await chats.apply(organizationId, sessionId, facts, tx);
        if (Object.keys(changes).length) publish({ event: 'chat.update', organizationId, sessionId, payload: { jid: facts.jid, changes } });
      }
    });
  }

  /**
   * One history batch: its chats and messages in one transaction with the `history.synced` announcing it. A message
   * already stored (a re-delivered batch, a live message that came first) stores nothing; the counts are what this
   * batch stored. With `syncHistory` `none` the batch is dropped (taken, so the network does not send it again).
   */
  async history(event: Extract<EngineEvent, { type: 'history' }>, mode: SyncHistoryMode): Promise<{ chats: number; messages: number }> {
    if (mode === 'none') return { chats: 0, messages: 0 };
    const { store, chats, sessionId, organizationId } = this.deps;
    const stored = await this.deps.events.transact(async (tx, publish) => {
      const chatCount = await chats.applyHistory(organizationId, sessionId, event.chats, tx);
      let messages = 0;
      for (const m of event.messages) if (await store.insert(this.historyMessage(m), tx)) messages += 1;
      publish({ event: 'history.synced', organizationId, sessionId, payload: { chats: chatCount, messages } });
      return { chats: chatCount, messages };
    });
    this.deps.logger.info({ ...stored, received: event.messages.length }, 'history batch stored');
    return stored;
  }

  private historyMessage(m: InboundMessage): NewMessage {
    // sorted where it happened (ids are time-ordered), not where it was stored
    const at = Math.min(m.timestamp || this.clock(), this.clock());
    const { sessionId, organizationId } = this.deps;
    return { ...inboundMessageRow(m, { organizationId, sessionId, id: newIdAt('msg', at), createdAt: at, sentAt: m.fromMe ? at : null }), fromHistory: true };
  }
}
