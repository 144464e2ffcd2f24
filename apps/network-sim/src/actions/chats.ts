import { randomBytes } from 'node:crypto';
import {
  CHAT_JID_PATTERN,
  type ChatActionMap,
  type ChatChanges,
  DomainError,
  type MessageKeyRef,
  normalizeChatJid,
  type SessionActionHandlers,
  type SimAccount,
  type SimChatChange,
  type SimHistoryChat,
  type SimHistoryMessage,
  type SimNetworkEvent,
} from '@app/contracts';
import type { Delivery, SimActionScope } from './scope';

/**
 * Chats on the simulated network (CONTRACT 12/13): each device's chat state as the account has it (archived, pinned,
 * muted; a chat's business labels are the account's, kept in actions/account-extras.ts), the read marks a device sends (into its presence log), the phone
 * changing a chat (`POST /sim/sessions/{id}/chat`), and the history the phone sends a newly paired device
 * (`POST /sim/sessions/{id}/scan {history}`), played in batches, each after the device acknowledged the previous one.
 */

/** One chat's state on an account, as `GET /sim/sessions/{id}/account` shows it under `chats`. */
export interface SimChatState {
  archived: boolean;
  pinned: boolean;
  mutedUntil: number | null;
}

/** How many messages one history event carries. */
export const SIM_HISTORY_BATCH = 100;
const MAX_HISTORY_CHATS = 2000;
const MAX_HISTORY_MESSAGES = 20000;

type Body = Record<string, unknown>;

const invalid = (field: string, message: string) => new DomainError('validation_error', `${field} ${message}`, { [field]: message });

function chatJid(field: string, value: unknown): string {
  const jid = typeof value === 'string' ? normalizeChatJid(value) : null;
  if (!jid || !CHAT_JID_PATTERN.test(jid)) throw invalid(field, 'must be a chat jid (<digits>@s.whatsapp.net, <digits>@lid, …@g.us) or a phone number');
  return jid;
}

function optionalBoolean(field: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalid(field, 'must be a boolean');
  return value;
}

function optionalTime(field: string, value: unknown): number | null | undefined {
  if (value === undefined || value === null) return value as undefined | null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw invalid(field, 'must be epoch ms or null');
  return value;
}

function array(field: string, value: unknown, max: number): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid(field, 'must be an array');
  if (value.length > max) throw invalid(field, `must have at most ${max} items`);
  return value;
}

function object(field: string, value: unknown): Body {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(field, 'must be an object');
  return value as Body;
}

/** The history a scan plays, validated (nothing is paired when it is not valid). */
export interface SimHistoryInput {
  chats: Array<Omit<SimHistoryChat, 'name'> & { name: string | null }>;
  messages: Array<{ chatJid: string; from: string | null; text: string; fromMe: boolean; timestamp: number | null }>;
}

/**
 * `history: {chats: [{jid, name?, unreadCount?, archived?, pinned?, mutedUntil?}], messages: [{chatJid, text, from?,
 * fromMe?, timestamp?}]}`. A message's `from` defaults to its chat (a group message needs it); its time to one second
 * apart, oldest first, ending now.
 */
export function parseSimHistory(value: unknown): SimHistoryInput {
  const body = object('history', value);
  const chats = array('history.chats', body.chats, MAX_HISTORY_CHATS).map((raw, i) => {
    const c = object(`history.chats[${i}]`, raw);
    const unread = c.unreadCount ?? 0;
    if (typeof unread !== 'number' || !Number.isInteger(unread) || unread < 0) throw invalid(`history.chats[${i}].unreadCount`, 'must be a non-negative integer');
    if (c.name !== undefined && c.name !== null && typeof c.name !== 'string') throw invalid(`history.chats[${i}].name`, 'must be a string');
    return {
      jid: chatJid(`history.chats[${i}].jid`, c.jid),
      name: (c.name as string | undefined) ?? null,
      unreadCount: unread,
      archived: optionalBoolean(`history.chats[${i}].archived`, c.archived) ?? false,
      pinned: optionalBoolean(`history.chats[${i}].pinned`, c.pinned) ?? false,
      mutedUntil: optionalTime(`history.chats[${i}].mutedUntil`, c.mutedUntil) ?? null,
    };
  });
  const messages = array('history.messages', body.messages, MAX_HISTORY_MESSAGES).map((raw, i) => {
    const m = object(`history.messages[${i}]`, raw);
    const jid = chatJid(`history.messages[${i}].chatJid`, m.chatJid);
    if (typeof m.text !== 'string' || m.text === '' || m.text.length > 4096) throw invalid(`history.messages[${i}].text`, 'must be 1..4096 characters');
    const fromMe = optionalBoolean(`history.messages[${i}].fromMe`, m.fromMe) ?? false;
    const from = m.from === undefined ? null : chatJid(`history.messages[${i}].from`, m.from);
    if (!fromMe && !from && jid.endsWith('@g.us')) throw invalid(`history.messages[${i}].from`, 'is required for a group message');
    return { chatJid: jid, from, text: m.text, fromMe, timestamp: optionalTime(`history.messages[${i}].timestamp`, m.timestamp) ?? null };
  });
  return { chats, messages };
}

