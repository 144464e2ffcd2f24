import type { BaileysEventMap, Contact } from '@whiskeysockets/baileys';
import { type ContactActionMap, type ContactFacts, DomainError, type ProfileView, type SessionActionHandlers } from '@app/contracts';
import { toLid, toUserJid } from '../baileys-mapping';
import type { BaileysActionContext } from './context';

/**
 * Contacts, profile and presence on the Baileys engine (CONTRACT 12), each through Baileys' own socket function:
 * `onWhatsApp` (usync contact query), `fetchStatus` / `profilePictureUrl` (about text, picture), `updateBlockStatus` /
 * `fetchBlocklist`, `updateProfileName` / `updateProfileStatus` / `updateProfilePicture` / `removeProfilePicture`,
 * `sendPresenceUpdate` and `presenceSubscribe`. Also the mapping of Baileys' contact and blocklist events onto the
 * engine's (`contacts`, `blocklist`).
 */

const digitsOf = (jid: string) => jid.slice(0, jid.indexOf('@'));

/** WhatsApp answers a picture query of a contact without one (404) or hiding it (401) with an error: both are "none". */
function isNoPicture(err: unknown): boolean {
  const e = err as { output?: { statusCode?: number }; data?: unknown; message?: string } | null;
  const code = e?.output?.statusCode;
  return code === 404 || code === 401 || code === 403 || /item-not-found|not-authorized|forbidden/i.test(String(e?.message ?? ''));
}

async function pictureUrlOf(ctx: BaileysActionContext, jid: string): Promise<string | null> {
  try {
    return (await ctx.sock.profilePictureUrl(jid, 'image')) ?? null;
  } catch (err) {
    if (isNoPicture(err)) return null;
    throw err;
  }
}

async function aboutOf(ctx: BaileysActionContext, jid: string): Promise<string | null> {
  const list = (await ctx.sock.fetchStatus(jid)) ?? [];
  const entry = list.find((r) => r.id === jid) ?? list[0];
  const status = (entry?.status as { status?: string | null } | undefined)?.status;
  return typeof status === 'string' && status.length > 0 ? status : null;
}

/** The LID the socket's mapping knows (or learns over usync) for a number's jid; null when it cannot tell. */
async function lidOf(ctx: BaileysActionContext, jid: string): Promise<string | null> {
  try {
    return toLid(await ctx.sock.signalRepository.lidMapping.getLIDForPN(jid));
  } catch (err) {
    ctx.logger.debug({ err: String(err), jid }, 'no LID known for this number');
    return null;
  }
}

function ownJid(ctx: BaileysActionContext): string {
  const jid = ctx.ownJid();
  if (!jid) throw new DomainError('conflict', 'the session has no account yet', {});
  return jid;
}

async function ownProfile(ctx: BaileysActionContext, changes: { name?: string } = {}): Promise<ProfileView> {
  const jid = ownJid(ctx);
  const [about, pictureUrl] = await Promise.all([aboutOf(ctx, jid), pictureUrlOf(ctx, jid)]);
  return { jid, name: changes.name ?? ctx.sock.user?.name ?? ctx.sock.authState.creds.me?.name ?? null, about, pictureUrl };
}

