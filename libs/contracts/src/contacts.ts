/**
 * Session actions for contacts, profile and presence (CONTRACT 12). Each entry is one operation the API asks of a connected session through the
 * `session.action` command (commands.ts) and each engine performs (EngineConnection.perform): see session-actions.ts.
 */

/** A contact as the API shows it (`GET …/contacts`): what the session knows of one account on the network. */
export interface ContactView {
  /** `<digits>@s.whatsapp.net`, or `<digits>@lid` while the network has not told the number */
  jid: string;
  lid: string | null;
  /** digits, null when only the LID is known */
  phoneNumber: string | null;
  /** the name the account's own address book gives it (Baileys' `name`), null when none */
  name: string | null;
  /** the name the contact chose for itself (WhatsApp's push name, `notify`) */
  pushName: string | null;
  /** a business's name as WhatsApp verified it (Baileys' `verifiedName`), null for a person or an unverified business */
  verifiedName: string | null;
  isBusiness: boolean;
  blocked: boolean;
}

/** `GET …/contacts/{jid}`: the contact plus what the network says of its profile (null when hidden or none). */
export interface ContactDetailView extends ContactView {
  about: string | null;
  pictureUrl: string | null;
}

/** The account's own profile (`GET …/profile`). */
export interface ProfileView {
  jid: string;
  name: string | null;
  about: string | null;
  pictureUrl: string | null;
}

/** One answer of `POST …/contacts:check`: `jid`/`lid` null when the number is not on WhatsApp. */
export interface ContactCheckView {
  input: string;
  exists: boolean;
  jid: string | null;
  lid: string | null;
}

/**
 * What the network said about a contact (an engine event, an action's answer). An absent (undefined) field is not
 * known from this source and leaves the stored value as it is; `jid` is the key (`<digits>@s.whatsapp.net` when the
 * number is known, the LID otherwise).
 */
export interface ContactFacts {
  jid: string;
  lid?: string | null;
  phoneNumber?: string | null;
  name?: string | null;
  pushName?: string | null;
  /** a business's verified name (the third name a chat is shown by) */
  verifiedName?: string | null;
  isBusiness?: boolean;
  blocked?: boolean;
  about?: string | null;
  pictureUrl?: string | null;
}

/** `contact.blocked` / `contact.unblocked`: the contact as it is stored after the change. */
export interface ContactBlockPayload {
  contact: ContactView;
}

export const CHAT_PRESENCES = ['composing', 'recording', 'paused'] as const;
export type ChatPresence = (typeof CHAT_PRESENCES)[number];
export const ACCOUNT_PRESENCES = ['available', 'unavailable'] as const;
export type AccountPresence = (typeof ACCOUNT_PRESENCES)[number];

/** What an engine answers for a contact's profile lookup; `exists` false: the number is not on WhatsApp. */
export interface NetworkProfile {
  exists: boolean;
  about: string | null;
  pictureUrl: string | null;
}

/** The most numbers one `contacts:check` asks about (CONTRACT 12). */
export const MAX_CONTACT_CHECK_NUMBERS = 50;
/** The longest profile name and about text WhatsApp accepts (its app limits: 25 and 139 characters). */
export const MAX_PROFILE_NAME_LENGTH = 25;
export const MAX_PROFILE_ABOUT_LENGTH = 139;

export interface ContactActionMap {
  /** which of these phone numbers (digits) are on WhatsApp, in their order */
  'contacts.check': { args: { phoneNumbers: string[] }; result: { results: Array<{ phoneNumber: string; exists: boolean; jid: string | null; lid: string | null }> } };
  /** a contact's about text and picture URL as the network shows them to this account */
  'contacts.profile': { args: { jid: string }; result: NetworkProfile };
  /** blocks or unblocks; `blocked` is the state after, `lid` the contact's LID when the network told it */
  'contacts.block': { args: { jid: string; block: boolean }; result: { jid: string; lid: string | null; blocked: boolean } };
  /** the jids the account has blocked */
  'contacts.blocklist': { args: Record<string, never>; result: { jids: string[] } };
  /** "typing…", "recording audio…" or neither, shown to one chat */
  'presence.chat': { args: { chatJid: string; presence: ChatPresence }; result: Record<string, never> };
  /** the account online (available) or offline (unavailable) for its contacts */
  'presence.account': { args: { presence: AccountPresence }; result: Record<string, never> };
  /** asks the network for this contact's presence updates (they arrive as `presence` engine events) */
  'presence.subscribe': { args: { jid: string }; result: Record<string, never> };
  /** the account's own profile */
  'profile.get': { args: Record<string, never>; result: ProfileView };
  /** changes the push name and/or the about text; answers the profile after */
  'profile.update': { args: { name?: string; about?: string }; result: ProfileView };
  /** a new profile picture (bytes base64); answers the profile after */
  'profile.picture.set': { args: { base64: string; mimetype: string }; result: ProfileView };
  'profile.picture.remove': { args: Record<string, never>; result: ProfileView };
}