/** `POST /sim/sessions/{id}/chat {jid, archived?, pinned?, mutedUntil?, read?}`: what the phone changed. */
export function parsePhoneChatChange(body: Body): SimChatChange {
  const change: SimChatChange = { jid: chatJid('jid', body.jid) };
  const archived = optionalBoolean('archived', body.archived);
  const pinned = optionalBoolean('pinned', body.pinned);
  const mutedUntil = optionalTime('mutedUntil', body.mutedUntil);
  const read = optionalBoolean('read', body.read);
  if (archived !== undefined) change.archived = archived;
  if (pinned !== undefined) change.pinned = pinned;
  if (mutedUntil !== undefined) change.mutedUntil = mutedUntil;
  if (read) change.unreadCount = 0;
  if (Object.keys(change).length === 1) throw invalid('body', 'must change archived, pinned, mutedUntil or read');
  return change;
}

/** Every device's chat state, by session id then chat jid. */
export class SimChats {
  private readonly bySession = new Map<string, Map<string, SimChatState>>();
  /** history batches waiting for the device to acknowledge the one in flight, per session */
  private readonly historyQueues = new Map<string, { rest: SimNetworkEvent[]; deliver: (event: SimNetworkEvent) => Delivery }>();

  private chatsOf(sessionId: string): Map<string, SimChatState> {
    let chats = this.bySession.get(sessionId);
    if (!chats) this.bySession.set(sessionId, (chats = new Map()));
    return chats;
  }

  /** A chat's state (a chat nobody changed: not archived, not pinned, not muted). */
  state(sessionId: string, jid: string): SimChatState {
    const chats = this.chatsOf(sessionId);
    let chat = chats.get(jid);
    if (!chat) chats.set(jid, (chat = { archived: false, pinned: false, mutedUntil: null }));
    return chat;
  }

  /** Applies a change and answers what really changed. */
  change(sessionId: string, jid: string, patch: ChatChanges): ChatChanges {
    const chat = this.state(sessionId, jid);
    const changed: ChatChanges = {};
    if (patch.archived !== undefined && patch.archived !== chat.archived) chat.archived = changed.archived = patch.archived;
    if (patch.pinned !== undefined && patch.pinned !== chat.pinned) chat.pinned = changed.pinned = patch.pinned;
    if (patch.mutedUntil !== undefined && patch.mutedUntil !== chat.mutedUntil) chat.mutedUntil = changed.mutedUntil = patch.mutedUntil;
    return changed;
  }

  /** The `chats` part of `GET /sim/sessions/{id}/account`: every chat whose state the account set. */
  account(sessionId: string): Record<string, SimChatState> {
    const out: Record<string, SimChatState> = {};
    for (const [jid, chat] of this.bySession.get(sessionId) ?? []) out[jid] = { ...chat };
    return out;
  }