export const CONTACT_BAILEYS_ACTIONS: Pick<SessionActionHandlers<BaileysActionContext>, keyof ContactActionMap> = {
  'contacts.check': async (ctx, { phoneNumbers }) => {
    const answers = (await ctx.sock.onWhatsApp(...phoneNumbers.map((n) => `${n}@s.whatsapp.net`))) ?? [];
    const byNumber = new Map<string, string>();
    for (const a of answers) {
      const jid = toUserJid(a.jid);
      if (jid && a.exists) byNumber.set(digitsOf(jid), jid);
    }
    const results = [];
    for (const phoneNumber of phoneNumbers) {
      const jid = byNumber.get(phoneNumber) ?? null;
      results.push({ phoneNumber, exists: jid !== null, jid, lid: jid ? await lidOf(ctx, jid) : null });
    }
    return { results };
  },

  'contacts.profile': async (ctx, { jid }) => {
    // a number's jid is asked first whether it is on WhatsApp at all; a LID is one by definition
    const user = toUserJid(jid);
    if (user) {
      const [answer] = (await ctx.sock.onWhatsApp(user)) ?? [];
      if (!answer?.exists) return { exists: false, about: null, pictureUrl: null };
    }
    const [about, pictureUrl] = await Promise.all([aboutOf(ctx, jid), pictureUrlOf(ctx, jid)]);
    return { exists: true, about, pictureUrl };
  },

  'contacts.block': async (ctx, { jid, block }) => {
    await ctx.sock.updateBlockStatus(jid, block ? 'block' : 'unblock');
    return { jid, lid: toLid(jid) ?? (toUserJid(jid) ? await lidOf(ctx, jid) : null), blocked: block };
  },

  'contacts.blocklist': async (ctx) => ({ jids: ((await ctx.sock.fetchBlocklist()) ?? []).filter((j): j is string => typeof j === 'string') }),

  'presence.chat': async (ctx, { chatJid, presence }) => {
    await ctx.sock.sendPresenceUpdate(presence, chatJid);
    return {};
  },

  'presence.account': async (ctx, { presence }) => {
    // WhatsApp needs the account's name on an availability presence; Baileys drops it silently without one
    if (!ctx.sock.authState.creds.me?.name) throw new DomainError('conflict', 'the account has no profile name yet: set one first (PATCH …/profile)', {});
    await ctx.sock.sendPresenceUpdate(presence);
    return {};
  },

  'presence.subscribe': async (ctx, { jid }) => {
    await ctx.sock.presenceSubscribe(jid);
    return {};
  },

  'profile.get': (ctx) => ownProfile(ctx),

  'profile.update': async (ctx, { name, about }) => {
    if (name !== undefined) await ctx.sock.updateProfileName(name);
    if (about !== undefined) await ctx.sock.updateProfileStatus(about);
    return ownProfile(ctx, { name });
  },

  'profile.picture.set': async (ctx, { base64 }) => {
    await ctx.sock.updateProfilePicture(ownJid(ctx), Buffer.from(base64, 'base64'));
    return ownProfile(ctx);
  },

  'profile.picture.remove': async (ctx) => {
    await ctx.sock.removeProfilePicture(ownJid(ctx));
    return ownProfile(ctx);
  },
};

/**
 * A Baileys contact as the engine states it: keyed by its number's jid when known (its LID otherwise); a field
 * Baileys did not send stays undefined (unchanged). Groups, broadcasts and newsletters are not contacts: null.
 */
export function contactFactsFrom(c: Partial<Contact>): ContactFacts | null {
  const lid = toLid(c.lid) ?? toLid(c.id);
  const jid = toUserJid(c.id) ?? toUserJid(c.phoneNumber) ?? lid;
  if (!jid) return null;
  const facts: ContactFacts = { jid };
  if (lid) facts.lid = lid;
  if (c.name !== undefined) facts.name = c.name || null;
  if (c.notify !== undefined) facts.pushName = c.notify || null;
  if (c.verifiedName) Object.assign(facts, { isBusiness: true, verifiedName: c.verifiedName });
  if (typeof c.imgUrl === 'string' && c.imgUrl !== 'changed') facts.pictureUrl = c.imgUrl;
  if (c.imgUrl === null) facts.pictureUrl = null;
  return facts;
}

export function contactsEventFrom(contacts: Partial<Contact>[]): { type: 'contacts'; contacts: ContactFacts[] } | null {
  const facts = contacts.map(contactFactsFrom).filter((f): f is ContactFacts => f !== null);
  return facts.length > 0 ? { type: 'contacts', contacts: facts } : null;
}

export function blocklistEventFrom(
  update: BaileysEventMap['blocklist.set'] | BaileysEventMap['blocklist.update'],
): { type: 'blocklist'; action: 'set' | 'add' | 'remove'; jids: string[] } {
  const jids = update.blocklist.map((j) => toUserJid(j) ?? toLid(j) ?? j);
  return { type: 'blocklist', action: 'type' in update ? update.type : 'set', jids };
}
