/**
 * How the simulated network plays CONTRACT 12's message actions and CONTRACT 13's calls: a device edits or deletes for
 * everyone a message it sent (kept on the sent message: `edits`, `revoked`), and rejects a ringing call (kept on the
 * call: `rejected`). Owns the calls contacts placed (`GET /sim/calls`) and the edit window.
 */
import { DomainError, EDIT_WINDOW_MS, type MessageActionMap, type SessionActionHandlers, type SimCall } from '@app/contracts';
import { randomBytes } from 'node:crypto';
import type { SimActionScope } from './scope';

/** The simulator's calls and the rules of edits (SimWorld.messages). */
export class SimMessageActions {
  /** WhatsApp's 15 minutes; `SIM_EDIT_WINDOW_MS` shortens it so a test can pass it */
  editWindowMs = EDIT_WINDOW_MS;
  private readonly calls: SimCall[] = [];

  /** A contact calls the device (`POST /sim/sessions/{id}/call`); it rings until the device rejects it. */
  placeCall(sessionId: string, from: string, isVideo: boolean): SimCall {
    const call: SimCall = { callId: randomBytes(16).toString('hex').toUpperCase(), sessionId, from, isVideo, at: Date.now(), rejected: null };
    this.calls.push(call);
    return call;
  }

  listCalls(sessionId?: string): SimCall[] {
    return this.calls.filter((c) => !sessionId || c.sessionId === sessionId).map((c) => ({ ...c }));
  }

  /** The device rejects a call placed to it; a call already rejected (or another device's) is refused. */
  rejectCall(sessionId: string, callId: string): SimCall {
    const call = this.calls.find((c) => c.sessionId === sessionId && c.callId === callId);
    if (!call) throw new DomainError('not_found', 'no call with this id was placed to the device', { callId });
    if (call.rejected !== null) throw new DomainError('conflict', 'the call is no longer ringing (already rejected)', { callId });
    call.rejected = Date.now();
    return call;
  }
}

/** The handlers' scope: the device, and the area's state in SimWorld. */
type MessagesScope = SimActionScope<{ readonly messages: SimMessageActions }>;

type MessageActionHandlers = Pick<SessionActionHandlers<MessagesScope>, keyof MessageActionMap & string>;

/** The network refuses what WhatsApp refuses: someone else's message, a deleted one, an edit past the window. */
function ownSent(scope: SimActionScope, waMessageId: string, chatJid: string) {
  const sent = scope.network.findSent(scope.sessionId, waMessageId);
  if (!sent || sent.to !== chatJid) throw new DomainError('conflict', 'the device did not send this message: only own messages can be changed', { waMessageId });
  if (sent.revoked !== null) throw new DomainError('conflict', 'the message was deleted for everyone', { waMessageId });
  return sent;
}

export const SIM_MESSAGE_ACTIONS: MessageActionHandlers = {
  'messages.edit': (scope, { key, text }) => {
    if (typeof text !== 'string' || text.trim() === '' || text.length > 65536) {
      throw new DomainError('validation_error', 'text must be a non-empty string', { text: 'must be a non-empty string' });
    }
    const sent = ownSent(scope, key?.waMessageId, key?.chatJid);
    if (sent.type !== 'text' && !(sent.media && ['image', 'video', 'document'].includes(sent.type))) {
      throw new DomainError('conflict', `a ${sent.type} message has no text to edit`, { type: sent.type });
    }
    const now = Date.now();
    if (now - sent.timestamp > scope.world.messages.editWindowMs) {
      throw new DomainError('conflict', 'the edit window of this message has passed', { sentAt: sent.timestamp, windowMs: scope.world.messages.editWindowMs });
    }
    sent.edits.push({ text, at: now });
    return { editedAt: now };
  },
  'messages.revoke': (scope, { key }) => {
    const sent = ownSent(scope, key?.waMessageId, key?.chatJid);
    sent.revoked = Date.now();
    return { revokedAt: sent.revoked };
  },
  'calls.reject': (scope, { callId }) => {
    if (typeof callId !== 'string' || callId === '') throw new DomainError('validation_error', 'callId must be a string', { callId: 'must be a string' });
    scope.world.messages.rejectCall(scope.sessionId, callId);
    return { rejected: true };
  },
};
