import type { ChatActionMap, ChatMessageMark, SessionActionHandlers } from '@app/contracts';
import type { MinimalMessage } from '@whiskeysockets/baileys';
import { messageKeyFor } from '../baileys-outbound';
import type { BaileysActionContext } from './context';

/**
 * Chat marks through Baileys (CONTRACT 12): read receipts with `readMessages`, and the account's chat state as
 * WhatsApp's app-state patches with `chatModify` — the patch for read and archive names the chat's last message
 * (`lastMessages`, which WhatsApp checks against what the phone has), taken by the API from the message log.
 */
type ChatHandlers = SessionActionHandlers<BaileysActionContext> extends infer H ? Pick<H, keyof ChatActionMap & keyof H> : never;

/** WhatsApp's `lastMessages`: the message's key and its time in seconds. */
export function lastMessagesOf(last: ChatMessageMark | null): MinimalMessage[] {
  return last ? [{ key: messageKeyFor(last), messageTimestamp: Math.floor(last.timestamp / 1000) }] : [];
}

export const CHAT_ACTIONS: ChatHandlers = {
  'chat.read': async ({ sock }, { chatJid, keys, last }) => {
    if (keys.length) await sock.readMessages(keys.map(messageKeyFor));
    if (last) await sock.chatModify({ markRead: true, lastMessages: lastMessagesOf(last) }, chatJid);
    return {};
  },
  'chat.archive': async ({ sock }, { chatJid, archived, last }) => {
    await sock.chatModify({ archive: archived, lastMessages: lastMessagesOf(last) }, chatJid);
    return {};
  },
  'chat.pin': async ({ sock }, { chatJid, pinned }) => {
    await sock.chatModify({ pin: pinned }, chatJid);
    return {};
  },
  'chat.mute': async ({ sock }, { chatJid, until }) => {
    // Baileys writes `mute` as the patch's muteEndTimestamp (ms); null unmutes
    await sock.chatModify({ mute: until }, chatJid);
    return {};
  },
};
