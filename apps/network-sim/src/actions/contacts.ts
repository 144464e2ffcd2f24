import {
  ACCOUNT_PRESENCES,
  CHAT_JID_PATTERN,
  CHAT_PRESENCES,
  DomainError,
  MAX_CONTACT_CHECK_NUMBERS,
  MAX_PROFILE_ABOUT_LENGTH,
  MAX_PROFILE_NAME_LENGTH,
  type ContactActionMap,
  type Presence,
  type ProfileView,
  type SessionActionHandlers,
  type SimAccountView,
  type SimContactView,
  type SimNetworkEvent,
} from '@app/contracts';
import { createHash } from 'node:crypto';
import { contactJid, normalizePhoneNumber, requireText, validation } from '../sim-input';
import type { SimActionScope } from './scope';

/**
 * Accounts, profiles, blocklists and presence subscriptions on the simulated network (CONTRACT 12, contacts and
 * profile): who is on WhatsApp (an account registered with `POST /sim/contacts`, every paired device's number, every
 * `from` of an inbound message), the name, about text and picture each account set, whom each account blocked, and
 * which devices asked for whose presence. The device protocol's `action` op reaches it through CONTACT_SIM_ACTIONS; the
 * control API through SimNetwork.world.contacts.
 */

const MAX_PICTURE_BYTES = 5 * 1024 * 1024;
const PICTURE_MIMETYPES = ['image/jpeg', 'image/png', 'image/webp'];

interface Picture {
  data: Buffer;
  mimetype: string;
  sha256: string;
}

/** One account on the network, keyed by its phone number (digits). */
interface AccountProfile {
  phoneNumber: string;
  name: string | null;
  about: string | null;
  picture: Picture | null;
  isBusiness: boolean;
  /** a business's verified name (`POST /sim/contacts {verifiedName}`), carried by its messages while it is a business */
  verifiedName: string | null;
  /** jids this account blocked */
  blocked: Set<string>;
  /** the account's last presence as its devices announced it */
  presence: Presence;
}

/** What of the network the state needs: lids, and delivering an event to a session's device (null: not paired). */
export interface ContactsNetwork {
  lidOf(phoneNumber: string): string;
  deliverTo(sessionId: string, event: SimNetworkEvent): unknown;
}

const jidOf = (phoneNumber: string) => `${phoneNumber}@s.whatsapp.net`;
const digitsOf = (jid: string): string | null => /^(\d+)@s\.whatsapp\.net$/.exec(jid)?.[1] ?? null;

function optionalText(field: string, value: unknown, max: number): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (typeof value !== 'string') throw validation(field, 'must be a string');
  if (value.length > max) throw validation(field, `must be at most ${max} characters`);
  return value;
}

function pictureFrom(field: string, base64: unknown, mimetype: unknown): Picture {
  if (typeof base64 !== 'string' || base64.length === 0 || base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
    throw validation(field, 'must be non-empty padded base64');
  }
  const data = Buffer.from(base64, 'base64');
  if (data.length > MAX_PICTURE_BYTES) throw validation(field, `must be at most ${MAX_PICTURE_BYTES} bytes`);
  const type = mimetype === undefined ? 'image/jpeg' : mimetype;
  if (typeof type !== 'string' || !PICTURE_MIMETYPES.includes(type)) throw validation('mimetype', `must be one of ${PICTURE_MIMETYPES.join(', ')}`);
  return { data, mimetype: type, sha256: createHash('sha256').update(data).digest('hex') };
}

export class SimContacts {
  /** where pictures are served from (`GET /sim/pictures/{sha256}`); set to the simulator's URL once it listens */
  pictureBase = 'http://network-sim.invalid';
  private readonly accounts = new Map<string, AccountProfile>();
  private readonly pictures = new Map<string, Picture>();
  /** sessionId → the contacts its device knows (wrote to it, were looked up, blocked): told when they change */
  private readonly known = new Map<string, Set<string>>();
  /** sessionId → the jids its device subscribed to the presence of */
  private readonly subscriptions = new Map<string, Set<string>>();

