import { Injectable } from '@nestjs/common';
import { type ChatChanges, type ChatMessageMark, type ChatView, DomainError, type MessageKeyRef, type MessageView, normalizeChatJid, CHAT_JID_PATTERN } from '@app/contracts';
import { ChatRow, ChatsRepository, decodeChatCursor, MessageRow, MessagesRepository, OwnedSession, toMessageView } from '@app/database';
import { EventPublisher } from '@app/events';
import { Page, pageLimit } from '../common/pagination';
import { SessionActions } from '../sessions/session-actions';
import type { ChatMessagesQueryDto, ChatQueryDto, MuteChatDto, ReadChatDto } from './dto/chat.dto';

/** Read receipts one `:read` sends at most (the newest received messages up to the one read). */
export const MAX_READ_RECEIPTS = 50;

const invalid = (field: string, message: string) => new DomainError('validation_error', 'request is invalid', { fields: { [field]: [message] } });

/** What an action changes on the chat, as the API asks it. */
type ChatMark = { kind: 'archive'; archived: boolean } | { kind: 'pin'; pinned: boolean } | { kind: 'mute'; until: number | null };

/**
 * Chats (CONTRACT 12): the session's conversations from the `chats` table, their messages from the message log, and
 * the marks (read, archive, pin, mute) done on the network through SessionActions. What the network accepted is
 * stored here with the `chat.update` announcing it, in one transaction.
 */
@Injectable()
export class ChatsService {
  constructor(
    private readonly actions: SessionActions,
    private readonly chats: ChatsRepository,
    private readonly messages: MessagesRepository,
    private readonly events: EventPublisher,
  ) {}

  async list(organizationId: string, sessionId: string, query: ChatQueryDto): Promise<Page<ChatView>> {
    const session = await this.actions.session(organizationId, sessionId);
    const cursor = query.cursor === undefined ? undefined : decodeChatCursor(query.cursor);
    if (cursor === null) throw invalid('cursor', 'cursor is not a nextCursor of this list');
    const page = await this.chats.page(session, pageLimit(query), cursor);
    const last = await this.lastMessages(session, page.rows);
    return { data: page.rows.map((row) => toChatView(row, last)), nextCursor: page.nextCursor };
  }

  /** The chat's messages: the message log's page query for this chat, newest first. */
  async messagesOf(organizationId: string, sessionId: string, rawJid: string, query: ChatMessagesQueryDto): Promise<Page<MessageView>> {
    const session = await this.actions.session(organizationId, sessionId);
    const jid = chatJid(rawJid);
    const limit = pageLimit(query);
    const rows = await this.messages.page(session, { chatJid: jid, direction: query.direction, status: query.status }, limit + 1, query.cursor);
    const more = rows.length > limit;
    const slice = more ? rows.slice(0, limit) : rows;
    return { data: slice.map(toMessageView), nextCursor: more ? slice[slice.length - 1].id : null };
  }

  /**
   * Marks the chat read up to a message (default: its newest): read receipts for the received messages up to it (the
   * newest MAX_READ_RECEIPTS), and the account's read mark; the chat's unread count is then 0.
   */
  async read(organizationId: string, sessionId: string, rawJid: string, body: ReadChatDto): Promise<ChatView> {
    const found = await this.actions.session(organizationId, sessionId);
    const jid = chatJid(rawJid);
    let target: MessageRow | null = null;
    if (body.messageId !== undefined) {
      target = await this.messages.findInSession(found, body.messageId);
      if (!target) throw new DomainError('not_found', 'messageId is not a message of this session', { messageId: body.messageId });
      if (target.chatJid !== jid) throw invalid('messageId', `the message is in chat ${target.chatJid}, not in ${jid}`);
    }
    const session = await this.actions.connected(organizationId, sessionId);
    target ??= (await this.messages.page(session, { chatJid: jid }, 1))[0] ?? null;
    const received = await this.receivedUpTo(session, jid, target);
    const keys: MessageKeyRef[] = received.map((m) => keyOf(m));
    await this.actions.performOn(session, 'chat.read', { chatJid: jid, keys, last: target ? markOf(target) : null });
    return this.store(session, jid, { unreadCount: 0 });
  }

