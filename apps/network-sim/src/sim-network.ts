import {
  DomainError,
  SimAccount,
  SimCredential,
  isSimCredential,
  SimDeviceOp,
  SimDeviceOps,
  SimGroup,
  SimInboundMessage,
  SimMedia,
  SimNetworkEvent,
  SimPresenceLogEntry,
  SimSentMessage,
} from '@app/contracts';
import { randomBytes, randomInt } from 'node:crypto';
import {
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
  validation,
} from './sim-input';
import { type Delivery, performSimAction, SimWorld, type SimWorldScope } from './actions';
import { parseSimHistory } from './actions/chats';
import { applyParticipantChange } from './actions/group-admin';
import { Device, DeviceLink, DeviceView, SimDevices } from './sim-devices';
import { SimGroups } from './sim-groups';
import { SimMessageLog, StoredMedia } from './sim-message-log';

export type { DeviceLink, DeviceState, DeviceView } from './sim-devices';
export type { StoredMedia } from './sim-message-log';

export interface SimNetworkOptions {
  qrIntervalMs: number;
}

function newWaMessageId(): string {
  return `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
}

function randomDigits(n: number): string {
  let s = String(randomInt(1, 10));
  while (s.length < n) s += String(randomInt(0, 10));
  return s;
}

/**
 * The simulated WhatsApp network: devices (keyed by the gateway's session id, sim-devices.ts), their pairing with a
 * phone, the groups they create (sim-groups.ts) and the messages they send and are delivered (sim-message-log.ts),
 * and what contacts, phones and admins do to them (the control API). In memory; it is a test and demo tool.
 * State is per session id so tests sharing one simulator never see each other.
 */
export class SimNetwork {
  private readonly devices: SimDevices;
  private readonly lidByPhone = new Map<string, string>();
  private readonly groups = new SimGroups();
  private readonly messages = new SimMessageLog();
  /** the state of CONTRACT 12 and 13's operations (accounts, chat state, labels, statuses, channels, calls) */
  readonly world = new SimWorld();

  constructor(options: SimNetworkOptions) {
    this.devices = new SimDevices(options);
  }

  // ---- device side -------------------------------------------------------------------------

  /** A device said hello. Null credential: a fresh QR flow. Otherwise resume, or refuse it. */
  attach(sessionId: string, link: DeviceLink, credential: unknown): void {
    const fresh = credential === null || credential === undefined;
    this.devices.attach(sessionId, link, fresh ? null : isSimCredential(credential) ? credential : 'not-a-credential');
  }

  /** The transport closed; only the current link of a device counts (a replaced one is already detached). */
  detach(sessionId: string, link: DeviceLink): void {
    this.devices.detach(sessionId, link);
  }

  /**
   * The device has made an event durable (CONTRACT 9, Acknowledgements): the network forgets it. Any socket of the
   * device whose transport is still open may ack what it was given, a replaced one too (its ack frames were sent
   * before its close): the ack says "stored", whoever stored it. An unknown eventId (acked twice) changes nothing.
   */
  ack(sessionId: string, link: DeviceLink, eventId: string): void {
    const acked = this.devices.acked(sessionId, link, eventId);
    // a history sync sends its next batch once the device stored the one before (actions/chats.ts)
    if (acked) this.world.chats.acked(sessionId, acked.event);
  }

  request<K extends SimDeviceOp>(sessionId: string, link: DeviceLink, op: K, args: SimDeviceOps[K]['args']): SimDeviceOps[K]['result'] {
    const device = this.devices.heldBy(sessionId, link);
    const a = (args ?? {}) as Record<string, unknown>;
    switch (op) {
      case 'requestPairingCode':
        return this.devices.requestPairingCode(device, a.phoneNumber) as SimDeviceOps[K]['result'];
      case 'createGroup':
        return this.groups.create(this.devices.requirePaired(device), device.sessionId, a.subject, a.participants) as SimDeviceOps[K]['result'];
      case 'send':
        return this.send(device, a) as SimDeviceOps[K]['result'];
      case 'presence': {
        this.devices.requirePaired(device);
        const { chatJid, presence } = parseDevicePresence(a);
        device.presenceLog.push({ type: 'presence', chatJid, presence, at: Date.now() });
        return {} as SimDeviceOps[K]['result'];
      }
      case 'read': {
        this.devices.requirePaired(device);
        const at = Date.now();
        for (const key of parseRead(a)) device.presenceLog.push({ type: 'read', ...key, at });
        return {} as SimDeviceOps[K]['result'];
      }
      case 'action':
        return performSimAction(this.actionScope(device), a.action, a.args) as SimDeviceOps[K]['result'];
      case 'logout':
        this.devices.requirePaired(device);
        // answer first, then close: the caller learns the unlink succeeded before the socket ends
        setImmediate(() => this.unlink(device.sessionId));
        return {} as SimDeviceOps[K]['result'];
      default:
        throw new DomainError('validation_error', `unknown operation ${String(op)}`, { op });
    }
  }

  // ---- control side (the phone, contacts, and test observers) -------------------------------

  view(sessionId: string): DeviceView {
    return this.devices.view(sessionId);
  }

  /** The phone scans the QR the device shows (optionally checking it is the one the caller saw). */
  scan(sessionId: string, body: { phoneNumber?: unknown; qr?: unknown; history?: unknown; isBusiness?: unknown }): DeviceView {
    const device = this.devices.showingQr(sessionId);
    if (body.qr !== undefined && body.qr !== device.qr) throw new DomainError('conflict', 'this QR code has expired', {});
    const phoneNumber = body.phoneNumber === undefined ? `1555${randomDigits(7)}` : normalizePhoneNumber(body.phoneNumber);
    // checked before pairing, so a bad history pairs nothing
    const history = body.history === undefined ? null : parseSimHistory(body.history);
    if (body.isBusiness !== undefined && typeof body.isBusiness !== 'boolean') throw validation('isBusiness', 'must be a boolean');
    // the phone's app first: the pairing tells the device its platform (WhatsApp Business or not)
    if (typeof body.isBusiness === 'boolean') this.world.accountExtras.setBusiness(`${phoneNumber}@s.whatsapp.net`, body.isBusiness);
    this.pair(device, phoneNumber);
    if (history) this.world.chats.playHistory(device.account!, sessionId, history, (event) => this.devices.deliver(device, event));
    return this.view(sessionId);
  }

  /** The phone enters the pairing code the device asked for. */
  enterPairingCode(sessionId: string, body: { code?: unknown }): DeviceView {
    const device = this.devices.device(sessionId);
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
    const device = this.devices.pairedDevice(sessionId);
    const input = parseInbound(body);
    const message: SimInboundMessage = {
      id: newWaMessageId(),
      from: input.from,
      chatJid: input.chatJid,
      type: input.type,
      text: input.text,
      media: input.media ? this.messages.keepMedia(input.media) : null,
      location: input.location,
      contact: input.contact,
      quotedWaMessageId: input.quotedWaMessageId,
      mentions: input.mentions,
      timestamp: Date.now(),
      // the sender exists on the network; its push name travels with its messages (world.contacts)
      ...this.world.contacts.noteInbound(sessionId, input.from),
    };
    this.messages.noteDelivered(sessionId, message);
    return { id: message.id, ...this.devices.deliver(device, { type: 'message', message }) };
  }

  /** A contact edits a message it sent the device (`POST /sim/sessions/{id}/edit {from, waMessageId, text}`). */
  contactEdit(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.devices.pairedDevice(sessionId);
    const { from, waMessageId, text } = parseContactEdit(body);
    const message = this.messages.contactMessage(sessionId, from, waMessageId);
    return this.devices.deliver(device, { type: 'edit', waMessageId, chatJid: message.chatJid, from, text });
  }

  /** A contact deletes for everyone a message it sent the device (`POST /sim/sessions/{id}/revoke {from, waMessageId}`). */
  contactRevoke(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.devices.pairedDevice(sessionId);
    const { from, waMessageId } = parseContactRevoke(body);
    const message = this.messages.contactMessage(sessionId, from, waMessageId);
    return this.devices.deliver(device, { type: 'revoke', waMessageId, chatJid: message.chatJid, by: from });
  }

  /** A message the device sent (what its message actions may change), or undefined. */
  findSent(sessionId: string, waMessageId: unknown): SimSentMessage | undefined {
    return this.messages.findSent(sessionId, waMessageId);
  }

  /** The recipient's phone reports a message the device sent as delivered, read or played. */
  receipt(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.devices.pairedDevice(sessionId);
    const { waMessageId, status, from } = parseReceipt(body);
    const sent = this.messages.sentMessage(sessionId, waMessageId, 'waMessageId');
    // in a group each member's phone reports on its own (`from`, a member); 1:1 the contact is the chat
    if (from !== undefined && !this.group(sent.to, 'from').participants.includes(from)) throw validation('from', 'must be a member of the group the message was sent to');
    return this.devices.deliver(device, { type: 'receipt', waMessageId, chatJid: sent.to, status, ...(from ? { participant: from } : {}) });
  }

  /** A contact reacts to a message of a chat with the device: one it sent or one it received. */
  reaction(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.devices.pairedDevice(sessionId);
    const { from, waMessageId, emoji } = parseReaction(body);
    const chatJid = this.messages.chatOf(sessionId, waMessageId);
    if (!chatJid) throw new DomainError('not_found', 'the device neither sent nor received this message', { waMessageId });
    return this.devices.deliver(device, { type: 'reaction', waMessageId, chatJid, from, emoji });
  }

  /** A contact votes on a poll the device sent; options are checked against the poll's. */
  pollVote(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.devices.pairedDevice(sessionId);
    const { from, pollWaMessageId, options } = parsePollVote(body);
    const sent = this.messages.sentMessage(sessionId, pollWaMessageId, 'pollWaMessageId');
    if (!sent.poll) throw validation('pollWaMessageId', 'is not a poll');
    const unknown = options.filter((o) => !sent.poll!.options.includes(o));
    if (unknown.length > 0) throw new DomainError('validation_error', 'options are not options of this poll', { options: unknown });
    if (options.length > sent.poll.selectableCount) throw validation('options', `must pick at most ${sent.poll.selectableCount}`);
    return this.devices.deliver(device, { type: 'poll-vote', pollWaMessageId, chatJid: sent.to, voter: from, selectedOptions: options });
  }

  presence(sessionId: string, body: Record<string, unknown>): Delivery {
    const device = this.devices.pairedDevice(sessionId);
    return this.devices.deliver(device, { type: 'presence', ...parsePresence(body) });
  }

  call(sessionId: string, body: Record<string, unknown>): { callId: string } & Delivery {
    const device = this.devices.pairedDevice(sessionId);
    const { from, isVideo } = parseCall(body);
    const { callId } = this.world.messages.placeCall(sessionId, from, isVideo);
    return { callId, ...this.devices.deliver(device, { type: 'call', callId, from, isVideo, isGroup: false }) };
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
    return this.devices.deliverTo(sessionId, event);
  }

  /** A network event for a paired device from the control API (the phone changed something): held until it is acked. */
  deliverToPaired(sessionId: string, event: SimNetworkEvent): Delivery {
    return this.devices.deliver(this.devices.pairedDevice(sessionId), event);
  }

  /** Group changes reach the paired devices among `members` and the device that created the group. */
  deliverToGroup(group: SimGroup, members: string[], event: SimNetworkEvent): string[] {
    return this.devices.deliverToGroup(group, members, event);
  }

  presenceLog(sessionId: string): SimPresenceLogEntry[] {
    return [...this.devices.device(sessionId).presenceLog];
  }

  mediaBytes(mediaId: string): StoredMedia {
    return this.messages.mediaBytes(mediaId);
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
    return this.devices.endConnection(sessionId, end, options);
  }

  /** The phone removes the linked device: the credential is revoked and a connected device is logged out. Idempotent. */
  unlink(sessionId: string): DeviceView {
    return this.devices.unlink(sessionId);
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
    return this.devices.hasPhoneNumber(phoneNumber);
  }

  /** Keeps bytes the network serves at `GET /sim/media/{mediaId}` (a group's picture); answers the mediaId. */
  holdMedia(data: Buffer, mimetype: string): string {
    return this.messages.keepMedia({ data, mimetype, filename: null, caption: null }).mediaId;
  }

  listGroups(sessionId?: string): SimGroup[] {
    return this.groups.list(sessionId);
  }

  listMessages(sessionId?: string): SimSentMessage[] {
    return this.messages.list(sessionId);
  }

  group(groupJid: string, field?: string): SimGroup {
    return this.groups.group(groupJid, field);
  }

  // ---- for the state of CONTRACT 12/13 (actions/world.ts): reaching devices by account ----------

  /** The session ids of the paired devices of an account. */
  sessionsOfAccount(jid: string): string[] {
    return this.devices.sessionsOfAccount(jid);
  }

  /** The account of a paired device. */
  accountOf(sessionId: string): SimAccount {
    return this.devices.requirePaired(this.devices.device(sessionId));
  }

  /** Keeps media bytes on the network, served at `GET /sim/media/{mediaId}`. */
  keepMediaBytes(input: MediaInput): SimMedia {
    return this.messages.keepMedia(input);
  }

  /** Ends every connection (the simulator is shutting down). */
  closeAll(): void {
    this.devices.closeAll();
  }

  /**
   * Benchmarks only (SIM_TEST_PRELINK, whatsapp-web/prelink.ts): a device paired to `phoneNumber` without a socket or a
   * QR, as if its phone had scanned one earlier; it logs in later with the credential like any paired device.
   */
  prelink(sessionId: string, phoneNumber: string): SimCredential {
    const device = this.devices.deviceOrNew(sessionId);
    if (device.link) throw new DomainError('conflict', 'the device is connected: pair it through its screen', { sessionId });
    return this.issueCredential(device, normalizePhoneNumber(phoneNumber));
  }

  // ---- internals ---------------------------------------------------------------------------

  private pair(device: Device, phoneNumber: string): void {
    this.devices.paired(device, this.issueCredential(device, phoneNumber));
  }

  private issueCredential(device: Device, phoneNumber: string): SimCredential {
    const lid = this.lidOf(phoneNumber);
    this.world.contacts.register(phoneNumber);
    const credential: SimCredential = {
      kind: 'sim-device',
      token: randomBytes(24).toString('base64url'),
      account: { jid: `${phoneNumber}@s.whatsapp.net`, lid, phoneNumber },
    };
    this.devices.linked(device, credential);
    return credential;
  }

  /** Stores a device's message once per waMessageId: a re-send is acknowledged, never delivered twice. */
  private send(device: Device, args: Record<string, unknown>): SimDeviceOps['send']['result'] {
    const account = this.devices.requirePaired(device);
    const { result, stored } = this.messages.record(device.sessionId, account, parseSend(args));
    if (stored?.status) this.world.accountExtras.statusPosted(this, stored);
    return result;
  }

  /** What an action handler (actions/) may do for the paired device that asked. */
  private actionScope(device: Device): SimWorldScope {
    const account = this.devices.requirePaired(device);
    return {
      network: this,
      world: this.world,
      sessionId: device.sessionId,
      account,
      deliver: (event) => this.devices.deliver(device, event),
      log: (entry) => void device.presenceLog.push(entry),
    };
  }
}
