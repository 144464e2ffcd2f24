import type {
  AckStatus,
  ContactContent,
  GroupChanges,
  GroupParticipantAction,
  LinkPreview,
  LocationContent,
  MessageKeyRef,
  MessageType,
  OutboundContent,
  OutboundMedia,
  OutboundMessage,
  OutboundMessageType,
  PollContent,
  Presence,
  StatusPostOptions,
} from './messages';
import type { GroupInfo } from './sessions';
import type { AccountPresence, ChatPresence, ContactFacts } from './contacts';
import type { ChatState } from './chats';
import type { ChannelMessageView, LabelUpdatePayload } from './account-extras';

/**
 * Device protocol between the gateway's `sim` engine and the network simulator (apps/network-sim):
 * a WebSocket at `GET /device?sessionId=<id>` carrying one JSON object per text frame.
 * The device speaks first (`hello`, with its stored credential or null); everything else follows from the network.
 */
export const SIM_DEVICE_PATH = '/device';

/** Where the control API serves media bytes the network holds: `GET /sim/media/{mediaId}`. */
export const SIM_MEDIA_PATH = '/sim/media';

/**
 * The simulator's WhatsApp Web front door (CONTRACT 9): the socket Baileys connects to, `?sessionId=<id>` appended by
 * the gateway's test seam so the network knows which session a socket is (Baileys never says).
 */
export const SIM_WA_WEB_PATH = '/ws/chat';
/** `GET`: the test root its Noise certificate chain is signed with, {@link SimWaWebTrust}. */
export const SIM_WA_WEB_TRUST_PATH = '/sim/whatsapp-web/trust';
/** `POST`, benchmarks only (SIM_TEST_PRELINK): link a WhatsApp Web device made outside the QR flow (docs/network-sim.md). */
export const SIM_WA_WEB_DEVICES_PATH = '/sim/whatsapp-web/devices';

/** What a client must trust to accept the front door's certificate chain (Baileys' WA_CERT_DETAILS). */
export interface SimWaWebTrust {
  /** the test root's Curve25519 public key, 32 bytes, base64 */
  rootPublicKey: string;
  /** the root's serial, which the intermediate certificate names as its issuer */
  serial: number;
  /** the PEM certificate of the test CA that signs the media host's HTTPS certificate (per run; `media_conn` names the host) */
  mediaCa?: string;
  /** `host:port` of the media host (what `media_conn` names): the one host media is downloaded from under the test seam */
  mediaHost?: string;
}

/** The account a paired device is attached to. */
export interface SimAccount {
  /** `<digits>@s.whatsapp.net` */
  jid: string;
  /** `<digits>@lid`, stable per phone number for the simulator's lifetime */
  lid: string;
  /** digits only */
  phoneNumber: string;
}

/** What the engine stores through `AuthStateStore.writeCreds`; presented again in `hello` to resume without a QR. */
export interface SimCredential {
  kind: 'sim-device';
  token: string;
  account: SimAccount;
}

/** Whether a stored credential is the simulator's (the network refuses anything else; the sim engine does first). */
export function isSimCredential(value: unknown): value is SimCredential {
  const c = value as Partial<SimCredential> | null;
  return typeof c === 'object' && c !== null && c.kind === 'sim-device' && typeof c.token === 'string' && typeof c.account === 'object';
}

/** Media the network holds; its bytes are at `GET /sim/media/{mediaId}`. */
export interface SimMedia {
  mediaId: string;
  mimetype: string;
  size: number;
  filename: string | null;
  caption: string | null;
  /** hex sha256 of the bytes, so tests can compare what was sent with what arrived */
  sha256: string;
}

