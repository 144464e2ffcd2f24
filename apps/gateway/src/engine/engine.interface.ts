import type {
  AckStatus,
  CallIncomingPayload,
  ChannelView,
  ContactContent,
  ContactFacts,
  GroupChanges,
  GroupInfo,
  GroupNetwork,
  GroupNetworkParticipant,
  GroupParticipantAction,
  LocationContent,
  MediaRef,
  MediaView,
  MessageKeyRef,
  MessageType,
  OutboundMessage,
  PollContent,
  Presence,
  SentMessage,
  SessionActionArgs,
  SessionActionName,
  SessionActionResult,
  ChatChanges,
  ChatState,
  SyncHistoryMode,
} from '@app/contracts';
import type { Logger } from 'pino';
import type { AccountExtrasEngineEvent } from './account-extras-events';

/**
 * The one seam between a gateway node and the messaging network.
 * Implementations: `baileys` (the real WhatsApp network) and `sim` (the network simulator).
 * An engine knows sockets and protocols; the SessionRunner above it owns statuses, retries and events.
 */

/** Per-session persistent auth state (encrypted in PostgreSQL by the gateway). Values are JSON-able. */
export interface AuthStateStore {
  readonly sessionId: string;
  readCreds<T = unknown>(): Promise<T | null>;
  writeCreds(creds: unknown): Promise<void>;
  /** Reads keys of one category; missing ids are absent from the result. */
  readKeys<T = unknown>(category: string, ids: string[]): Promise<Record<string, T>>;
  /** Writes (value) or deletes (null) keys, grouped by category; written through at once. */
  writeKeys(data: Record<string, Record<string, unknown | null>>): Promise<void>;
  /** Wipes everything for the session (logout). */
  clear(): Promise<void>;
}

export interface AccountIdentity {
  /** `<digits>@s.whatsapp.net` */
  jid: string;
  /** `<digits>@lid` or null when the network did not tell */
  lid: string | null;
  /** digits of the attached number */
  phoneNumber: string;
}

/** Inbound media: what the log shows, plus the engine's handle to download the bytes later (see MediaRef). */
export interface InboundMedia extends MediaView {
  ref: MediaRef;
}

/**
 * A user-visible message the network delivered (or one the account sent from its phone: `fromMe`).
 * `id` is the waMessageId. `from` is the sender (the participant in a group), `chatJid` the chat.
 */
export interface InboundMessage {
  id: string;
  from: string;
  chatJid: string;
  text: string | null;
  timestamp: number;
  fromMe: boolean;
  /** absent = 'text' (older fixtures) */
  type?: MessageType;
  media?: InboundMedia | null;
  location?: LocationContent | null;
  contact?: ContactContent | null;
  /** a poll creation message */
  poll?: PollContent | null;
  /** waMessageId of the message this one replies to */
  quotedWaMessageId?: string | null;
  mentions?: string[];
  /** engine-specific encoded content (Baileys: proto.Message bytes), kept for retry receipts, quotes and polls */
  raw?: Uint8Array | null;
  /** the name the sender gave itself (WhatsApp's push name), when the message carried one */
  pushName?: string | null;
  /** a business sender's verified name, when the message carried one (Baileys' `verifiedBizName`) */
  verifiedName?: string | null;
}

export type { GroupInfo };

/**
 * Why a connection closed, already mapped from the engine's own codes (what WhatsApp means by them). Credentials are
 * never wiped because of a close except `logged_out` (WhatsApp's 401): see docs/baileys-engine.md, "Closes".
 * - restart_required: reconnect at once (Baileys 515 after pairing); a loop of them is backed off
 * - logged_out: the device is gone (Baileys 401): unlinked on the phone, or a pairing that never completed
 * - replaced: another socket took the device (Baileys 440); retried once after a delay, `failed` if it repeats
 * - forbidden: WhatsApp refuses the account (Baileys 403); stop at once, no retry
 * - client_version_refused: WhatsApp refuses this client's WhatsApp Web version (Baileys 405); long backoff
 * - bad_session: the stored credentials are not this engine's (the simulator's 4500); stop, credentials kept
 * - transient: network trouble, a stream error without a code (Baileys 500), 408, 411, 428, 503…; capped backoff
 * - closed_by_us: close() was called
 */
