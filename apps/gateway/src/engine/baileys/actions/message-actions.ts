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
/** Per socket: callId → its caller, and whether it still rings (an end — reject, accept, timeout, terminate — stops it). */
const ringing = new WeakMap<WASocket, Map<string, { from: string; ended: boolean }>>();
const CALL_ENDS = new Set(['reject', 'accept', 'timeout', 'terminate']);

/**
 * Remembers the caller of every call the socket reports (`call` events, status `offer`) and when it ends, for
 * `calls.reject`. Called once per socket by the engine, beside its own listeners.
 */
export function watchCalls(sock: WASocket): void {
  const calls = new Map<string, { from: string; ended: boolean }>();
  ringing.set(sock, calls);
  sock.ev.on('call', (events) => {
    for (const call of events) {
      if (!call.id) continue;
      const known = calls.get(call.id);
      if (known && CALL_ENDS.has(call.status)) known.ended = true;
      if (call.status !== 'offer' || !call.from) continue;
      calls.set(call.id, { from: call.from, ended: false });
      if (calls.size > REMEMBERED_CALLS) calls.delete(calls.keys().next().value as string);
    }
  });
}

export function callerOf(sock: WASocket, callId: string): string | null {
  return ringing.get(sock)?.get(callId)?.from ?? null;
}

/** The server's refusal of a rejection (Baileys' Boom with WhatsApp's code in `data`) in the API's words; null otherwise. */
function refusalOf(err: unknown, callId: string): DomainError | null {
  const code = (err as { data?: unknown } | null)?.data;
  if (code === 404) return new DomainError('not_found', 'no call with this id was placed to the session', { callId });
  if (code === 409) return new DomainError('conflict', 'the call is no longer ringing', { callId });
  return null;
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
    const known = ringing.get(ctx.sock)?.get(callId);
    const caller = from || known?.from;
    if (!caller) throw new DomainError('not_found', 'no ringing call with this id on this connection', { callId });
    if (known?.ended) throw new DomainError('conflict', 'the call is no longer ringing', { callId });
    try {
      await ctx.sock.rejectCall(callId, caller);
    } catch (err) {
      throw refusalOf(err, callId) ?? err;
    }
    if (known) known.ended = true;
    return { rejected: true };
  },
};
