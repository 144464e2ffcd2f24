import type { MessageKeyRef } from './messages';

/**
 * Session actions for edits and deletes of own messages, and for rejecting a ringing call (CONTRACT 12 and 13). Each
 * entry is one operation the API asks of a connected session through the `session.action` command (commands.ts) and
 * each engine performs (EngineConnection.perform): see session-actions.ts.
 */
export interface MessageActionMap {
  /**
   * Edits the text (or caption) of a message the account sent. `sentAt` (epoch ms) is when the network took it: an
   * engine refuses an edit past WhatsApp's edit window (`conflict`), and so does the network.
   */
  'messages.edit': { args: { key: MessageKeyRef; text: string; sentAt: number }; result: { editedAt: number } };
  /** Deletes a message the account sent, for everyone. */
  'messages.revoke': { args: { key: MessageKeyRef }; result: { revokedAt: number } };
  /**
   * Rejects a ringing incoming call. `from`: the caller, as `call.incoming` named it, when the asker knows it (the
   * gateway's `rejectCalls`); otherwise the engine remembers who is calling.
   */
  'calls.reject': { args: { callId: string; from?: string }; result: { rejected: true } };
}

/** WhatsApp lets a sender edit a message for 15 minutes after sending it. */
export const EDIT_WINDOW_MS = 15 * 60 * 1000;