export type CloseReason =
  | 'restart_required'
  | 'logged_out'
  | 'replaced'
  | 'forbidden'
  | 'client_version_refused'
  | 'bad_session'
  | 'transient'
  | 'closed_by_us';

export type EngineEvent =
  | { type: 'qr'; qr: string }
  | { type: 'open'; account: AccountIdentity }
  | { type: 'close'; reason: CloseReason; statusCode: number | null; message: string }
  | { type: 'message'; message: InboundMessage }
  | { type: 'group'; group: GroupInfo; action: 'created' | 'updated' }
  /** the engine fetched a group's metadata for a send it had no stored answer for: stored, not announced */
  | { type: 'group-metadata'; group: GroupInfo }
  /**
   * the recipient's phone reports a message this session sent as delivered, read or played; in a group, `participant`
   * is the member whose phone reported it
   */
  | { type: 'receipt'; waMessageId: string; chatJid: string; status: AckStatus; participant?: string | null }
  /** someone reacted to a message of the chat (`emoji` "" = removed) */
  /** a message of the chat was edited (`text`: the new text or caption); `from` is the editor */
  | { type: 'edit'; waMessageId: string; chatJid: string; from: string; text: string }
  /** a message of the chat was deleted for everyone; `by` is who deleted it */
  | { type: 'revoke'; waMessageId: string; chatJid: string; by: string }
  | { type: 'reaction'; waMessageId: string; chatJid: string; from: string; emoji: string; fromMe: boolean }
  /** a vote on a poll, already decrypted to option names */
  | { type: 'poll-vote'; pollWaMessageId: string; chatJid: string; voter: string; selectedOptions: string[] }
  | { type: 'presence'; chatJid: string; jid: string; presence: Presence }
  | ({ type: 'call' } & CallIncomingPayload)
  /** `network`: the whole group's network form, when the update is a whole group (a refresh); it replaces the stored one */
  | { type: 'group-update'; groupJid: string; changes: GroupChanges; network?: GroupNetwork; actor?: string }
  /**
   * `participants` by number when known (what the API and webhooks show); `network` the same members as the network
   * named them in the group (LIDs in a LID-addressed group), when the engine knows it: it keeps the stored network
   * form of the group (what a send needs) current
   */
  | { type: 'group-participants'; groupJid: string; action: GroupParticipantAction; participants: string[]; network?: GroupNetworkParticipant[]; actor?: string }
  /** what the network said about contacts (names, push names, LIDs, business flags): stored, not announced */
  | { type: 'contacts'; contacts: ContactFacts[] }
  /**
   * the account's blocklist changed on the network (on the phone, or by us): `set` is the whole list (stored, not
   * announced), `add`/`remove` a change (announced as contact.blocked / contact.unblocked)
   */
  | { type: 'blocklist'; action: 'set' | 'add' | 'remove'; jids: string[] }
  /**
   * the account changed chats on another device (archived, pinned, muted, read on the phone) or the network named
   * chats: per chat, only the fields it told
   */
  | { type: 'chat-update'; chats: EngineChatUpdate[] }
  /**
   * one batch of the history the phone sends a newly paired device (session setting `syncHistory`): stored as chats and
   * messages, announced once per batch (`history.synced`), never per message
   */
  | { type: 'history'; chats: HistoryChat[]; messages: InboundMessage[] }
  /** labels, statuses and channel posts (CONTRACT 13): apps/gateway/src/messages/account-extras-events.ts takes them */
  | AccountExtrasEngineEvent;

/** What an engine learnt of one chat's state: its jid and the fields it told. */
export type EngineChatUpdate = { jid: string } & ChatChanges;

/** A chat of a history batch, as the phone described it. */
export interface HistoryChat extends ChatState {
  jid: string;
  name: string | null;
  unreadCount: number;
}

