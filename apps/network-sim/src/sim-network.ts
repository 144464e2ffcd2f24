import {
  DomainError,
  SIM_CLOSE_CODES,
  SimAccount,
  SimCredential,
  SimDeviceOp,
  SimDeviceOps,
  SimGroup,
  SimInboundMessage,
  SimNetworkFrame,
  SimSentMessage,
  USER_JID_PATTERN,
} from '@app/contracts';
import { randomBytes, randomInt } from 'node:crypto';

/** The network's end of one device connection; the transport (WebSocket) lives elsewhere. */
export interface DeviceLink {
  send(frame: SimNetworkFrame): void;
  /** Orderly close with one of SIM_CLOSE_CODES. */
  close(code: number, reason: string): void;
  /** Abrupt end of the socket, as when the network drops it. */
  drop(): void;
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
  /** Inbound messages the device has not taken yet (offline messages). */
  pendingInbound: number;
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
  pending: SimInboundMessage[];
}

export interface SimNetworkOptions {
  qrIntervalMs: number;
}

const GROUP_JID_PATTERN = /^(\d+-\d+|\d{5,})@g\.us$/;
/** WhatsApp's pairing-code alphabet: no 0, O, I or U, so the code reads back unambiguously. */
const PAIRING_CODE_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTVWXYZ';
const MAX_TEXT_LENGTH = 65536;
const MAX_SUBJECT_LENGTH = 100;

function waMessageId(): string {
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

function validation(field: string, message: string): DomainError {
  return new DomainError('validation_error', `${field} ${message}`, { [field]: message });
}

/** Digits of a phone number written as digits, `+digits`, or with spaces/dashes. */
export function normalizePhoneNumber(value: unknown): string {
  if (typeof value !== 'string') throw validation('phoneNumber', 'must be a string of digits');
  const digits = value.replace(/[\s\-()]/g, '').replace(/^\+/, '');
  if (!/^\d{5,20}$/.test(digits)) throw validation('phoneNumber', 'must be 5-20 digits');
  return digits;
}

/** A contact written as a jid `<digits>@s.whatsapp.net` or as a phone number. */
function contactJid(value: unknown): string {
  if (typeof value === 'string' && USER_JID_PATTERN.test(value)) return value;
  try {
    return `${normalizePhoneNumber(value)}@s.whatsapp.net`;
  } catch {
    throw validation('from', 'must be a jid <digits>@s.whatsapp.net or a phone number');
  }
}

function requireText(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw validation(field, 'must be a non-empty string');
  if (value.length > max) throw validation(field, `must be at most ${max} characters`);
  return value;
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
  private groupSeq = 0;

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
    link.send({ type: 'open', account: device.account! });
    for (const message of device.pending) link.send({ type: 'message', message });
  }

  /** The transport closed; only the current link of a device counts (a replaced one is already detached). */
  detach(sessionId: string, link: DeviceLink): void {
    const device = this.devices.get(sessionId);
    if (!device || device.link !== link) return;
    device.link = null;
    this.stopQr(device);
  }

  ack(sessionId: string, link: DeviceLink, messageId: string): void {
    const device = this.devices.get(sessionId);
    if (!device || device.link !== link) return;
    device.pending = device.pending.filter((m) => m.id !== messageId);
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
      case 'sendText':
        return this.sendText(device, a.to, a.text) as SimDeviceOps[K]['result'];
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
      qr: d.qr,
      jid: d.account?.jid ?? null,
      lid: d.account?.lid ?? null,
      phoneNumber: d.account?.phoneNumber ?? null,
      connected: d.link !== null,
      pendingInbound: d.pending.length,
    };
  }

  /** The phone scans the QR the device shows (optionally checking it is the one the caller saw). */
  scan(sessionId: string, body: { phoneNumber?: unknown; qr?: unknown }): DeviceView {
    const device = this.device(sessionId);
    if (!device.link || device.state !== 'unpaired' || !device.qr) {
      throw new DomainError('conflict', 'the device is not showing a QR code', { state: device.state, connected: device.link !== null });
    }
    if (body.qr !== undefined && body.qr !== device.qr) throw new DomainError('conflict', 'this QR code has expired', {});
    const phoneNumber = body.phoneNumber === undefined ? `1555${randomDigits(7)}` : normalizePhoneNumber(body.phoneNumber);
    this.pair(device, phoneNumber);
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

  /** A contact sends the device's account a message; held until the device takes it (offline messages). */
  inbound(sessionId: string, body: { from?: unknown; text?: unknown }): { id: string; queued: boolean } {
    const device = this.device(sessionId);
    if (device.state !== 'paired') throw new DomainError('conflict', 'the device is not paired', { state: device.state });
    const from = contactJid(body.from);
    const text = requireText('text', body.text, MAX_TEXT_LENGTH);
    const message: SimInboundMessage = { id: waMessageId(), from, chatJid: from, text, timestamp: Date.now() };
    device.pending.push(message);
    if (device.link) device.link.send({ type: 'message', message });
    return { id: message.id, queued: device.link === null };
  }

  /** A transient network drop: the socket ends, the pairing stays. */
  drop(sessionId: string): DeviceView {
    const device = this.device(sessionId);
    const link = device.link;
    if (!link) throw new DomainError('conflict', 'the device is not connected', {});
    this.release(device);
    link.drop();
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

  listGroups(sessionId?: string): SimGroup[] {
    return sessionId ? this.groups.filter((g) => g.sessionId === sessionId) : [...this.groups];
  }

  listMessages(sessionId?: string): SimSentMessage[] {
    return sessionId ? this.sent.filter((m) => m.sessionId === sessionId) : [...this.sent];
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
      pending: [],
    };
    this.devices.set(sessionId, device);
    return device;
  }

  /** WhatsApp keeps one socket per device: a newer connection replaces the older one. */
  private takeOver(device: Device, link: DeviceLink): void {
    const previous = device.link;
    this.release(device);
    device.link = link;
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
    device.pending = [];
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
    let lid = this.lidByPhone.get(phoneNumber);
    if (!lid) {
      lid = `${randomDigits(15)}@lid`;
      this.lidByPhone.set(phoneNumber, lid);
    }
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
    device.pending = [];
    device.link!.send({ type: 'paired', credential });
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
      sessionId: device.sessionId,
      createdAt: Date.now(),
    };
    this.groups.push(group);
    return group;
  }

  private sendText(device: Device, to: unknown, text: unknown): { messageId: string } {
    const account = this.requirePaired(device);
    if (typeof to !== 'string' || !(USER_JID_PATTERN.test(to) || GROUP_JID_PATTERN.test(to))) {
      throw validation('to', 'must be a jid <digits>@s.whatsapp.net or a group jid …@g.us');
    }
    const body = requireText('text', text, MAX_TEXT_LENGTH);
    const message: SimSentMessage = { id: waMessageId(), sessionId: device.sessionId, from: account.jid, to, text: body, timestamp: Date.now() };
    this.sent.push(message);
    return { messageId: message.id };
  }
}

function isSimCredential(value: unknown): value is SimCredential {
  const c = value as Partial<SimCredential> | null;
  return typeof c === 'object' && c !== null && c.kind === 'sim-device' && typeof c.token === 'string' && typeof c.account === 'object';
}
