/**
 * The devices of the simulated network, keyed by the gateway's session id: their state (unpaired, paired, unlinked),
 * the socket that holds each (one at a time, as WhatsApp keeps it), the QR a device shows, a pairing code it asked
 * for, and the network events delivered to it and not acknowledged yet (delivered again, in order, on each open).
 * Transport-free: a socket is a DeviceLink. SimNetwork decides what is delivered; this is where it waits.
 */
import { DomainError, SIM_CLOSE_CODES, SimAccount, SimCredential, SimFaultKind, SimGroup, SimNetworkEvent, SimNetworkFrame, SimPresenceLogEntry } from '@app/contracts';
import { randomBytes, randomInt } from 'node:crypto';
import type { Delivery } from './actions/scope';
import { normalizePhoneNumber } from './sim-input';

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

export type PendingEvent = { eventId: string } & SimNetworkEvent;

export interface Device {
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

/** WhatsApp's pairing-code alphabet: no 0, O, I or U, so the code reads back unambiguously. */
const PAIRING_CODE_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTVWXYZ';

/** Shaped like a WhatsApp Web QR payload: ref, noise key, identity key, adv secret. */
function newQr(): string {
  return `2@${randomBytes(24).toString('base64')},${randomBytes(32).toString('base64')},${randomBytes(32).toString('base64')},${randomBytes(32).toString('base64')}`;
}

export class SimDevices {
  private readonly devices = new Map<string, Device>();

  constructor(private readonly options: { qrIntervalMs: number }) {}

  /** A device said hello. Null credential: a fresh QR flow. Otherwise resume, or refuse it. */
  attach(sessionId: string, link: DeviceLink, credential: SimCredential | null | 'not-a-credential'): void {
    if (credential === null) {
      const device = this.devices.get(sessionId) ?? this.newDevice(sessionId);
      this.takeOver(device, link);
      // a fresh QR flow on a paired device forgets the old pairing, as re-linking a wiped device does
      this.forgetPairing(device, 'unpaired');
      this.startQrFlow(device);
      return;
    }
    if (credential === 'not-a-credential') {
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
   * The device made an event durable: the network forgets it. Any socket of the device whose transport is still open
   * may ack what it was given (see SimNetwork.ack). Answers whether the ack counted, and the event it settled if any.
   */
  acked(sessionId: string, link: DeviceLink, eventId: string): { event: PendingEvent | undefined } | null {
    const device = this.devices.get(sessionId);
    if (!device || !device.sockets.has(link)) return null;
    const event = device.pending.get(eventId);
    device.pending.delete(eventId);
    return { event };
  }

  /** The device whose current socket is `link`: what a device request needs. */
  heldBy(sessionId: string, link: DeviceLink): Device {
    const device = this.devices.get(sessionId);
    if (!device || device.link !== link) throw new DomainError('conflict', 'this connection no longer holds the device');
    return device;
  }

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

  device(sessionId: string): Device {
    const device = this.devices.get(sessionId);
    if (!device) throw new DomainError('not_found', 'no device with this session id has connected to the network', { sessionId });
    return device;
  }

  /** A device known or new (a prelinked one has never connected). */
  deviceOrNew(sessionId: string): Device {
    return this.devices.get(sessionId) ?? this.newDevice(sessionId);
  }

  pairedDevice(sessionId: string): Device {
    const device = this.device(sessionId);
    if (device.state !== 'paired') throw new DomainError('conflict', 'the device is not paired', { state: device.state });
    return device;
  }

  requirePaired(device: Device): SimAccount {
    if (device.state !== 'paired' || !device.account) throw new DomainError('conflict', 'the device is not paired', { state: device.state });
    return device.account;
  }

  /** The phone showing a QR can scan it only while the device is connected, unpaired and showing one. */
  showingQr(sessionId: string): Device {
    const device = this.device(sessionId);
    if (!device.link || device.state !== 'unpaired' || !device.qr) {
      throw new DomainError('conflict', 'the device is not showing a QR code', { state: device.state, connected: device.link !== null });
    }
    return device;
  }

  /** The phone linked the device: it holds `credential` from now on (pending events and any pairing code forgotten). */
  linked(device: Device, credential: SimCredential): void {
    this.stopQr(device);
    device.state = 'paired';
    device.token = credential.token;
    device.account = credential.account;
    device.pairingCode = null;
    device.pending = new Map();
  }

  /** Pairing brings the device online on this socket, as a resume with the credential does. */
  paired(device: Device, credential: SimCredential): void {
    device.opens += 1;
    device.link!.send({ type: 'paired', credential });
  }

  requestPairingCode(device: Device, phone: unknown): { code: string } {
    if (device.state === 'paired') throw new DomainError('conflict', 'the device is already paired', {});
    const phoneNumber = normalizePhoneNumber(phone);
    let code = '';
    for (let i = 0; i < 8; i++) code += PAIRING_CODE_ALPHABET[randomInt(PAIRING_CODE_ALPHABET.length)];
    device.pairingCode = { code, phoneNumber };
    // the user is typing a code now; rotating QRs nobody looks at would only run the session into `failed`
    this.stopQr(device);
    return { code };
  }

  /** The device's current connection ends (`end`); `forgetDevice` forgets its pairing too (see SimNetwork). */
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

  /** Queues the event for the device and pushes it now when connected; it stays queued until the device acks it. */
  deliver(device: Device, event: SimNetworkEvent): Delivery {
    const pending: PendingEvent = { eventId: randomBytes(12).toString('hex'), ...event };
    device.pending.set(pending.eventId, pending);
    device.link?.send(pending);
    return { queued: device.link === null };
  }

  /** Sends a network event to a session's paired device (queued while it is offline); null when it is not paired. */
  deliverTo(sessionId: string, event: SimNetworkEvent): Delivery | null {
    const device = this.devices.get(sessionId);
    return device && device.state === 'paired' ? this.deliver(device, event) : null;
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

  /** The session ids of the paired devices of an account. */
  sessionsOfAccount(jid: string): string[] {
    return [...this.devices.values()].filter((d) => d.state === 'paired' && d.account?.jid === jid).map((d) => d.sessionId);
  }

  /** Whether a device (paired once, or now) holds an account with this number. */
  hasPhoneNumber(phoneNumber: string): boolean {
    return [...this.devices.values()].some((d) => d.account?.phoneNumber === phoneNumber);
  }

  /** Ends every connection (the simulator is shutting down). */
  closeAll(): void {
    for (const device of this.devices.values()) {
      const link = device.link;
      this.release(device);
      link?.drop();
    }
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
}