  /**
   * Plays a history sync to a newly paired device: the phone's chat state is the account's, and the chats and messages
   * go out in batches of SIM_HISTORY_BATCH messages, the next one only once the device acknowledged the one before
   * (`acked`), so a device never holds more than one batch it has not stored.
   */
  playHistory(account: SimAccount, sessionId: string, input: SimHistoryInput, deliver: (event: SimNetworkEvent) => Delivery): { chats: number; messages: number; batches: number } {
    for (const c of input.chats) this.change(sessionId, c.jid, c);
    const n = input.messages.length;
    const now = Date.now();
    const messages: SimHistoryMessage[] = input.messages.map((m, i) => ({
      id: `3EB0${randomBytes(8).toString('hex').toUpperCase()}`,
      from: m.fromMe ? account.jid : (m.from ?? m.chatJid),
      chatJid: m.chatJid,
      type: 'text',
      text: m.text,
      media: null,
      location: null,
      contact: null,
      quotedWaMessageId: null,
      mentions: [],
      timestamp: m.timestamp ?? now - (n - i) * 1000,
      fromMe: m.fromMe,
    }));
    const batches: SimNetworkEvent[] = [];
    for (let i = 0; i < messages.length || (i === 0 && input.chats.length > 0); i += SIM_HISTORY_BATCH) {
      batches.push({ type: 'history', chats: i === 0 ? input.chats : [], messages: messages.slice(i, i + SIM_HISTORY_BATCH) });
    }
    const [first, ...rest] = batches;
    if (first) {
      this.historyQueues.set(sessionId, { rest, deliver });
      deliver(first);
    }
    return { chats: input.chats.length, messages: n, batches: batches.length };
  }

  /** The device acknowledged a network event: after a history batch, the next one goes out. */
  acked(sessionId: string, event: SimNetworkEvent | undefined): void {
    if (event?.type !== 'history') return;
    const queue = this.historyQueues.get(sessionId);
    const next = queue?.rest.shift();
    if (!queue || !next) {
      this.historyQueues.delete(sessionId);
      return;
    }
    queue.deliver(next);
  }

  /** A fresh pairing (or an unlink) forgets what was left of an earlier history. */
  forgetHistory(sessionId: string): void {
    this.historyQueues.delete(sessionId);
  }
}

function chatArg(args: { chatJid?: unknown }): string {
  return chatJid('chatJid', args.chatJid);
}

/** The handlers' scope: the device, and the area's state in SimWorld. */
type ChatsScope = SimActionScope<{ readonly chats: SimChats }>;

type ChatHandlers = SessionActionHandlers<ChatsScope> extends infer H ? Pick<H, keyof ChatActionMap & keyof H> : never;

/** The device's chat marks: the account's state changes, read receipts go to the presence log. */
export const SIM_CHAT_ACTIONS: ChatHandlers = {
  'chat.read': (scope, args) => {
    const jid = chatArg(args);
    const at = Date.now();
    for (const key of (Array.isArray(args.keys) ? args.keys : []) as MessageKeyRef[]) {
      scope.log({ type: 'read', chatJid: jid, waMessageId: key.waMessageId, participant: key.participant ?? null, at });
    }
    return {};
  },
  'chat.archive': (scope, args) => {
    scope.world.chats.change(scope.sessionId, chatArg(args), { archived: Boolean(args.archived) });
    return {};
  },
  'chat.pin': (scope, args) => {
    scope.world.chats.change(scope.sessionId, chatArg(args), { pinned: Boolean(args.pinned) });
    return {};
  },
  'chat.mute': (scope, args) => {
    const until = optionalTime('until', args.until) ?? null;
    scope.world.chats.change(scope.sessionId, chatArg(args), { mutedUntil: until });
    return {};
  },
};

/**
 * `POST /sim/sessions/{id}/chat`: the phone archives, pins, mutes or reads a chat; the account's state changes and the
 * device is told (`chat-update`), as WhatsApp syncs app state to linked devices.
 */
export function phoneChatChange(
  network: { world: { chats: SimChats }; deliverToPaired(sessionId: string, event: SimNetworkEvent): Delivery },
  sessionId: string,
  body: Body,
): { changes: SimChatChange } & Delivery {
  const change = parsePhoneChatChange(body);
  const current = network.world.chats.state(sessionId, change.jid);
  const applied: ChatChanges = {};
  for (const field of ['archived', 'pinned', 'mutedUntil'] as const) {
    if (change[field] !== undefined && change[field] !== current[field]) (applied as Record<string, unknown>)[field] = change[field];
  }
  const changes: SimChatChange = { jid: change.jid, ...applied, ...(change.unreadCount === 0 ? { unreadCount: 0 } : {}) };
  // told first: a device that is not paired (404, 409) leaves the account's state as it was
  const delivery = network.deliverToPaired(sessionId, { type: 'chat-update', chats: [changes] });
  network.world.chats.change(sessionId, change.jid, change);
  return { changes, ...delivery };
}
