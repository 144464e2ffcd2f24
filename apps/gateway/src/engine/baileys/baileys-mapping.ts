import type { Contact, GroupMetadata, proto, WAMessage } from '@whiskeysockets/baileys';
import type { AccountIdentity, CloseReason, GroupInfo, InboundMessage } from '../engine.interface';

/** Baileys' DisconnectReason values, copied because the enum lives in the ESM-only module jest cannot load. */
export const DISCONNECT = {
  loggedOut: 401,
  forbidden: 403,
  connectionLost: 408,
  timedOut: 408,
  multideviceMismatch: 411,
  connectionClosed: 428,
  connectionReplaced: 440,
  badSession: 500,
  unavailableService: 503,
  restartRequired: 515,
} as const;

/** Baileys closes with a Boom error; its status code says why. Anything else is a network error. */
export function statusCodeOf(error: unknown): number | null {
  const code = (error as { output?: { statusCode?: unknown } } | undefined)?.output?.statusCode;
  return typeof code === 'number' ? code : null;
}

/** Unknown codes count as transient: the runner reconnects with capped backoff and ends in `failed` if it never works. */
export function closeReasonFor(statusCode: number | null): CloseReason {
  switch (statusCode) {
    case DISCONNECT.restartRequired:
      return 'restart_required';
    case DISCONNECT.loggedOut:
      return 'logged_out';
    case DISCONNECT.connectionReplaced:
      return 'replaced';
    case DISCONNECT.badSession:
      return 'bad_session';
    default:
      return 'transient';
  }
}

const USER_SERVER = 's.whatsapp.net';
const LID_SERVER = 'lid';

/** `<user>[_<agent>][:<device>]@<server>` → `{user, server}`; null for anything that is not a JID. */
function splitJid(jid: string | null | undefined): { user: string; server: string } | null {
  if (!jid) return null;
  const at = jid.indexOf('@');
  if (at <= 0) return null;
  const user = jid.slice(0, at).split(':')[0].split('_')[0];
  const server = jid.slice(at + 1);
  return user ? { user, server } : null;
}

/** A phone-number JID without its device part (`4912345:3@s.whatsapp.net` → `4912345@s.whatsapp.net`), or null. */
export function toUserJid(jid: string | null | undefined): string | null {
  const parts = splitJid(jid);
  return parts && parts.server === USER_SERVER && /^\d+$/.test(parts.user) ? `${parts.user}@${USER_SERVER}` : null;
}

export function toLid(jid: string | null | undefined): string | null {
  const parts = splitJid(jid);
  return parts && parts.server === LID_SERVER && /^\d+$/.test(parts.user) ? `${parts.user}@${LID_SERVER}` : null;
}

/** Baileys 7 may name the account by its LID in `id` and by its number in `phoneNumber`; take whichever is a number. */
export function accountFrom(user: Contact | undefined): AccountIdentity | null {
  if (!user) return null;
  const jid = toUserJid(user.id) ?? toUserJid(user.phoneNumber);
  if (!jid) return null;
  return { jid, lid: toLid(user.lid) ?? toLid(user.id), phoneNumber: jid.slice(0, jid.indexOf('@')) };
}

/** Prefer the phone-number form of an address when WhatsApp sent the LID form with the number as its alternative. */
function preferUserJid(jid: string | null | undefined, alt: string | null | undefined): string {
  if (toUserJid(jid)) return jid!;
  if (toUserJid(alt)) return alt!;
  return jid ?? alt ?? '';
}

/** Wrappers around the real content (disappearing, view-once); unwrapped before reading the text. */
const WRAPPERS = ['ephemeralMessage', 'viewOnceMessage', 'viewOnceMessageV2', 'viewOnceMessageV2Extension', 'documentWithCaptionMessage'] as const;

/** Content keys that carry no message of their own (key distribution, receipts of other events). */
const NOT_A_MESSAGE = new Set(['protocolMessage', 'senderKeyDistributionMessage', 'messageContextInfo', 'reactionMessage', 'pollUpdateMessage']);

function unwrap(content: proto.IMessage): proto.IMessage {
  let current = content;
  for (let depth = 0; depth < 4; depth += 1) {
    const wrapper = WRAPPERS.find((key) => current[key]?.message);
    if (!wrapper) break;
    current = current[wrapper]!.message!;
  }
  return current;
}

function epochMs(seconds: WAMessage['messageTimestamp']): number {
  if (seconds === null || seconds === undefined) return Date.now();
  const value = typeof seconds === 'number' ? seconds : seconds.toNumber();
  return value * 1000;
}

/**
 * A user-visible inbound message, or null for what is not one (status broadcasts, protocol and key-distribution
 * stanzas, reactions and poll votes, which are other events).
 */
export function inboundMessageFrom(msg: WAMessage, ownJid: string | null): InboundMessage | null {
  const key = msg.key;
  if (!msg.message || !key?.remoteJid || key.remoteJid === 'status@broadcast') return null;
  const content = unwrap(msg.message);
  if (Object.keys(content).every((name) => NOT_A_MESSAGE.has(name))) return null;
  const chatJid = preferUserJid(key.remoteJid, key.remoteJidAlt);
  const fromMe = Boolean(key.fromMe);
  const sender = key.participant ? preferUserJid(key.participant, key.participantAlt) : chatJid;
  return {
    id: key.id ?? '',
    from: fromMe && ownJid ? ownJid : sender,
    chatJid,
    text: content.conversation ?? content.extendedTextMessage?.text ?? null,
    timestamp: epochMs(msg.messageTimestamp),
    fromMe,
  };
}

export function groupInfoFrom(meta: GroupMetadata, ownJid: string | null): GroupInfo {
  return {
    groupJid: meta.id,
    subject: meta.subject ?? '',
    description: meta.desc ?? '',
    ownerJid: preferUserJid(meta.owner, meta.ownerPn) || ownJid || '',
    participants: (meta.participants ?? []).map((p) => preferUserJid(p.id, p.phoneNumber)),
    isAnnounce: Boolean(meta.announce),
    isLocked: Boolean(meta.restrict),
  };
}
