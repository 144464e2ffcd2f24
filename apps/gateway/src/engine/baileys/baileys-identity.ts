import type { WAMessageKey } from '@whiskeysockets/baileys';
import type { MessageKeyRef, OutboundMessage } from '@app/contracts';
import type { EngineEvent, EngineLookups } from '../engine.interface';
import { chatOf, toLid, toUserJid } from './baileys-mapping';

/**
 * One identity per contact (issue 19 item 7). WhatsApp names a contact by its LID (`<digits>@lid`) in more and more
 * stanzas, with the phone-number form as `remoteJidAlt`/`participantAlt` when it has it, and sometimes without it.
 * Baileys keeps every LID↔number pair it learns (those alternatives, `lid-mapping.update`, device queries) in its LID
 * mapping store (`sock.signalRepository.lidMapping`, stored in the auth state's `lid-mapping` keys). The engine asks
 * that store for the number of every LID an event still names as a person, so a contact is reported by its number in
 * every chat; a LID the store does not know stays a LID (never guessed).
 */

/** Baileys' LIDMappingStore lookup: pairs `{lid, pn}` with the pn carrying the LID's device part, or null. */
export type PnsForLids = (lids: string[]) => Promise<Array<{ lid: string; pn: string }> | null>;

/** The person-naming fields of an event (chat, author, participants): what resolution rewrites. Never a group's network form. */
function jidsOf(event: EngineEvent): Array<string | null | undefined> {
  switch (event.type) {
    case 'message':
      return [event.message.from, event.message.chatJid, ...(event.message.mentions ?? [])];
    case 'receipt':
      return [event.chatJid, event.participant];
    case 'edit':
    case 'reaction':
      return [event.chatJid, event.from];
    case 'revoke':
      return [event.chatJid, event.by];
    case 'poll-vote':
      return [event.chatJid, event.voter];
    case 'presence':
      return [event.chatJid, event.jid];
    case 'call':
      return [event.from];
    case 'group':
    case 'group-metadata':
      return [event.group.ownerJid, ...event.group.participants];
    case 'group-participants':
      return event.participants;
    default:
      return [];
  }
}

/** The chat an event is in, when it is a 1:1 or group chat event (what a resolved LID there says about the chat's form). */
export function chatNamedIn(event: EngineEvent): string | null {
  switch (event.type) {
    case 'message':
      return event.message.chatJid;
    case 'receipt':
    case 'edit':
    case 'reaction':
    case 'revoke':
    case 'poll-vote':
    case 'presence':
      return event.chatJid;
    default:
      return null;
  }
}

/** The user-level LIDs an event names as a person (device parts dropped), each once. */
export function lidsNamedIn(event: EngineEvent): string[] {
  const lids = jidsOf(event).map((jid) => toLid(jid)).filter((lid): lid is string => Boolean(lid));
  return [...new Set(lids)];
}

/** The event with every LID that has a number in `numbers` (user-level LID → `<digits>@s.whatsapp.net`) replaced by it. */
export function withNumbers(event: EngineEvent, numbers: ReadonlyMap<string, string>): EngineEvent {
  const to = (jid: string): string => numbers.get(toLid(jid) ?? '') ?? jid;
  const toOpt = <T extends string | null | undefined>(jid: T): T => (jid ? (to(jid) as T) : jid);
  switch (event.type) {
    case 'message': {
      const m = event.message;
      return { ...event, message: { ...m, from: to(m.from), chatJid: to(m.chatJid), ...(m.mentions ? { mentions: m.mentions.map(to) } : {}) } };
    }
    case 'receipt':
      return { ...event, chatJid: to(event.chatJid), ...(event.participant ? { participant: to(event.participant) } : {}) };
    case 'edit':
    case 'reaction':
      return { ...event, chatJid: to(event.chatJid), from: to(event.from) };
    case 'revoke':
      return { ...event, chatJid: to(event.chatJid), by: to(event.by) };
    case 'poll-vote':
      return { ...event, chatJid: to(event.chatJid), voter: to(event.voter) };
    case 'presence':
      return { ...event, chatJid: to(event.chatJid), jid: to(event.jid) };
    case 'call':
      return { ...event, from: to(event.from) };
    case 'group':
    case 'group-metadata':
      return { ...event, group: { ...event.group, ownerJid: toOpt(event.group.ownerJid), participants: event.group.participants.map(to) } };
    case 'group-participants':
      return { ...event, participants: event.participants.map(to) };
    default:
      return event;
  }
}

