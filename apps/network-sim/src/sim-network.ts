import {
  DomainError,
  SIM_CLOSE_CODES,
  SimAccount,
  SimCredential,
  isSimCredential,
  SimDeviceOp,
  SimDeviceOps,
  SimFaultKind,
  SimGroup,
  SimInboundMessage,
  SimMedia,
  SimNetworkEvent,
  SimNetworkFrame,
  SimPresenceLogEntry,
  SimSentMessage,
  USER_JID_PATTERN,
} from '@app/contracts';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import {
  MAX_SUBJECT_LENGTH,
  MediaInput,
  normalizePhoneNumber,
  parseCall,
  parseContactEdit,
  parseContactRevoke,
  parseDevicePresence,
  parseGroupParticipants,
  parseGroupPatch,
  parseInbound,
  parsePollVote,
  parsePresence,
  parseRead,
  parseReaction,
  parseReceipt,
  parseSend,
  requireText,
  validation,
} from './sim-input';
import { type Delivery, performSimAction, SimWorld, type SimWorldScope } from './actions';
import { parseSimHistory } from './actions/chats';
import { applyParticipantChange } from './actions/group-admin';

/** The network's end of one device connection; the transport (WebSocket) lives elsewhere. */
export interface DeviceLink {
  send(frame: SimNetworkFrame): void;
  /** Orderly close with one of SIM_CLOSE_CODES. */
  close(code: number, reason: string): void;
  /** Abrupt end of the socket, as when the network drops it. */
  drop(): void;
  /** Stop answering (no frames, no pongs) without closing: the `silent` fault. Absent on a transport that cannot. */
  silence?(): void;
  /**
   * Plays a fault of the control API in this door's own protocol (WhatsApp Web: its stanzas, whatsapp-web/faults.ts).
   * Absent on the sim device door, where sim-faults.ts maps the fault onto close/drop/silence.
   */
  fault?(kind: SimFaultKind): void;
  /** The QR as this device shows it, for a front door whose client draws its QR itself (WhatsApp Web). */
  showQr?(): string | null;
}

/** How the network sees a device: never linked yet, linked to a phone, or removed by the phone. */
export type DeviceState = 'unpaired' | 'paired' | 'unlinked';

export interface DeviceView {
  sessionId: string;
  state: DeviceState;
  qr: string | null;
  jid: string | null;
  lid: string | null;
  phoneNumber: string | null;
  connected: boolean;
  /** How often the device came online (paired, or `open` on a resume): a second holder's reconnect shows here. */
  opens: number;
  /**
   * The most sockets of this device open at once, counting a replaced one until its transport has closed: above 1
   * means two gateways held the device at the same time, which on WhatsApp drops both.
   */
  maxConcurrent: number;
  /** Network events (messages, receipts, reactions, …) the device has not acknowledged yet: delivered again on its next open. */
  pendingInbound: number;
}

type PendingEvent = { eventId: string } & SimNetworkEvent;

/** Media bytes the network holds, served at `GET /sim/media/{mediaId}`. */
export interface StoredMedia {
  data: Buffer;
  mimetype: string;
  filename: string | null;
}

interface Device {
  sessionId: string;
  state: DeviceState;
  token: string | null;
  account: SimAccount | null;
  link: DeviceLink | null;
  qr: string | null;
  qrTimer: NodeJS.Timeout | null;
  pairingCode: { code: string; phoneNumber: string } | null;
  /**
   * Every network event delivered (or waiting to be) and not acknowledged yet, by eventId, in delivery order (a Map
   * keeps insertion order): on each open the device gets exactly this, again, in this order.
   */
  pending: Map<string, PendingEvent>;
  presenceLog: SimPresenceLogEntry[];
  opens: number;
  /** every link attached to the device whose transport has not closed yet (the current one and replaced ones) */
  sockets: Set<DeviceLink>;
  maxConcurrent: number;
}

export interface SimNetworkOptions {
  qrIntervalMs: number;
}

/** WhatsApp's pairing-code alphabet: no 0, O, I or U, so the code reads back unambiguously. */
const PAIRING_CODE_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTVWXYZ';

