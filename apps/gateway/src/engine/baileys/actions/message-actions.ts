/**
 * CONTRACT 12's message actions and CONTRACT 13's call rejection on the Baileys engine: an edit and a delete for
 * everyone are messages Baileys builds itself (`sendMessage(jid, {edit: key, text})`, `sendMessage(jid, {delete: key})`,
 * a protocolMessage MESSAGE_EDIT / REVOKE), a rejection is Baileys' `rejectCall(callId, from)`. Also owns the memory of
 * ringing calls a rejection needs (WhatsApp addresses the reject to the caller; the API names only the call).
 */
import type { WASocket } from '@whiskeysockets/baileys';
import { DomainError, EDIT_WINDOW_MS, type MessageActionMap, type SessionActionHandlers } from '@app/contracts';
import { messageKeyFor } from '../baileys-outbound';
import type { BaileysActionContext } from './context';

/** Calls remembered per socket, so many that a ringing one is never forgotten (a call rings for a minute at most). */
const REMEMBERED_CALLS = 256;
const ringing = new WeakMap<WASocket, Map<string, string>>();

/**
 * Remembers the caller of every call the socket reports (`call` events, status `offer`), for `calls.reject`. Called
 * once per socket by the engine, beside its own listeners.
 */
export function watchCalls(sock: WASocket): void {
  const calls = new Map<string, string>();
  ringing.set(sock, calls);
  sock.ev.on('call', (events) => {
    for (const call of events) {
      if (call.status !== 'offer' || !call.id || !call.from) continue;
      calls.set(call.id, call.from);
      if (calls.size > REMEMBERED_CALLS) calls.delete(calls.keys().next().value as string);
    }
  });
}

export function callerOf(sock: WASocket, callId: string): string | null {
  return ringing.get(sock)?.get(callId) ?? null;
}

type MessageActionHandlers = Pick<SessionActionHandlers<BaileysActionContext>, keyof MessageActionMap & string>;

function requireOwn(key: { fromMe: boolean; waMessageId: string }): void {
  if (!key.fromMe) throw new DomainError('conflict', 'only messages the account sent can be changed', { waMessageId: key.waMessageId });
}

export const BAILEYS_MESSAGE_ACTIONS: MessageActionHandlers = {
  'messages.edit': async (ctx, { key, text, sentAt }) => {
    requireOwn(key);
    // WhatsApp drops an edit past its window without a word; say so instead
    if (Date.now() - sentAt > EDIT_WINDOW_MS) {
      throw new DomainError('conflict', 'the edit window of this message has passed', { sentAt, windowMs: EDIT_WINDOW_MS });
    }
    await ctx.sock.sendMessage(key.chatJid, { text, edit: messageKeyFor(key) });
    return { editedAt: Date.now() };
  },
  'messages.revoke': async (ctx, { key }) => {
    requireOwn(key);
    await ctx.sock.sendMessage(key.chatJid, { delete: messageKeyFor(key) });
    return { revokedAt: Date.now() };
  },
  'calls.reject': async (ctx, { callId, from }) => {
    const caller = from || callerOf(ctx.sock, callId);
    if (!caller) throw new DomainError('not_found', 'no ringing call with this id on this connection', { callId });
    await ctx.sock.rejectCall(callId, caller);
    return { rejected: true };
  },
};