/** A message a contact (or a group member) sent to a device's account. `id` is its waMessageId. */
export interface SimInboundMessage {
  id: string;
  from: string;
  /** the contact's jid, or the group's */
  chatJid: string;
  type: Exclude<MessageType, 'reaction' | 'poll' | 'unknown'>;
  /** the text, or a media caption */
  text: string | null;
  media: SimMedia | null;
  location: LocationContent | null;
  contact: ContactContent | null;
  quotedWaMessageId: string | null;
  mentions: string[];
  timestamp: number;
  /** the name the sender gave itself on the network (`POST /sim/contacts {name}`), as WhatsApp carries a push name */
  pushName?: string | null;
  /** a business sender's verified name (WhatsApp carries it in the stanza's `verified_name` certificate) */
  verifiedName?: string | null;
}

/** A message the network received from a device, stored once per (session, waMessageId). */
export interface SimSentMessage {
  /** the waMessageId the device chose */
  id: string;
  sessionId: string;
  from: string;
  to: string;
  type: OutboundMessageType;
  /** the text, or a media caption */
  text: string | null;
  media: SimMedia | null;
  location: LocationContent | null;
  contact: ContactContent | null;
  poll: PollContent | null;
  reaction: { waMessageId: string; emoji: string } | null;
  quotedWaMessageId: string | null;
  mentions: string[];
  /** when the network first took it */
  timestamp: number;
  /** how many times a device sent this id; only the first one reached the recipient */
  sends: number;
  /** the device's edits of it, oldest first (CONTRACT 13) */
  edits: Array<{ text: string; at: number }>;
  /** epoch ms the device deleted it for everyone; null while it stands */
  revoked: number | null;
  /** sent as a forward of another message */
  forwarded: boolean;
  /** an audio sent as a voice note */
  ptt: boolean;
  /** a vote on a poll (`type` pollVote): the poll's waMessageId and the options picked */
  pollVote: { pollWaMessageId: string; options: string[] } | null;
  /** the link preview a text carried */
  linkPreview: LinkPreview | null;
  /** a status post (`to` status@broadcast): its audience and background, as the device sent them */
  status?: StatusPostOptions | null;
}

/** A call a contact placed to a device (`POST /sim/sessions/{id}/call`), as `GET /sim/calls` lists it. */
export interface SimCall {
  callId: string;
  sessionId: string;
  from: string;
  isVideo: boolean;
  at: number;
  /** epoch ms the device rejected it; null while it rings (or was never answered) */
  rejected: number | null;
  /** a status post (`to` status@broadcast): its audience and background, as the device sent them */
  status?: StatusPostOptions | null;
}

/** A contact's status (story) as the network delivers it to the devices of its audience. `id` is its waMessageId. */
export interface SimInboundStatus {
  id: string;
  from: string;
  type: 'text' | 'image' | 'video';
  text: string | null;
  media: SimMedia | null;
  backgroundColor: string | null;
  timestamp: number;
}

/** What a device did that its contacts can see besides messages (GET /sim/sessions/{id}/presence-log). */
export type SimPresenceLogEntry =
  | { type: 'presence'; chatJid: string; presence: 'composing' | 'paused' | ChatPresence; at: number }
  | { type: 'read'; chatJid: string; waMessageId: string; participant: string | null; at: number }
  /** the account shown online or offline to its contacts (`presence.account`) */
  | { type: 'account-presence'; presence: AccountPresence; at: number }
  /** the device asked for a contact's presence updates (`presence.subscribe`) */
  | { type: 'presence-subscribe'; jid: string; at: number };

/** `POST /sim/contacts`: an account on the network, as its owner set it up (docs/network-sim.md). */
export interface SimContactView {
  jid: string;
  lid: string;
  phoneNumber: string;
  name: string | null;
  about: string | null;
  pictureSha256: string | null;
  isBusiness: boolean;
  /** the devices told of the change (those that know this account) */
  delivered: string[];
}

/** `GET /sim/sessions/{id}/account`: the paired device's account as the network keeps it. */
export interface SimAccountView {
  name: string | null;
  about: string | null;
  pictureSha256: string | null;
  blocked: string[];
  /** per chat state (archive, pin, mute, read) as the account set it: the chats area's */
  chats: Record<string, unknown>;
}