  /** The account of this number, created when new (a number that exists on the network). */
  register(phoneNumber: string): AccountProfile {
    let account = this.accounts.get(phoneNumber);
    if (!account) {
      account = { phoneNumber, name: null, about: null, picture: null, isBusiness: false, verifiedName: null, blocked: new Set(), presence: 'unavailable' };
      this.accounts.set(phoneNumber, account);
    }
    return account;
  }

  exists(phoneNumber: string): boolean {
    return this.accounts.has(phoneNumber);
  }

  /** An inbound message reached a session: its sender exists on the network and is known to the device. */
  noteInbound(sessionId: string, from: string): { pushName: string | null; verifiedName: string | null } {
    const digits = digitsOf(from);
    if (!digits) return { pushName: null, verifiedName: null };
    this.know(sessionId, from);
    const account = this.register(digits);
    return { pushName: account.name, verifiedName: account.isBusiness ? account.verifiedName : null };
  }

  /** `POST /sim/contacts`: an account's owner sets it up; the devices that know it are told its name. */
  put(network: ContactsNetwork, body: Record<string, unknown>): SimContactView {
    const phoneNumber = normalizePhoneNumber(body.phoneNumber);
    const name = optionalText('name', body.name, MAX_PROFILE_NAME_LENGTH);
    const about = optionalText('about', body.about, MAX_PROFILE_ABOUT_LENGTH);
    const verifiedName = optionalText('verifiedName', body.verifiedName, MAX_PROFILE_NAME_LENGTH);
    if (body.isBusiness !== undefined && typeof body.isBusiness !== 'boolean') throw validation('isBusiness', 'must be a boolean');
    const picture = body.pictureBase64 === undefined || body.pictureBase64 === null ? body.pictureBase64 : pictureFrom('pictureBase64', body.pictureBase64, body.pictureMimetype);
    const account = this.register(phoneNumber);
    if (name !== undefined) account.name = name;
    if (about !== undefined) account.about = about;
    if (picture !== undefined) this.setPicture(account, picture);
    if (typeof body.isBusiness === 'boolean') account.isBusiness = body.isBusiness;
    if (verifiedName !== undefined) account.verifiedName = verifiedName;
    const delivered = this.announce(network, account);
    return { ...this.contactView(network, account), delivered };
  }

  /** `GET /sim/sessions/{id}/account` for the device paired with this number. */
  accountView(phoneNumber: string | null): SimAccountView {
    if (!phoneNumber) throw new DomainError('conflict', 'the device is not paired', {});
    const account = this.register(phoneNumber);
    return {
      name: account.name,
      about: account.about,
      pictureSha256: account.picture?.sha256 ?? null,
      blocked: [...account.blocked],
      // chat state (archive, pin, mute, read) is the chats area's: it fills this from its own state
      chats: {},
    };
  }

  /** `GET /sim/pictures/{sha256}` */
  picture(sha256: string): { data: Buffer; mimetype: string; filename: null } {
    const picture = this.pictures.get(sha256);
    if (!picture) throw new DomainError('not_found', 'no picture with this sha256', { sha256 });
    return { data: picture.data, mimetype: picture.mimetype, filename: null };
  }

  // ---- what the device's actions do -------------------------------------------------------

  check(scope: SimActionScope, phoneNumbers: unknown) {
    if (!Array.isArray(phoneNumbers) || phoneNumbers.length === 0 || phoneNumbers.length > MAX_CONTACT_CHECK_NUMBERS) {
      throw validation('phoneNumbers', `must be 1..${MAX_CONTACT_CHECK_NUMBERS} phone numbers`);
    }
    const results = phoneNumbers.map((value, i) => {
      const phoneNumber = normalizePhoneNumber(value, `phoneNumbers[${i}]`);
      if (!this.exists(phoneNumber)) return { phoneNumber, exists: false, jid: null, lid: null };
      this.know(scope.sessionId, jidOf(phoneNumber));
      return { phoneNumber, exists: true, jid: jidOf(phoneNumber), lid: scope.network.lidOf(phoneNumber) };
    });
    return { results };
  }

