import type { BaileysEventMap, Chat, ChatUpdate, WAMessage } from '@whiskeysockets/baileys';
import type { EngineChatUpdate, EngineEvent, HistoryChat, InboundMessage } from '../engine.interface';
import { type EncodeMessage, inboundMessageFrom, toLid, toUserJid } from './baileys-mapping';

/**
 * Chats as Baileys reports them (chats.upsert, chats.update, messaging-history.set), mapped onto the engine seam's
 * `chat-update` and `history` events. Pure functions: the connection (baileys.engine.ts) wires them to the socket.
 */

/** How many messages one `history` event carries at most: a batch is stored in one transaction, bounded in memory. */
export const HISTORY_BATCH_MESSAGES = 200;

type Numeric = number | string | { toNumber(): number } | null | undefined;

function toNumber(value: Numeric): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === 'object' ? value.toNumber() : Number(value);
  return Number.isFinite(n) ? n : null;
}

/** WhatsApp gives some times in seconds and some in ms; anything before 2001 in ms is read as seconds. */
export function toEpochMs(value: Numeric): number | null {
  const n = toNumber(value);
  if (n === null || n <= 0) return null;
  return n < 1e12 ? n * 1000 : n;
}

/** Chats are kept by phone-number JID where the network tells one (as messages are), else as named. */
function chatJidOf(chat: Pick<Chat, 'id' | 'pnJid'>): string | null {
  const id = chat.id;
  if (!id) return null;
  if (id.endsWith('@g.us')) return id;
  return toUserJid(id) ?? toUserJid(chat.pnJid) ?? toLid(id);
}

/**
 * One chat update or upsert: only the fields Baileys set. `unreadCount` -1 is WhatsApp's "marked unread" (kept as 1);
 * `pinned` is a pin time or null; `muteEndTime` a time or null (unmuted).
 */
export function chatUpdateFrom(update: ChatUpdate | Chat): EngineChatUpdate | null {
  const jid = chatJidOf(update);
  if (!jid) return null;
  const out: EngineChatUpdate = { jid };
  if ('archived' in update && update.archived !== undefined && update.archived !== null) out.archived = Boolean(update.archived);
  if ('pinned' in update && update.pinned !== undefined) out.pinned = Boolean(toNumber(update.pinned as Numeric));
  if ('muteEndTime' in update && update.muteEndTime !== undefined) out.mutedUntil = toEpochMs(update.muteEndTime as Numeric);
  if ('unreadCount' in update && update.unreadCount !== undefined && update.unreadCount !== null) out.unreadCount = update.unreadCount < 0 ? 1 : update.unreadCount;
  const name = update.name ?? update.displayName;
  if (name) out.name = name;
  return Object.keys(out).length > 1 ? out : null;
}

export function chatUpdatesFrom(updates: Array<ChatUpdate | Chat>): EngineChatUpdate[] {
  return updates.map(chatUpdateFrom).filter((u): u is EngineChatUpdate => u !== null);
}

function historyChatFrom(chat: Chat): HistoryChat | null {
  const jid = chatJidOf(chat);
  if (!jid) return null;
  return {
    jid,
    name: chat.name ?? chat.displayName ?? null,
    unreadCount: Math.max(0, toNumber(chat.unreadCount as Numeric) ?? 0),
    archived: Boolean(chat.archived),
    pinned: Boolean(toNumber(chat.pinned as Numeric)),
    mutedUntil: toEpochMs(chat.muteEndTime as Numeric),
  };
}

/**
 * One `messaging-history.set` as `history` events of at most HISTORY_BATCH_MESSAGES messages each (the chats ride on
 * the first). Messages that are not user-visible (protocol messages, stubs) are left out, as for live messages.
 */
export function historyBatchesFrom(
  set: Pick<BaileysEventMap['messaging-history.set'], 'chats' | 'messages'>,
  ownJid: string | null,
  encode: EncodeMessage,
  batchSize = HISTORY_BATCH_MESSAGES,
): Array<Extract<EngineEvent, { type: 'history' }>> {
  const chats = set.chats.map(historyChatFrom).filter((c): c is HistoryChat => c !== null);
  const messages = set.messages
    .map((m: WAMessage) => inboundMessageFrom(m, ownJid, encode))
    .filter((m): m is InboundMessage => m !== null && m.id !== '');
  const batches: Array<Extract<EngineEvent, { type: 'history' }>> = [];
  for (let i = 0; i < messages.length || (i === 0 && chats.length > 0); i += batchSize) {
    batches.push({ type: 'history', chats: i === 0 ? chats : [], messages: messages.slice(i, i + batchSize) });
  }
  return batches;
}