/** LID → number for the given LIDs, from Baileys' store; pairs the store does not know are left out. */
export async function numbersFor(lids: string[], lookup: PnsForLids): Promise<Map<string, string>> {
  const numbers = new Map<string, string>();
  if (!lids.length) return numbers;
  for (const pair of (await lookup(lids)) ?? []) {
    const lid = toLid(pair.lid);
    const pn = toUserJid(pair.pn);
    if (lid && pn) numbers.set(lid, pn);
  }
  return numbers;
}

/**
 * How WhatsApp addresses each chat and person on this connection, as its stanzas named them: a 1:1 chat whose
 * messages come from a LID (with or without the number beside it) is addressed by that LID, and so is a group member
 * named by LID. We store and report numbers; what we send back into such a chat (the reply's recipient, a quote's,
 * a reaction's and a read receipt's key, a presence subscription) uses the form the chat uses, as WhatsApp Web does.
 * Learned per connection from inbound stanzas; a chat not seen on this connection keeps the stored (number) form.
 */
export class ChatAddressing {
  /** number → LID, for 1:1 chats WhatsApp addresses by LID */
  private readonly chats = new Map<string, string>();
  /** number → LID, for people (group members) WhatsApp names by LID */
  private readonly people = new Map<string, string>();

  /** A stanza's key: which form its chat and author came in, with the number beside it when WhatsApp gave one. */
  learnKey(key: WAMessageKey | null | undefined): void {
    if (!key?.remoteJid) return;
    this.learnChat(key.remoteJid, key.remoteJidAlt);
    if (key.participant) this.learnPerson(key.participant, key.participantAlt);
  }

  /** A 1:1 chat named `primary` by the network, `number` its phone-number form (from the stanza or the LID store). */
  learnChat(primary: string, number: string | null | undefined): void {
    const lid = toLid(primary);
    const pn = toUserJid(number);
    if (lid && pn) this.chats.set(pn, lid);
    else if (toUserJid(primary)) this.chats.delete(toUserJid(primary)!);
  }

  learnPerson(primary: string, number: string | null | undefined): void {
    const lid = toLid(primary);
    const pn = toUserJid(number);
    if (lid && pn) this.people.set(pn, lid);
  }

  /** The form to address a chat by: its LID when WhatsApp addresses it so, else as given. Groups are unchanged. */
  chat(jid: string): string {
    return this.chats.get(toUserJid(jid) ?? '') ?? jid;
  }

  person(jid: string): string {
    return this.people.get(toUserJid(jid) ?? '') ?? this.chats.get(toUserJid(jid) ?? '') ?? jid;
  }

  /** A stored message's key in the chat's addressing form (quotes, reactions, read receipts). */
  key(ref: MessageKeyRef): MessageKeyRef {
    return { ...ref, chatJid: this.chat(ref.chatJid), participant: ref.participant ? this.person(ref.participant) : ref.participant };
  }

  /** A send: recipient, quoted key and reaction target in the chat's form. */
  outbound(message: OutboundMessage): OutboundMessage {
    const content = message.content.type === 'reaction' ? { ...message.content, target: this.key(message.content.target) } : message.content;
    return { ...message, to: this.chat(message.to), content, quoted: message.quoted ? { ...message.quoted, ...this.key(message.quoted) } : message.quoted };
  }
}

/** We store a chat by its phone-number JID; Baileys may name it by its LID, so both forms are tried. */
export async function storedContent(lookups: EngineLookups, key: WAMessageKey): Promise<Uint8Array | null> {
  if (!key.id || !key.remoteJid) return null;
  const preferred = chatOf(key);
  const found = await lookups.message(preferred, key.id);
  if (found || preferred === key.remoteJid) return found;
  return lookups.message(key.remoteJid, key.id);
}