  async mark(organizationId: string, sessionId: string, rawJid: string, mark: ChatMark): Promise<ChatView> {
    await this.actions.session(organizationId, sessionId);
    const jid = chatJid(rawJid);
    const session = await this.actions.connected(organizationId, sessionId);
    switch (mark.kind) {
      case 'archive': {
        const newest = (await this.messages.page(session, { chatJid: jid }, 1))[0] ?? null;
        await this.actions.performOn(session, 'chat.archive', { chatJid: jid, archived: mark.archived, last: newest ? markOf(newest) : null });
        return this.store(session, jid, { archived: mark.archived });
      }
      case 'pin':
        await this.actions.performOn(session, 'chat.pin', { chatJid: jid, pinned: mark.pinned });
        return this.store(session, jid, { pinned: mark.pinned });
      case 'mute':
        await this.actions.performOn(session, 'chat.mute', { chatJid: jid, until: mark.until });
        return this.store(session, jid, { mutedUntil: mark.until });
    }
  }

  /** `:mute {until}`: a time in the future (422 naming `until` otherwise). */
  mute(organizationId: string, sessionId: string, rawJid: string, body: MuteChatDto): Promise<ChatView> {
    if (body.until <= Date.now()) return Promise.reject(invalid('until', 'until must be a time in the future (epoch ms)'));
    return this.mark(organizationId, sessionId, rawJid, { kind: 'mute', until: body.until });
  }

  /** What the network accepted, stored with its `chat.update` (only when something changed). */
  private async store(session: OwnedSession, jid: string, changes: ChatChanges): Promise<ChatView> {
    const row = await this.events.transact(async (tx, publish) => {
      const applied = await this.chats.apply(session, { jid, ...changes }, tx);
      if (Object.keys(applied.changes).length) {
        publish({ event: 'chat.update', organizationId: session.organizationId, sessionId: session.id, payload: { jid, changes: applied.changes } });
      }
      return applied.row;
    });
    return toChatView(row, await this.lastMessages(session, [row]));
  }

  /** The received messages of the chat up to `target` (it included), newest first, at most MAX_READ_RECEIPTS. */
  private async receivedUpTo(session: OwnedSession, jid: string, target: MessageRow | null): Promise<MessageRow[]> {
    if (!target) return [];
    const older = await this.messages.page(session, { chatJid: jid, direction: 'in' }, MAX_READ_RECEIPTS, target.id);
    const all = target.direction === 'in' ? [target, ...older] : older;
    return all.slice(0, MAX_READ_RECEIPTS);
  }

  private async lastMessages(session: OwnedSession, rows: ChatRow[]): Promise<Map<string, MessageView>> {
    const ids = rows.map((r) => r.lastMessageId).filter((id): id is string => id !== null);
    return new Map((await this.messages.findByIds(session, ids)).map((m) => [m.id, toMessageView(m)]));
  }
}

function chatJid(raw: string): string {
  const jid = normalizeChatJid(raw);
  if (!jid || !CHAT_JID_PATTERN.test(jid)) throw invalid('jid', 'jid must be a chat JID (<digits>@s.whatsapp.net, <digits>@lid, …@g.us) or a phone number');
  return jid;
}

function keyOf(m: MessageRow): MessageKeyRef {
  return { waMessageId: m.waMessageId, chatJid: m.chatJid, fromMe: m.direction === 'out', participant: m.direction === 'in' && m.chatJid.endsWith('@g.us') ? m.from : null };
}

function markOf(m: MessageRow): ChatMessageMark {
  return { ...keyOf(m), timestamp: m.sentAt ?? m.createdAt };
}

function toChatView(row: ChatRow, last: Map<string, MessageView>): ChatView {
  return {
    jid: row.jid,
    name: row.displayName,
    isGroup: row.isGroup,
    unreadCount: row.unreadCount,
    archived: row.archived,
    pinned: row.pinned,
    mutedUntil: row.mutedUntil,
    lastMessage: row.lastMessageId ? (last.get(row.lastMessageId) ?? null) : null,
    labels: row.labels,
  };
}