  profileOf(scope: SimActionScope, jid: unknown) {
    const account = this.accountOf(scope, jid);
    if (!account) return { exists: false, about: null, pictureUrl: null };
    // a contact that blocked the account shows it neither about nor picture, as WhatsApp does
    const hidden = account.blocked.has(scope.account.jid);
    this.know(scope.sessionId, jidOf(account.phoneNumber));
    return { exists: true, about: hidden ? null : account.about, pictureUrl: hidden ? null : this.pictureUrl(account) };
  }

  block(scope: SimActionScope, jid: unknown, block: unknown) {
    if (typeof block !== 'boolean') throw validation('block', 'must be a boolean');
    const account = this.accountOf(scope, jid);
    if (!account) throw new DomainError('not_found', 'this number is not on WhatsApp', { jid });
    const target = jidOf(account.phoneNumber);
    const own = this.register(scope.account.phoneNumber);
    if (block) own.blocked.add(target);
    else own.blocked.delete(target);
    this.know(scope.sessionId, target);
    return { jid: target, lid: scope.network.lidOf(account.phoneNumber), blocked: block };
  }

  blocklist(scope: SimActionScope) {
    return { jids: [...this.register(scope.account.phoneNumber).blocked] };
  }

  chatPresence(scope: SimActionScope, chatJid: unknown, presence: unknown) {
    if (typeof chatJid !== 'string' || !CHAT_JID_PATTERN.test(chatJid)) throw validation('chatJid', 'must be a chat jid');
    const p = oneOf('presence', presence, CHAT_PRESENCES);
    scope.log({ type: 'presence', chatJid, presence: p, at: Date.now() });
    return {};
  }

  /** The account online or offline: logged, and told to every device that subscribed to its presence. */
  accountPresence(scope: SimActionScope, network: ContactsNetwork, presence: unknown) {
    const p = oneOf('presence', presence, ACCOUNT_PRESENCES);
    this.register(scope.account.phoneNumber).presence = p;
    scope.log({ type: 'account-presence', presence: p, at: Date.now() });
    const jid = scope.account.jid;
    for (const [sessionId, jids] of this.subscriptions) {
      if (sessionId !== scope.sessionId && jids.has(jid)) network.deliverTo(sessionId, { type: 'presence', chatJid: jid, jid, presence: p });
    }
    return {};
  }

  /** Recorded; the network answers at once with the contact's current presence, as WhatsApp does. */
  subscribe(scope: SimActionScope, jid: unknown) {
    const account = this.accountOf(scope, jid);
    if (!account) throw new DomainError('not_found', 'this number is not on WhatsApp', { jid });
    const target = jidOf(account.phoneNumber);
    const subscribed = this.subscriptions.get(scope.sessionId) ?? new Set<string>();
    subscribed.add(target);
    this.subscriptions.set(scope.sessionId, subscribed);
    this.know(scope.sessionId, target);
    scope.log({ type: 'presence-subscribe', jid: target, at: Date.now() });
    scope.deliver({ type: 'presence', chatJid: target, jid: target, presence: account.presence });
    return {};
  }

  ownProfile(scope: SimActionScope): ProfileView {
    const account = this.register(scope.account.phoneNumber);
    return { jid: scope.account.jid, name: account.name, about: account.about, pictureUrl: this.pictureUrl(account) };
  }

  updateProfile(scope: SimActionScope, network: ContactsNetwork, args: { name?: unknown; about?: unknown }): ProfileView {
    const account = this.register(scope.account.phoneNumber);
    const name = args.name === undefined ? undefined : requireText('name', args.name, MAX_PROFILE_NAME_LENGTH);
    const about = optionalText('about', args.about, MAX_PROFILE_ABOUT_LENGTH);
    if (name !== undefined) account.name = name;
    if (about !== undefined) account.about = about;
    if (name !== undefined) this.announce(network, account, scope.sessionId);
    return this.ownProfile(scope);
  }