function newWaMessageId(): string {
  return `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
}

function randomDigits(n: number): string {
  let s = String(randomInt(1, 10));
  while (s.length < n) s += String(randomInt(0, 10));
  return s;
}

/** Shaped like a WhatsApp Web QR payload: ref, noise key, identity key, adv secret. */
function newQr(): string {
  return `2@${randomBytes(24).toString('base64')},${randomBytes(32).toString('base64')},${randomBytes(32).toString('base64')},${randomBytes(32).toString('base64')}`;
}

/**
 * The simulated WhatsApp network: devices (keyed by the gateway's session id), their pairing with a phone,
 * the groups they create and the messages they send. In memory; it is a test and demo tool.
 * State is per session id so tests sharing one simulator never see each other.
 */
export class SimNetwork {
  private readonly devices = new Map<string, Device>();
  private readonly lidByPhone = new Map<string, string>();
  private readonly groups: SimGroup[] = [];
  private readonly sent: SimSentMessage[] = [];
  /** `${sessionId} ${waMessageId}`: WhatsApp stores a message once per sender and id */
  private readonly sentByKey = new Map<string, SimSentMessage>();
  /** chats of the messages delivered to each device, `${sessionId} ${waMessageId}` → chatJid, for reactions */
  private readonly deliveredChats = new Map<string, string>();
  /** the messages delivered to each device, `${sessionId} ${waMessageId}`: what a forward copies, a contact edits */
  private readonly delivered = new Map<string, SimInboundMessage>();
  private readonly media = new Map<string, StoredMedia>();
  private groupSeq = 0;
  /** the state of CONTRACT 12 and 13's operations (accounts, chat state, labels, statuses, channels, calls) */
  readonly world = new SimWorld();

  constructor(private readonly options: SimNetworkOptions) {}

  // ---- device side -------------------------------------------------------------------------

  /** A device said hello. Null credential: a fresh QR flow. Otherwise resume, or refuse it. */
  attach(sessionId: string, link: DeviceLink, credential: unknown): void {
    if (credential === null || credential === undefined) {
      const device = this.devices.get(sessionId) ?? this.newDevice(sessionId);
      this.takeOver(device, link);
      // a fresh QR flow on a paired device forgets the old pairing, as re-linking a wiped device does
      this.forgetPairing(device, 'unpaired');
      this.startQrFlow(device);
      return;
    }
    if (!isSimCredential(credential)) {
      link.close(SIM_CLOSE_CODES.badSession, 'not a simulator credential');
      return;
    }
    const device = this.devices.get(sessionId);
    if (!device || device.state !== 'paired' || device.token !== credential.token) {
      link.close(SIM_CLOSE_CODES.loggedOut, 'credential revoked or unknown');
      return;
    }
    this.takeOver(device, link);
    device.opens += 1;
    link.send({ type: 'open', account: device.account! });
    for (const event of device.pending.values()) link.send(event);
  }

  /** The transport closed; only the current link of a device counts (a replaced one is already detached). */
  detach(sessionId: string, link: DeviceLink): void {
    const device = this.devices.get(sessionId);
    device?.sockets.delete(link);
    if (!device || device.link !== link) return;
    device.link = null;
    this.stopQr(device);
  }

  /**
   * The device has made an event durable (CONTRACT 9, Acknowledgements): the network forgets it. Any socket of the
   * device whose transport is still open may ack what it was given, a replaced one too (its ack frames were sent
   * before its close): the ack says "stored", whoever stored it. An unknown eventId (acked twice) changes nothing.
   */
  ack(sessionId: string, link: DeviceLink, eventId: string): void {
    const device = this.devices.get(sessionId);
    if (!device || !device.sockets.has(link)) return;
    const event = device.pending.get(eventId);
    device.pending.delete(eventId);
    // a history sync sends its next batch once the device stored the one before (actions/chats.ts)
    this.world.chats.acked(sessionId, event);
  }

  request<K extends SimDeviceOp>(sessionId: string, link: DeviceLink, op: K, args: SimDeviceOps[K]['args']): SimDeviceOps[K]['result'] {
    const device = this.devices.get(sessionId);
    if (!device || device.link !== link) throw new DomainError('conflict', 'this connection no longer holds the device');
    const a = (args ?? {}) as Record<string, unknown>;
    switch (op) {
      case 'requestPairingCode':
        return this.requestPairingCode(device, a.phoneNumber) as SimDeviceOps[K]['result'];
      case 'createGroup':
        return this.createGroup(device, a.subject, a.participants) as SimDeviceOps[K]['result'];
      case 'send':
        return this.send(device, a) as SimDeviceOps[K]['result'];
      case 'presence': {
        this.requirePaired(device);
        const { chatJid, presence } = parseDevicePresence(a);
        device.presenceLog.push({ type: 'presence', chatJid, presence, at: Date.now() });
        return {} as SimDeviceOps[K]['result'];
      }
      case 'read': {
        this.requirePaired(device);
        const at = Date.now();
        for (const key of parseRead(a)) device.presenceLog.push({ type: 'read', ...key, at });
        return {} as SimDeviceOps[K]['result'];
      }
      case 'action':
        return performSimAction(this.actionScope(device), a.action, a.args) as SimDeviceOps[K]['result'];
      case 'logout':
        this.requirePaired(device);
        // answer first, then close: the caller learns the unlink succeeded before the socket ends
        setImmediate(() => this.unlink(device.sessionId));
        return {} as SimDeviceOps[K]['result'];
      default:
        throw new DomainError('validation_error', `unknown operation ${String(op)}`, { op });
    }
  }

  // ---- control side (the phone, contacts, and test observers) -------------------------------

  view(sessionId: string): DeviceView {
    const d = this.device(sessionId);
    return {
      sessionId: d.sessionId,
      state: d.state,
      qr: d.qr === null ? null : (d.link?.showQr?.() ?? d.qr),
      jid: d.account?.jid ?? null,
      lid: d.account?.lid ?? null,
      phoneNumber: d.account?.phoneNumber ?? null,
      connected: d.link !== null,
      opens: d.opens,
      maxConcurrent: d.maxConcurrent,
      pendingInbound: d.pending.size,
    };
  }

  /** The phone scans the QR the device shows (optionally checking it is the one the caller saw). */
  scan(sessionId: string, body: { phoneNumber?: unknown; qr?: unknown; history?: unknown; isBusiness?: unknown }): DeviceView {
    const device = this.device(sessionId);
    if (!device.link || device.state !== 'unpaired' || !device.qr) {
      throw new DomainError('conflict', 'the device is not showing a QR code', { state: device.state, connected: device.link !== null });
    }
    if (body.qr !== undefined && body.qr !== device.qr) throw new DomainError('conflict', 'this QR code has expired', {});
    const phoneNumber = body.phoneNumber === undefined ? `1555${randomDigits(7)}` : normalizePhoneNumber(body.phoneNumber);
    // checked before pairing, so a bad history pairs nothing
    const history = body.history === undefined ? null : parseSimHistory(body.history);
    if (body.isBusiness !== undefined && typeof body.isBusiness !== 'boolean') throw validation('isBusiness', 'must be a boolean');
    // the phone's app first: the pairing tells the device its platform (WhatsApp Business or not)
    if (typeof body.isBusiness === 'boolean') this.world.accountExtras.setBusiness(`${phoneNumber}@s.whatsapp.net`, body.isBusiness);
    this.pair(device, phoneNumber);
    if (history) this.world.chats.playHistory(device.account!, sessionId, history, (event) => this.deliver(device, event));
    return this.view(sessionId);
  }

  /** The phone enters the pairing code the device asked for. */
  enterPairingCode(sessionId: string, body: { code?: unknown }): DeviceView {
    const device = this.device(sessionId);
    if (!device.pairingCode || !device.link || device.state !== 'unpaired') {
      throw new DomainError('conflict', 'the device has not requested a pairing code', { state: device.state });
    }
    const entered = typeof body.code === 'string' ? body.code.replace(/[\s-]/g, '').toUpperCase() : '';
    if (entered !== device.pairingCode.code) throw validation('code', 'does not match the pairing code');
    this.pair(device, device.pairingCode.phoneNumber);
    return this.view(sessionId);
  }

  /** A contact (or a group member) sends the device's account a message; held until the device takes it. */
  inbound(sessionId: string, body: Record<string, unknown>): { id: string } & Delivery {
    const device = this.pairedDevice(sessionId);
    const input = parseInbound(body);
    const message: SimInboundMessage = {
      id: newWaMessageId(),
      from: input.from,
      chatJid: input.chatJid,
      type: input.type,
      text: input.text,
      media: input.media ? this.keepMedia(input.media) : null,
      location: input.location,
      contact: input.contact,
      quotedWaMessageId: input.quotedWaMessageId,
      mentions: input.mentions,
      timestamp: Date.now(),
      // the sender exists on the network; its push name travels with its messages (world.contacts)
      pushName: this.world.contacts.noteInbound(sessionId, input.from).pushName,
    };
    this.deliveredChats.set(messageKey(sessionId, message.id), message.chatJid);
    this.delivered.set(messageKey(sessionId, message.id), message);
    return { id: message.id, ...this.deliver(device, { type: 'message', message }) };
  }

  /** A contact edits a message it sent the device (`POST /sim/sessions/{id}/edit {from, waMessageId, text}`). */
  contactEdit(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.pairedDevice(sessionId);
    const { from, waMessageId, text } = parseContactEdit(body);
    const message = this.contactMessage(sessionId, from, waMessageId);
    return this.deliver(device, { type: 'edit', waMessageId, chatJid: message.chatJid, from, text });
  }

  /** A contact deletes for everyone a message it sent the device (`POST /sim/sessions/{id}/revoke {from, waMessageId}`). */
  contactRevoke(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.pairedDevice(sessionId);
    const { from, waMessageId } = parseContactRevoke(body);
    const message = this.contactMessage(sessionId, from, waMessageId);
    return this.deliver(device, { type: 'revoke', waMessageId, chatJid: message.chatJid, by: from });
  }

  /** A message the device sent (what its message actions may change), or undefined. */
  findSent(sessionId: string, waMessageId: unknown): SimSentMessage | undefined {
    return typeof waMessageId === 'string' ? this.sentByKey.get(messageKey(sessionId, waMessageId)) : undefined;
  }

  /** The recipient's phone reports a message the device sent as delivered, read or played. */
  receipt(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.pairedDevice(sessionId);
    const { waMessageId, status, from } = parseReceipt(body);
    const sent = this.sentMessage(sessionId, waMessageId, 'waMessageId');
    // in a group each member's phone reports on its own (`from`, a member); 1:1 the contact is the chat
    if (from !== undefined && !this.group(sent.to, 'from').participants.includes(from)) throw validation('from', 'must be a member of the group the message was sent to');
    return this.deliver(device, { type: 'receipt', waMessageId, chatJid: sent.to, status, ...(from ? { participant: from } : {}) });
  }

  /** A contact reacts to a message of a chat with the device: one it sent or one it received. */
  reaction(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.pairedDevice(sessionId);
    const { from, waMessageId, emoji } = parseReaction(body);
    const key = messageKey(sessionId, waMessageId);
    const chatJid = this.sentByKey.get(key)?.to ?? this.deliveredChats.get(key);
    if (!chatJid) throw new DomainError('not_found', 'the device neither sent nor received this message', { waMessageId });
    return this.deliver(device, { type: 'reaction', waMessageId, chatJid, from, emoji });
  }

  /** A contact votes on a poll the device sent; options are checked against the poll's. */
  pollVote(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.pairedDevice(sessionId);
    const { from, pollWaMessageId, options } = parsePollVote(body);
    const sent = this.sentMessage(sessionId, pollWaMessageId, 'pollWaMessageId');
    if (!sent.poll) throw validation('pollWaMessageId', 'is not a poll');
    const unknown = options.filter((o) => !sent.poll!.options.includes(o));
    if (unknown.length > 0) throw new DomainError('validation_error', 'options are not options of this poll', { options: unknown });
    if (options.length > sent.poll.selectableCount) throw validation('options', `must pick at most ${sent.poll.selectableCount}`);
    return this.deliver(device, { type: 'poll-vote', pollWaMessageId, chatJid: sent.to, voter: from, selectedOptions: options });
  }

  presence(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.pairedDevice(sessionId);
    return this.deliver(device, { type: 'presence', ...parsePresence(body) });
  }

  call(sessionId: string, body: Record<string, unknown>): { callId: string } & Delivery {
    const device = this.pairedDevice(sessionId);
    const { from, isVideo } = parseCall(body);
    const { callId } = this.world.messages.placeCall(sessionId, from, isVideo);
    return { callId, ...this.deliver(device, { type: 'call', callId, from, isVideo, isGroup: false }) };
  }

  /** An admin adds, removes, promotes or demotes members; every member's device (before and after) is told. */
  groupParticipants(groupJid: string, body: Record<string, unknown>): SimGroup & { delivered: string[] } {
    const group = this.group(groupJid);
    const { action, participants } = parseGroupParticipants(body);
    const before = group.participants;
    applyParticipantChange(group, action, participants);
    const delivered = this.deliverToGroup(group, [...before, ...group.participants], { type: 'group-participants', groupJid, action, participants });
    return { ...group, participants: [...group.participants], delivered };
  }

  /** An admin changes the subject, description or settings. */
  patchGroup(groupJid: string, body: Record<string, unknown>): SimGroup & { delivered: string[] } {
    const group = this.group(groupJid);
    const changes = parseGroupPatch(body);
    Object.assign(group, changes);
    const delivered = this.deliverToGroup(group, group.participants, { type: 'group-update', groupJid, changes });
    return { ...group, participants: [...group.participants], delivered };
  }

  /** Sends a network event to a session's paired device (queued while it is offline); null when it is not paired. */
  deliverTo(sessionId: string, event: SimNetworkEvent): Delivery | null {
    const device = this.devices.get(sessionId);
    return device && device.state === 'paired' ? this.deliver(device, event) : null;
  }

  /** A network event for a paired device from the control API (the phone changed something): held until it is acked. */
  deliverToPaired(sessionId: string, event: SimNetworkEvent): Delivery {
    return this.deliver(this.pairedDevice(sessionId), event);
  }

  presenceLog(sessionId: string): SimPresenceLogEntry[] {
    return [...this.device(sessionId).presenceLog];
  }

  mediaBytes(mediaId: string): StoredMedia {
    const media = this.media.get(mediaId);
    if (!media) throw new DomainError('not_found', 'the network has no media with this id', { mediaId });
    return media;
  }

  /** A transient network drop: the socket ends, the pairing stays. */
  drop(sessionId: string): DeviceView {
    return this.endConnection(sessionId, (link) => link.drop());
  }

  /**
   * The network ends the device's current connection its own way (`end`: a drop, a close code, silence; see
   * sim-faults.ts). From here the device is offline for the network: what arrives for it waits. `forgetDevice`: the
   * network forgets the device too (a 401: a paired device is unlinked, a pairing in progress is dropped).
   */
  endConnection(sessionId: string, end: (link: DeviceLink) => void, options: { forgetDevice?: boolean } = {}): DeviceView {
    const device = this.device(sessionId);
    const link = device.link;
    if (!link) throw new DomainError('conflict', 'the device is not connected', {});
    // the transport acts later (a close or a drop is asynchronous), so a fault it cannot play changes nothing here
    end(link);
    if (options.forgetDevice) this.forgetPairing(device, device.state === 'paired' ? 'unlinked' : 'unpaired');
    this.release(device);
    return this.view(sessionId);
  }

  /** The phone removes the linked device: the credential is revoked and a connected device is logged out. Idempotent. */
  unlink(sessionId: string): DeviceView {
    const device = this.device(sessionId);
    if (device.state === 'paired') {
      const link = device.link;
      this.forgetPairing(device, 'unlinked');
      if (link) {
        this.release(device);
        link.close(SIM_CLOSE_CODES.loggedOut, 'logged out');
      }
    }
    return this.view(sessionId);
  }

  /** The account's lid on the network (`<digits>@lid`, stable per phone number, for contacts as for paired devices). */
  lidOf(phoneNumber: string): string {
    let lid = this.lidByPhone.get(phoneNumber);
    if (!lid) {
      lid = `${randomDigits(15)}@lid`;
      this.lidByPhone.set(phoneNumber, lid);
    }
    return lid;
  }

  /**
   * Whether an account with this number exists on the network: a paired device's, or one the network has given a LID
   * (group administration answers `not_on_whatsapp` otherwise).
   */
  hasAccount(jid: string): boolean {
    const phoneNumber = jid.split('@')[0];
    if (this.lidByPhone.has(phoneNumber) || this.world.contacts.exists(phoneNumber)) return true;
    return [...this.devices.values()].some((d) => d.account?.phoneNumber === phoneNumber);
  }

  /** Keeps bytes the network serves at `GET /sim/media/{mediaId}` (a group's picture); answers the mediaId. */
  holdMedia(data: Buffer, mimetype: string): string {
    return this.keepMedia({ data, mimetype, filename: null, caption: null }).mediaId;
  }

  listGroups(sessionId?: string): SimGroup[] {
    return sessionId ? this.groups.filter((g) => g.sessionId === sessionId) : [...this.groups];
  }

  listMessages(sessionId?: string): SimSentMessage[] {
    return sessionId ? this.sent.filter((m) => m.sessionId === sessionId) : [...this.sent];
  }

  // ---- for the state of CONTRACT 12/13 (actions/world.ts): reaching devices by account ----------

  /** The session ids of the paired devices of an account. */
  sessionsOfAccount(jid: string): string[] {
    return [...this.devices.values()].filter((d) => d.state === 'paired' && d.account?.jid === jid).map((d) => d.sessionId);
  }

  /** The account of a paired device. */
  accountOf(sessionId: string): SimAccount {
    return this.requirePaired(this.device(sessionId));
  }

  /** Keeps media bytes on the network, served at `GET /sim/media/{mediaId}`. */
  keepMediaBytes(input: MediaInput): SimMedia {
    return this.keepMedia(input);
  }

  /** Ends every connection (the simulator is shutting down). */
  closeAll(): void {
    for (const device of this.devices.values()) {
      const link = device.link;
      this.release(device);
      link?.drop();
    }
  }

  // ---- internals ---------------------------------------------------------------------------

  private device(sessionId: string): Device {
    const device = this.devices.get(sessionId);
    if (!device) throw new DomainError('not_found', 'no device with this session id has connected to the network', { sessionId });
    return device;
  }

  private newDevice(sessionId: string): Device {
    const device: Device = {
      sessionId,
      state: 'unpaired',
      token: null,
      account: null,
      link: null,
      qr: null,
      qrTimer: null,
      pairingCode: null,
      pending: new Map(),
      presenceLog: [],
      opens: 0,
      sockets: new Set(),
      maxConcurrent: 0,
    };
    this.devices.set(sessionId, device);
    return device;
  }

  /** WhatsApp keeps one socket per device: a newer connection replaces the older one. */
  private takeOver(device: Device, link: DeviceLink): void {
    const previous = device.link;
    this.release(device);
    device.link = link;
    device.sockets.add(link);
    device.maxConcurrent = Math.max(device.maxConcurrent, device.sockets.size);
    previous?.close(SIM_CLOSE_CODES.replaced, 'replaced by another connection');
  }

  private release(device: Device): void {
    device.link = null;
    this.stopQr(device);
  }

  private forgetPairing(device: Device, state: 'unpaired' | 'unlinked'): void {
    device.state = state;
    device.token = null;
    device.account = null;
    device.pairingCode = null;
    device.pending = new Map();
  }

  private startQrFlow(device: Device): void {
    this.stopQr(device);
    const rotate = () => {
      if (!device.link) return;
      device.qr = newQr();
      device.link.send({ type: 'qr', qr: device.qr, expiresAt: Date.now() + this.options.qrIntervalMs });
    };
    rotate();
    device.qrTimer = setInterval(rotate, this.options.qrIntervalMs);
  }

  private stopQr(device: Device): void {
    if (device.qrTimer) clearInterval(device.qrTimer);
    device.qrTimer = null;
    device.qr = null;
  }

  private pair(device: Device, phoneNumber: string): void {
    const credential = this.issueCredential(device, phoneNumber);
    // pairing brings the device online on this socket, as a resume with the credential does
    device.opens += 1;
    device.link!.send({ type: 'paired', credential });
  }

  /**
   * Benchmarks only (SIM_TEST_PRELINK, whatsapp-web/prelink.ts): a device paired to `phoneNumber` without a socket or a
   * QR, as if its phone had scanned one earlier; it logs in later with the credential like any paired device.
   */
  prelink(sessionId: string, phoneNumber: string): SimCredential {
    const device = this.devices.get(sessionId) ?? this.newDevice(sessionId);
    if (device.link) throw new DomainError('conflict', 'the device is connected: pair it through its screen', { sessionId });
    return this.issueCredential(device, normalizePhoneNumber(phoneNumber));
  }

  private issueCredential(device: Device, phoneNumber: string): SimCredential {
    const lid = this.lidOf(phoneNumber);
    this.world.contacts.register(phoneNumber);
    const credential: SimCredential = {
      kind: 'sim-device',
      token: randomBytes(24).toString('base64url'),
      account: { jid: `${phoneNumber}@s.whatsapp.net`, lid, phoneNumber },
    };
    this.stopQr(device);
    device.state = 'paired';
    device.token = credential.token;
    device.account = credential.account;
    device.pairingCode = null;
    device.pending = new Map();
    return credential;
  }

  private requirePaired(device: Device): SimAccount {
    if (device.state !== 'paired' || !device.account) throw new DomainError('conflict', 'the device is not paired', { state: device.state });
    return device.account;
  }

  private requestPairingCode(device: Device, phone: unknown): { code: string } {
    if (device.state === 'paired') throw new DomainError('conflict', 'the device is already paired', {});
    const phoneNumber = normalizePhoneNumber(phone);
    let code = '';
    for (let i = 0; i < 8; i++) code += PAIRING_CODE_ALPHABET[randomInt(PAIRING_CODE_ALPHABET.length)];
    device.pairingCode = { code, phoneNumber };
    // the user is typing a code now; rotating QRs nobody looks at would only run the session into `failed`
    this.stopQr(device);
    return { code };
  }

  private createGroup(device: Device, subject: unknown, participants: unknown): SimGroup {
    const owner = this.requirePaired(device);
    const name = requireText('subject', subject, MAX_SUBJECT_LENGTH);
    const members = participants ?? [];
    if (!Array.isArray(members)) throw validation('participants', 'must be an array of jids');
    const invalid = members.filter((p) => typeof p !== 'string' || !USER_JID_PATTERN.test(p));
    if (invalid.length > 0) {
      throw new DomainError('validation_error', 'participants must be jids of the form <digits>@s.whatsapp.net', {
        participants: invalid,
      });
    }
    this.groupSeq += 1;
    const group: SimGroup = {
      groupJid: `${owner.phoneNumber}-${Math.floor(Date.now() / 1000)}${String(this.groupSeq).padStart(4, '0')}@g.us`,
      subject: name,
      description: '',
      ownerJid: owner.jid,
      participants: [...new Set([owner.jid, ...(members as string[])])],
      isAnnounce: false,
      isLocked: false,
      admins: [owner.jid],
      superAdmins: [owner.jid],
      sessionId: device.sessionId,
      createdAt: Date.now(),
    };
    this.groups.push(group);
    return group;
  }

  /** Stores a device's message once per waMessageId: a re-send is acknowledged, never delivered twice. */
  private send(device: Device, args: Record<string, unknown>): SimDeviceOps['send']['result'] {
    const account = this.requirePaired(device);
    const input = parseSend(args);
    const key = messageKey(device.sessionId, input.waMessageId);
    const known = this.sentByKey.get(key);
    if (known) {
      known.sends += 1;
      return { waMessageId: known.id, timestamp: known.timestamp, duplicate: true };
    }
    if (input.pollVote) this.checkPollVote(device.sessionId, input.pollVote);
    const message: SimSentMessage = {
      id: input.waMessageId,
      sessionId: device.sessionId,
      from: account.jid,
      to: input.to,
      type: input.type === 'forward' ? 'text' : input.type,
      text: input.text,
      media: input.media ? this.keepMedia(input.media) : null,
      location: input.location,
      contact: input.contact,
      poll: input.poll,
      reaction: input.reaction,
      quotedWaMessageId: input.quotedWaMessageId,
      mentions: input.mentions,
      timestamp: Date.now(),
      sends: 1,
      edits: [],
      revoked: null,
      forwarded: false,
      ptt: input.ptt,
      pollVote: input.pollVote,
      linkPreview: input.linkPreview,
      ...(input.status ? { status: input.status } : {}),
    };
    if (input.forwardOf) Object.assign(message, this.forwardedContent(device.sessionId, input.forwardOf));
    this.sent.push(message);
    this.sentByKey.set(key, message);
    if (message.status) this.world.accountExtras.statusPosted(this, message);
    return { waMessageId: message.id, timestamp: message.timestamp, duplicate: false };
  }

  /** What a forward copies: the content of a message the device sent or received, marked forwarded. */
  private forwardedContent(sessionId: string, waMessageId: string): Partial<SimSentMessage> {
    const key = messageKey(sessionId, waMessageId);
    const original: SimSentMessage | SimInboundMessage | undefined = this.sentByKey.get(key) ?? this.delivered.get(key);
    if (!original) throw new DomainError('not_found', 'the device neither sent nor received the message it forwards', { waMessageId });
    if (!['text', 'image', 'video', 'audio', 'voice', 'document', 'sticker', 'location', 'contact'].includes(original.type)) {
      throw validation('content.original.waMessageId', `a ${original.type} message cannot be forwarded`);
    }
    return {
      type: original.type as SimSentMessage['type'],
      text: original.text,
      media: original.media,
      location: original.location,
      contact: original.contact,
      ptt: 'ptt' in original ? original.ptt : false,
      forwarded: true,
    };
  }

  /** A device votes on a poll it sent (contacts cannot send polls on this network yet), with that poll's options. */
  private checkPollVote(sessionId: string, vote: { pollWaMessageId: string; options: string[] }): void {
    const poll = this.sentByKey.get(messageKey(sessionId, vote.pollWaMessageId))?.poll;
    if (!poll) throw new DomainError('not_found', 'the device did not send this poll', { pollWaMessageId: vote.pollWaMessageId });
    const unknown = vote.options.filter((o) => !poll.options.includes(o));
    if (unknown.length > 0) throw new DomainError('validation_error', 'options are not options of this poll', { options: unknown });
    if (vote.options.length > poll.selectableCount) throw validation('content.options', `must pick at most ${poll.selectableCount}`);
  }

  private contactMessage(sessionId: string, from: string, waMessageId: string): SimInboundMessage {
    const message = this.delivered.get(messageKey(sessionId, waMessageId));
    if (!message || message.from !== from) throw new DomainError('not_found', 'this contact did not send the device this message', { waMessageId, from });
    return message;
  }

  private keepMedia(input: MediaInput): SimMedia {
    const mediaId = randomBytes(12).toString('hex');
    this.media.set(mediaId, { data: input.data, mimetype: input.mimetype, filename: input.filename });
    return {
      mediaId,
      mimetype: input.mimetype,
      size: input.data.length,
      filename: input.filename,
      caption: input.caption,
      sha256: createHash('sha256').update(input.data).digest('hex'),
    };
  }

  /** Queues the event for the device and pushes it now when connected; it stays queued until the device acks it. */
  private deliver(device: Device, event: SimNetworkEvent): Delivery {
    const pending: PendingEvent = { eventId: randomBytes(12).toString('hex'), ...event };
    device.pending.set(pending.eventId, pending);
    device.link?.send(pending);
    return { queued: device.link === null };
  }

  /** Group changes reach the paired devices among `members` and the device that created the group. */
  deliverToGroup(group: SimGroup, members: string[], event: SimNetworkEvent): string[] {
    const jids = new Set(members);
    const delivered: string[] = [];
    for (const device of this.devices.values()) {
      if (device.state !== 'paired' || !device.account) continue;
      if (device.sessionId !== group.sessionId && !jids.has(device.account.jid)) continue;
      this.deliver(device, event);
      delivered.push(device.sessionId);
    }
    return delivered;
  }

  /** What an action handler (actions/) may do for the paired device that asked. */
  private actionScope(device: Device): SimWorldScope {
    const account = this.requirePaired(device);
    return {
      network: this,
      world: this.world,
      sessionId: device.sessionId,
      account,
      deliver: (event) => this.deliver(device, event),
      log: (entry) => void device.presenceLog.push(entry),
    };
  }

  group(groupJid: string, field?: string): SimGroup {
    const group = this.groups.find((g) => g.groupJid === groupJid);
    if (!group && field) throw validation(field, 'is only for a message sent to a group');
    if (!group) throw new DomainError('not_found', 'no group with this jid was created on the network', { groupJid });
    return group;
  }

  private pairedDevice(sessionId: string): Device {
    const device = this.device(sessionId);
    if (device.state !== 'paired') throw new DomainError('conflict', 'the device is not paired', { state: device.state });
    return device;
  }

  private sentMessage(sessionId: string, waMessageId: string, field: string): SimSentMessage {
    const sent = this.sentByKey.get(messageKey(sessionId, waMessageId));
    if (!sent) throw new DomainError('not_found', 'the device did not send this message', { [field]: waMessageId });
    return sent;
  }
}

function messageKey(sessionId: string, waMessageId: string): string {
  return `${sessionId} ${waMessageId}`;
}
