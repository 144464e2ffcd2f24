/**
 * The history the phone sends a newly linked device (CONTRACT 12 `syncHistory`), as WhatsApp sends it: each batch a
 * `HistorySync` protobuf (conversations with their messages), zlib-deflated, sent by the phone (the account's device 0)
 * in a `protocolMessage` of type HISTORY_SYNC_NOTIFICATION, which Baileys inflates (Utils/history.js). The first
 * batch is the INITIAL_BOOTSTRAP, the rest RECENT.
 */
import type { SimHistoryChat, SimHistoryMessage } from '@app/contracts';
import { deflateSync } from 'node:zlib';
import type { WaMessage } from './contact-messages';
import type { Baileys } from './wa-kit';

export interface HistoryBatch {
  chats: SimHistoryChat[];
  messages: SimHistoryMessage[];
}

type HistorySync = Parameters<Baileys['proto']['HistorySync']['encode']>[0];
type Conversation = NonNullable<HistorySync['conversations']>[number];

function conversationOf(chat: SimHistoryChat | undefined, jid: string): Conversation {
  return {
    id: jid,
    ...(chat?.name ? { name: chat.name } : {}),
    unreadCount: chat?.unreadCount ?? 0,
    archived: chat?.archived ?? false,
    // WhatsApp's pin is the time it was pinned (seconds); its mute end is a time
    pinned: chat?.pinned ? Math.floor(Date.now() / 1000) : 0,
    ...(chat?.mutedUntil ? { muteEndTime: chat.mutedUntil } : {}),
    messages: [],
  };
}

/**
 * One batch as a HistorySync: a conversation per chat of the batch and per chat its messages name (a later batch
 * repeats the chat's state as `known` has it, so Baileys' chat upsert keeps it), messages newest first.
 */
export function historySyncOf(baileys: Baileys, batch: HistoryBatch, known: ReadonlyMap<string, SimHistoryChat>, chunkOrder: number): HistorySync {
  const conversations = new Map<string, Conversation>();
  for (const chat of batch.chats) conversations.set(chat.jid, conversationOf(chat, chat.jid));
  const newestFirst = [...batch.messages].sort((a, b) => b.timestamp - a.timestamp);
  for (const m of newestFirst) {
    let conversation = conversations.get(m.chatJid);
    if (!conversation) conversations.set(m.chatJid, (conversation = conversationOf(known.get(m.chatJid), m.chatJid)));
    const group = m.chatJid.endsWith('@g.us');
    conversation.messages!.push({
      message: {
        key: { remoteJid: m.chatJid, fromMe: m.fromMe, id: m.id, ...(group && !m.fromMe ? { participant: m.from } : {}) },
        message: { conversation: m.text ?? '' },
        messageTimestamp: Math.floor(m.timestamp / 1000),
        ...(m.pushName ? { pushName: m.pushName } : {}),
      },
    });
  }
  const { INITIAL_BOOTSTRAP, RECENT } = baileys.proto.HistorySync.HistorySyncType;
  return {
    syncType: chunkOrder === 0 ? INITIAL_BOOTSTRAP : RECENT,
    conversations: [...conversations.values()],
    chunkOrder,
  };
}

/**
 * The phone's notification carrying the batch inline (`initialHistBootstrapInlinePayload`, deflated). WhatsApp may
 * instead upload a batch to its CDN, but Baileys downloads such a blob from `mmg.whatsapp.net` whatever host
 * `media_conn` named (a HistorySyncNotification has no url), so the front door always sends it inline.
 */
export function historyNotification(baileys: Baileys, sync: HistorySync): WaMessage {
  return {
    protocolMessage: {
      type: baileys.proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
      historySyncNotification: {
        initialHistBootstrapInlinePayload: deflateSync(baileys.proto.HistorySync.encode(sync).finish()),
        syncType: sync.syncType,
        chunkOrder: sync.chunkOrder,
      },
    },
  };
}