  setOwnPicture(scope: SimActionScope, args: { base64?: unknown; mimetype?: unknown }): ProfileView {
    this.setPicture(this.register(scope.account.phoneNumber), pictureFrom('base64', args.base64, args.mimetype));
    return this.ownProfile(scope);
  }

  removeOwnPicture(scope: SimActionScope): ProfileView {
    this.setPicture(this.register(scope.account.phoneNumber), null);
    return this.ownProfile(scope);
  }

  // ---- internals ---------------------------------------------------------------------------

  private accountOf(scope: SimActionScope, jid: unknown): AccountProfile | null {
    const value = contactJid('jid', jid);
    const digits = digitsOf(value) ?? this.phoneOfLid(scope, value);
    return digits && this.exists(digits) ? this.register(digits) : null;
  }

  private phoneOfLid(scope: SimActionScope, lid: string): string | null {
    for (const phoneNumber of this.accounts.keys()) if (scope.network.lidOf(phoneNumber) === lid) return phoneNumber;
    return null;
  }

  private know(sessionId: string, jid: string): void {
    const jids = this.known.get(sessionId) ?? new Set<string>();
    jids.add(jid);
    this.known.set(sessionId, jids);
  }

  private setPicture(account: AccountProfile, picture: Picture | null): void {
    account.picture = picture;
    if (picture) this.pictures.set(picture.sha256, picture);
  }

  private pictureUrl(account: AccountProfile): string | null {
    return account.picture ? `${this.pictureBase}/sim/pictures/${account.picture.sha256}` : null;
  }

  private contactView(network: ContactsNetwork, account: AccountProfile): Omit<SimContactView, 'delivered'> {
    return {
      jid: jidOf(account.phoneNumber),
      lid: network.lidOf(account.phoneNumber),
      phoneNumber: account.phoneNumber,
      name: account.name,
      about: account.about,
      pictureSha256: account.picture?.sha256 ?? null,
      isBusiness: account.isBusiness,
    };
  }

  /** Tells the devices that know this account (but its own, `except`) its name and business flag. */
  private announce(network: ContactsNetwork, account: AccountProfile, except?: string): string[] {
    const jid = jidOf(account.phoneNumber);
    const delivered: string[] = [];
    for (const [sessionId, jids] of this.known) {
      if (sessionId === except || !jids.has(jid)) continue;
      const contact = { jid, lid: network.lidOf(account.phoneNumber), phoneNumber: account.phoneNumber, pushName: account.name, isBusiness: account.isBusiness };
      if (network.deliverTo(sessionId, { type: 'contact', contact }) !== null) delivered.push(sessionId);
    }
    return delivered;
  }
}

function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) throw validation(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** The handlers' scope: the device, and the area's state in SimWorld. */
type ContactsScope = SimActionScope<{ readonly contacts: SimContacts }>;

/** How the simulator plays each operation of ContactActionMap. */
export const CONTACT_SIM_ACTIONS: Pick<SessionActionHandlers<ContactsScope>, keyof ContactActionMap> = {
  'contacts.check': (s, a) => s.world.contacts.check(s, a.phoneNumbers),
  'contacts.profile': (s, a) => s.world.contacts.profileOf(s, a.jid),
  'contacts.block': (s, a) => s.world.contacts.block(s, a.jid, a.block),
  'contacts.blocklist': (s) => s.world.contacts.blocklist(s),
  'presence.chat': (s, a) => s.world.contacts.chatPresence(s, a.chatJid, a.presence),
  'presence.account': (s, a) => s.world.contacts.accountPresence(s, s.network, a.presence),
  'presence.subscribe': (s, a) => s.world.contacts.subscribe(s, a.jid),
  'profile.get': (s) => s.world.contacts.ownProfile(s),
  'profile.update': (s, a) => s.world.contacts.updateProfile(s, s.network, a),
  'profile.picture.set': (s, a) => s.world.contacts.setOwnPicture(s, a),
  'profile.picture.remove': (s) => s.world.contacts.removeOwnPicture(s),
};
