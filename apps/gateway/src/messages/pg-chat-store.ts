import type { ChatChanges } from '@app/contracts';
import { serviceSession, type ChatsRepository, type Tx } from '@app/database';
import type { HistoryChat } from '../engine/engine.interface';
import type { ChatStore } from './chat-events';

/**
 * The gateway's `ChatStore` on PostgreSQL (ChatsRepository). The session a port names is one this gateway holds a
 * lease on, so its id becomes a `ServiceSession` here, where it meets the method the API shares.
 */
export class PgChatStore implements ChatStore {
  constructor(private readonly chats: ChatsRepository) {}

  apply(organizationId: string, sessionId: string, facts: { jid: string } & ChatChanges, tx?: Tx) {
    return this.chats.apply(serviceSession(sessionId, organizationId), facts, tx);
  }
  applyHistory(organizationId: string, sessionId: string, chats: HistoryChat[], tx?: Tx) {
    return this.chats.applyHistory(organizationId, sessionId, chats, tx);
  }
}