/** A chat's state as the phone changed it (`chat-update`): `jid` and the fields that changed. */
export type SimChatChange = { jid: string } & Partial<ChatState & { unreadCount: number }>;

/** A chat of a history sync batch. */
export interface SimHistoryChat extends ChatState {
  jid: string;
  name: string | null;
  unreadCount: number;
}

/** A message of a history sync batch: received by the account, or sent from it (`fromMe`). */
export interface SimHistoryMessage extends SimInboundMessage {
  fromMe: boolean;
}

/** participants: member jids, the owner first (as WhatsApp lists the creator among the participants). */
export interface SimGroup extends GroupInfo {
  sessionId: string;
  createdAt: number;
}

/** Media bytes on the wire of the device protocol. */
export interface SimOutboundMedia {
  /** the bytes, base64 */
  data: string;
  mimetype: string;
  filename: string | null;
}

/** Content with its media bytes in wire form: the seam's type, so a new content type reaches the wire by itself. */
type WithWireMedia<T> = T extends { media: OutboundMedia } ? Omit<T, 'media'> & { media: SimOutboundMedia } : T;

/** `OutboundContent` of `@app/contracts` messages, with the media bytes as base64. */
export type SimOutboundContent = WithWireMedia<OutboundContent>;

/** `OutboundMessage` on the wire: the whole of it, bytes as base64. */
export type SimSendArgs = Omit<OutboundMessage, 'content' | 'quoted'> & {
  content: SimOutboundContent;
  quoted: (MessageKeyRef & { raw: string | null }) | null;
};

/** Requests a connected device may make, with their arguments and results. */
export interface SimDeviceOps {
  requestPairingCode: { args: { phoneNumber: string }; result: { code: string } };
  createGroup: { args: { subject: string; participants: string[] }; result: SimGroup };
  /** `duplicate`: the network already had this waMessageId from the device; acknowledged, not delivered again */
  send: { args: SimSendArgs; result: { waMessageId: string; timestamp: number; duplicate: boolean } };
  presence: { args: { chatJid: string; presence: 'composing' | 'paused' }; result: Record<string, never> };
  read: { args: { keys: MessageKeyRef[] }; result: Record<string, never> };
  /** Unlinks the device; the network answers, then closes the socket with `loggedOut`. */
  logout: { args: Record<string, never>; result: Record<string, never> };
  /** one operation of SessionActionMap (session-actions.ts), played by apps/network-sim/src/actions */
  action: { args: { action: string; args: unknown }; result: unknown };
}
export type SimDeviceOp = keyof SimDeviceOps;

/** device → network */
export type SimDeviceFrame =
  | { type: 'hello'; credential: unknown }
  | { [K in SimDeviceOp]: { type: 'request'; id: number; op: K; args: SimDeviceOps[K]['args'] } }[SimDeviceOp]
  /**
   * The device acknowledges a network event (CONTRACT 9, Acknowledgements): sent only once the device has made the
   * event durable (stored it, with what announces it). The network keeps every event it delivers until it is acked and
   * delivers the un-acked ones again, in their order, on the next open of the device; an event the device cannot
   * make durable now is simply not acked. Acking an event twice, or from a socket already replaced, is harmless.
   */
  | { type: 'ack'; eventId: string };

/**
 * What the network tells a device about the world. Each frame carries an `eventId`; the network holds the event until
 * the device acks that id, and re-sends what is un-acked on every open (at-least-once, as WhatsApp does).
 */