export interface EngineConnection {
  /** Ask for a pairing code for this phone number instead of a QR (only before pairing). */
  requestPairingCode(phoneNumber: string): Promise<string>;
  createGroup(subject: string, participants: string[]): Promise<GroupInfo>;
  /**
   * Sends with the message's fixed waMessageId. Re-sending an id the network already has must not show the
   * recipient a second message (WhatsApp and the simulator store a message once per id).
   */
  send(message: OutboundMessage): Promise<SentMessage>;
  /** Shows `composing` (typing) or `paused` to a chat. */
  sendPresence(chatJid: string, presence: 'composing' | 'paused'): Promise<void>;
  /** Read receipts for received messages (autoRead). */
  markRead(keys: MessageKeyRef[]): Promise<void>;
  /**
   * Performs one operation of SessionActionMap (libs/contracts/src/session-actions.ts) on the network and answers
   * what it returned. Refusals are DomainErrors (`conflict`: WhatsApp does not allow it now).
   */
  perform<A extends SessionActionName>(action: A, args: SessionActionArgs<A>): Promise<SessionActionResult<A>>;
  /** Unlink the device on the network, then close. */
  logout(): Promise<void>;
  /** Close the socket, keeping the pairing. Emits close(closed_by_us). Idempotent. */
  close(): Promise<void>;
}

/**
 * What the network asks back of us while connected, served from PostgreSQL: a message we sent (Baileys resends it
 * on a retry receipt, and decrypts poll votes against the poll's creation message) and a group's metadata
 * (Baileys needs it for every group send).
 */
/**
 * The channels (newsletters) the account follows, as the gateway keeps them (PostgreSQL `followed_channels`): the
 * Baileys engine lists them from here, WhatsApp Web's query for them being one Baileys 7.0.0-rc14 does not offer.
 */
export interface FollowedChannelBook {
  /** oldest followed first; `named` false while the network has not named the channel (`name` '') */
  list(): Promise<Array<ChannelView & { named: boolean }>>;
  /** the account follows it: what the network said of it replaces what was kept (null and absent keep it) */
  remember(channel: { jid: string } & Partial<Omit<ChannelView, 'jid'>>): Promise<void>;
  forget(jid: string): Promise<void>;
}

export interface EngineLookups {
  /** the stored `raw` content of a message of this session, or null */
  message(chatJid: string, waMessageId: string): Promise<Uint8Array | null>;
  /** the stored group; its `network` form (null when not known) is what a send is addressed by */
  group(groupJid: string): Promise<GroupInfo | null>;
}

/**
 * How the gateway takes one engine event. Events are taken in the order the engine passes them. The promise resolves
 * once the event is durable (committed to the message log and the outbox, or needs nothing durable); only then may
 * the engine acknowledge it to the network (the `sim` engine's ack; the Baileys engine's spool entry is removed).
 * It rejects when the gateway cannot take the event now (the lease is in doubt, the socket is being handed over or
 * was replaced): the engine must then NOT acknowledge it, so that the network, or the spool, delivers it again.
 * See docs/decisions.md, "Durable before acknowledged".
 */
export type EngineEventSink = (event: EngineEvent) => Promise<void>;

export interface ConnectOptions {
  sessionId: string;
  auth: AuthStateStore;
  onEvent: EngineEventSink;
  logger: Logger;
  /** absent in older callers: the engine then answers retries and group sends without a store */
  lookups?: EngineLookups;
  /** the session's outbound proxy (http, https, socks4/5 URL); absent or null: direct. The sim engine ignores it */
  proxyUrl?: string | null;
  /** the session setting `syncHistory` (absent: `none`): what history the engine asks the phone for and passes on */
  syncHistory?: SyncHistoryMode;
  /** the followed channels the gateway keeps (absent: the Baileys engine cannot list them); the sim engine ignores it */
  channels?: FollowedChannelBook;
}

export interface SessionEngine {
  readonly name: 'baileys' | 'sim';
  connect(options: ConnectOptions): Promise<EngineConnection>;
  /** The WhatsApp Web version the engine announces (`2.3000.x`), null until known; absent: the engine has none (sim). */
  waWebVersion?(): string | null;
  /**
   * The session left this gateway (handed off, stopped, lease lost): drop what the engine keeps for it between
   * sockets (Baileys: its signal-key, retry-counter and device-list caches), so a return later starts from the store.
   */
  forget(sessionId: string): void;
}

/** DI token for the SessionEngine chosen by GATEWAY_ENGINE. */
export const SESSION_ENGINE = Symbol('SESSION_ENGINE');
