import type { MessageKeyRef, MessageView } from './messages';

/**
 * Chats (CONTRACT 12): the conversations of a session, their state on the account (archived, pinned, muted, unread) and
 * the session actions that change it. Each action entry is one operation the API asks of a connected session through
 * the `session.action` command (commands.ts) and each engine performs (EngineConnection.perform): see session-actions.ts.
 */

/** The state a chat has on the account (what the phone and every linked device show). */
export interface ChatState {
  archived: boolean;
  pinned: boolean;
  /** epoch ms until which notifications are muted; null: not muted (WhatsApp's "always" is a far future time) */
  mutedUntil: number | null;
}

/** `GET …/chats` item. */
export interface ChatView extends ChatState {
  jid: string;
  /** the contact's or group's name as the network told it; null when not known */
  name: string | null;
  isGroup: boolean;
  unreadCount: number;
  /** the newest message of the chat in the log, as `GET …/messages/{id}` shows it */
  lastMessage: MessageView | null;
  /** ids of the WhatsApp Business labels the chat carries (`GET …/labels` names them); [] on other accounts */
  labels: string[];
}

/** What changed in a chat (`chat.update` payload's `changes`): only the fields that changed. */
export type ChatChanges = Partial<ChatState & { unreadCount: number; name: string | null }>;

/** `chat.update`: a chat's state changed, through the API or on the network (the phone archived it, say). */
export interface ChatUpdatePayload {
  jid: string;
  changes: ChatChanges;
}

/** `history.synced`: one batch of the history WhatsApp sent on pairing was stored (counts of this batch). */
export interface HistorySyncedPayload {
  chats: number;
  messages: number;
}

/**
 * A message a chat mark refers to, as WhatsApp's app-state patches need it (Baileys' `lastMessages`): its key and when
 * it was sent. The API takes it from the message log.
 */
export interface ChatMessageMark extends MessageKeyRef {
  /** epoch ms */
  timestamp: number;
}

/** Session setting `syncHistory` (CONTRACT 12): what history to take from the phone on pairing. */
export const SYNC_HISTORY_MODES = ['none', 'recent', 'full'] as const;
export type SyncHistoryMode = (typeof SYNC_HISTORY_MODES)[number];

export interface ChatActionMap {
  /**
   * Marks the chat read up to `last`: read receipts for `keys` (the received messages being read, newest first) and the
   * account's read mark, as WhatsApp Web does.
   */
  'chat.read': { args: { chatJid: string; keys: MessageKeyRef[]; last: ChatMessageMark | null }; result: Record<string, never> };
  /** `last`: the chat's newest message (WhatsApp's archive patch names it) */
  'chat.archive': { args: { chatJid: string; archived: boolean; last: ChatMessageMark | null }; result: Record<string, never> };
  'chat.pin': { args: { chatJid: string; pinned: boolean }; result: Record<string, never> };
  /** `until`: epoch ms, null to unmute */
  'chat.mute': { args: { chatJid: string; until: number | null }; result: Record<string, never> };
}