export type SimNetworkEvent =
  | { type: 'message'; message: SimInboundMessage }
  /** the recipient's phone reports a message the device sent */
  | { type: 'receipt'; waMessageId: string; chatJid: string; status: AckStatus; /** in a group: the member whose phone reported it */ participant?: string }
  | { type: 'reaction'; waMessageId: string; chatJid: string; from: string; emoji: string }
  /** option names: the network knows the poll the device sent */
  | { type: 'poll-vote'; pollWaMessageId: string; chatJid: string; voter: string; selectedOptions: string[] }
  | { type: 'presence'; chatJid: string; jid: string; presence: Presence }
  | { type: 'call'; callId: string; from: string; isVideo: boolean; isGroup: boolean }
  /** `actor`: the member who made the change (absent when the control API played an unnamed admin) */
  | { type: 'group-update'; groupJid: string; changes: GroupChanges; actor?: string }
  | { type: 'group-participants'; groupJid: string; action: GroupParticipantAction; participants: string[]; actor?: string }
  /** an account the device knows changed its name or business flag (`POST /sim/contacts`) */
  | { type: 'contact'; contact: ContactFacts }
  /** the phone changed chats' state (archive, pin, mute, read): only the fields that changed */
  | { type: 'chat-update'; chats: SimChatChange[] }
  /** one batch of the history the phone sends a newly paired device (CONTRACT 12, `syncHistory`) */
  | { type: 'history'; chats: SimHistoryChat[]; messages: SimHistoryMessage[] }
  /** a contact edited a message it sent (`text`: the new text or caption) */
  | { type: 'edit'; waMessageId: string; chatJid: string; from: string; text: string }
  /** a contact deleted a message it sent, for everyone */
  | { type: 'revoke'; waMessageId: string; chatJid: string; by: string }
  /** the account's business labels changed (the phone edited one, or a device assigned one) */
  | { type: 'label'; change: LabelUpdatePayload }
  /** a contact posted a status the account may see */
  | { type: 'status'; status: SimInboundStatus }
  /** a post in a channel the account follows */
  | { type: 'channel-message'; post: ChannelMessageView };
export type SimNetworkEventType = SimNetworkEvent['type'];

/** network → device */
export type SimNetworkFrame =
  | { type: 'qr'; qr: string; expiresAt: number }
  /** First pairing (QR scan or pairing code): store the credential, the device is open. */
  | { type: 'paired'; credential: SimCredential }
  /** Resumed with a valid stored credential. */
  | { type: 'open'; account: SimAccount }
  | ({ eventId: string } & SimNetworkEvent)
  | { type: 'response'; id: number; ok: true; result: unknown }
  | { type: 'response'; id: number; ok: false; error: { code: string; message: string; details: Record<string, unknown> } };

/**
 * WebSocket close codes the network uses; a transient drop is an abrupt end of the socket (1006), as on a real network.
 * The last three digits echo the WhatsApp/Baileys status code the engine reports (except `badSession`, which no
 * WhatsApp close means).
 */
export const SIM_CLOSE_CODES = {
  /** malformed frame or hello */
  protocolError: 4400,
  /** the credential was revoked (unlink, logout, a `failure-401` fault) or is unknown to the network */
  loggedOut: 4401,
  /** WhatsApp refuses the account (a `failure-403` fault) */
  forbidden: 4403,
  /** WhatsApp refuses this client's version (a `failure-405` fault) */
  clientVersionRefused: 4405,
  /** another connection took over the device (or a `conflict` fault) */
  replaced: 4440,
  /** a stream error without a code (`stream-error-ack`): Baileys reports 500 for it, and it is transient */
  streamError: 4500,
  /** the stored credential is not a simulator credential */
  badSession: 4501,
  /** the network asks the device to reconnect (`stream-error-515`) */
  restartRequired: 4515,
} as const;

/**
 * `POST /sim/sessions/{id}/fault {kind}` (CONTRACT 9): how the network misbehaves toward a connected device, once.
 * `silent` stops answering (no frames, no pongs) without closing: the device has to notice by its keepalive.
 */
export const SIM_FAULT_KINDS = [
  'drop',
  'silent',
  'stream-error-515',
  'stream-error-ack',
  'conflict',
  'failure-401',
  'failure-403',
  'failure-405',
] as const;
export type SimFaultKind = (typeof SIM_FAULT_KINDS)[number];
