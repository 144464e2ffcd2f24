/**
 * One WhatsApp Web socket, from the first byte to the close: the Noise handshake, then either a registration or a
 * login (companion-pairing.ts), then the device's stanzas (device-stanzas.ts) and IQs (iq-router.ts), and the
 * network's frames as WhatsApp stanzas (network-frames.ts), each acknowledged through one ledger (ack-ledger.ts).
 * Toward SimNetwork it is a DeviceLink: its closes become WhatsApp's stream errors and failures here (faults.ts).
 * The rooms reach it as a WaSocket (wa-socket.ts).
 */
import { SimFaultKind, SimNetworkFrame } from '@app/contracts';
import { WebSocket } from 'ws';
import { AckLedger } from './ack-ledger';
import { shareAppStateKey } from './app-state-door';
import { CompanionPairing, companionOf } from './companion-pairing';
import { DeviceOutbound } from './device-outbound';
import { DEVICE_STANZAS } from './device-stanzas';
import type { CompanionRegistration } from './directory';
import { closeStanza, WA_FAULTS } from './faults';
import { child } from './iq';
import { routeIq } from './iq-router';
import { FrameDoor, playFrame } from './network-frames';
import { encodeFrame, FrameReader, HandshakeResult, NoiseServerHandshake, NoiseTransport } from './noise-server';
import { withDevice } from './phone';
import { RetryLedger } from './retry-ledger';
import { preKeyCountNotification } from './stanzas';
import type { OpenDevice, Phase, WaConnectionDeps, WaSocket } from './wa-socket';
import { BinaryNode, nowSeconds } from './wa-kit';

export type { WaConnectionDeps } from './wa-socket';

/** After a stream error the client closes; a client that does not is closed by the server. */
const CLOSE_GRACE_MS = 5_000;

export class WaWebConnection implements WaSocket {
  private currentPhase: Phase = 'hello';
  private readonly reader: FrameReader;
  private readonly handshake: NoiseServerHandshake;
  private transport: NoiseTransport | null = null;
  private currentRegistration: CompanionRegistration | null = null;
  /** frames are handled one at a time (decoding a node is async) */
  private queue: Promise<void> = Promise.resolve();
  private idSeq = 0;
  /** the `silent` fault: nothing is read or written on this socket any more, keepalive pings included */
  private silent = false;
  /** the device was told its one-time pre-keys run low, and has not uploaded since */
  private preKeysLowTold = false;
  /** the phone shared the account's app state sync key on this socket (once its pre-keys are there) */
  private keyShared = false;
  readonly ledger: AckLedger;
  readonly outbound: DeviceOutbound;
  readonly retries = new RetryLedger();
  readonly pairing: CompanionPairing;
  readonly link: WaSocket['link'];
  /** what the network's frames keep on this socket across frames (network-frames.ts) */
  private readonly frames: FrameDoor;

  constructor(readonly deps: WaConnectionDeps) {
    this.reader = new FrameReader(deps.baileys.NOISE_WA_HEADER);
    this.handshake = new NoiseServerHandshake(deps.baileys, deps.server);
    this.ledger = new AckLedger((eventId) => deps.network.ack(deps.sessionId, this.link, eventId));
    this.outbound = new DeviceOutbound((err, what) => deps.logger?.warn({ err, sessionId: deps.sessionId }, what));
    this.pairing = new CompanionPairing(this);
    this.frames = { socket: this, history: { chunks: 0, chats: new Map() } };
    this.link = {
      send: (frame) => this.fromNetwork(frame),
      close: (code) => this.closeFor(code),
      drop: () => this.deps.ws.terminate(),
      silence: () => void (this.silent = true),
      fault: (kind) => this.playFault(kind),
      showQr: () => this.pairing.currentQr(),
    };
    deps.ws.on('message', (data: Buffer) => this.onBytes(data));
    deps.ws.on('close', () => this.onClosed());
    deps.ws.on('error', (err) => deps.logger?.debug({ err, sessionId: deps.sessionId }, 'whatsapp web socket error'));
  }

  get sessionId(): string {
    return this.deps.sessionId;
  }

  get phase(): Phase {
    return this.currentPhase;
  }

  get registration(): CompanionRegistration | null {
    return this.currentRegistration;
  }

  /** Under the `silent` fault: the network's keepalive leaves the socket alone (keepalive.ts). */
  get silenced(): boolean {
    return this.silent;
  }

  /** The control API's scan (companion-pairing.ts). */
  acceptScan(scanned: { ref: string; noiseKey: Buffer; advSecret: Buffer }): void {
    this.pairing.acceptScan(scanned);
  }

  /** The control API's pair-code (companion-pairing.ts): resolves with the phone number the companion asked to link. */
  acceptCode(code: string): Promise<string> {
    return this.pairing.acceptCode(code);
  }

  openDevice(): OpenDevice | null {
    const account = this.currentRegistration?.credential?.account;
    if (this.currentPhase !== 'open' || !account) return null;
    return { network: this.deps.network, sessionId: this.sessionId, link: this.link, account };
  }

  readonly lidOf = (phoneNumber: string): string => this.deps.network.lidOf(phoneNumber);

  newId(): string {
    this.idSeq += 1;
    return `sim-${this.idSeq}`;
  }

  send(node: BinaryNode): void {
    if (!this.transport || this.silent || this.deps.ws.readyState !== WebSocket.OPEN) return;
    this.deps.ws.send(encodeFrame(this.transport.encrypt(this.deps.baileys.encodeBinaryNode(node))));
  }

  // ---- bytes, frames and stanzas ----------------------------------------------------------------

  private onBytes(data: Buffer): void {
    if (this.silent) return;
    let frames: Buffer[];
    try {
      frames = this.reader.push(Buffer.from(data));
    } catch (err) {
      this.fail(err);
      return;
    }
    for (const frame of frames) {
      this.queue = this.queue.then(() => this.onFrame(frame)).catch((err) => this.fail(err));
    }
  }

  private async onFrame(frame: Buffer): Promise<void> {
    if (this.currentPhase === 'closed') return;
    if (this.currentPhase === 'hello') {
      this.deps.ws.send(encodeFrame(this.handshake.hello(frame)));
      this.currentPhase = 'finish';
      return;
    }
    if (this.currentPhase === 'finish') {
      const result = this.handshake.finish(frame);
      this.transport = result.transport;
      this.onClientPayload(result);
      return;
    }
    const node = await this.deps.baileys.decodeBinaryNode(this.transport!.decrypt(frame));
    this.onNode(node);
  }

  /** One stanza of the device: an IQ (iq-router.ts) or any other (device-stanzas.ts); a tag neither knows is logged. */
  private onNode(node: BinaryNode): void {
    if (node.tag === 'iq') return routeIq(this, node);
    const play = DEVICE_STANZAS[node.tag];
    if (play) return play(this, node);
    this.deps.logger?.debug({ sessionId: this.sessionId, tag: node.tag }, 'whatsapp web stanza not handled by the front door');
  }

  /** What SimNetwork tells the device, as WhatsApp Web says it (network-frames.ts). */
  private fromNetwork(frame: SimNetworkFrame): void {
    playFrame(this.frames, frame);
  }

  // ---- login --------------------------------------------------------------------------------------

  /** A new companion registers (it shows a QR or asks for a code); a known one logs in; an unknown one is logged out. */
  private onClientPayload(result: HandshakeResult): void {
    const companion = companionOf(this.deps, result);
    if (!companion) {
      // WhatsApp's answer to a device it does not know (or no longer knows): logged out
      this.sendFailure(401);
      return;
    }
    this.currentRegistration = companion.registration;
    this.currentPhase = companion.phase;
    this.deps.network.attach(this.sessionId, this.link, companion.phase === 'registering' ? null : companion.registration.credential);
  }

  loggedIn(): void {
    const registration = this.currentRegistration!;
    const account = registration.credential!.account;
    this.currentPhase = 'open';
    this.send({ tag: 'success', attrs: { t: nowSeconds(), lid: withDevice(account.lid, registration.deviceIndex!), location: 'sim', creation: nowSeconds() } });
    // SimNetwork hands over what it held right after `open`, synchronously: that is the offline batch, then the
    // marker (which also ends Baileys' initial event buffering)
    const { offline } = this.outbound;
    offline.begin();
    queueMicrotask(() => {
      offline.end();
      this.outbound.queue('sending the offline marker failed', () => {
        const marker = offline.marker();
        this.send(marker);
        this.deps.logger?.info({ sessionId: this.sessionId, offline: Number(child(marker, 'offline')?.attrs.count) }, 'whatsapp web login: held stanzas delivered offline');
      });
      this.shareAppStateKey();
    });
  }

  /** Once per socket, once the device is logged in and has pre-keys (app-state-door.ts). */
  private shareAppStateKey(): void {
    if (this.keyShared || !this.openDevice() || !this.currentRegistration?.keyBundle) return;
    this.keyShared = true;
    shareAppStateKey(this);
  }

  preKeysUploaded(): void {
    this.preKeysLowTold = false;
    this.shareAppStateKey();
    if (this.currentRegistration?.keyBundle) this.outbound.keysArrived();
  }

  tellPreKeysLow(): void {
    if (this.preKeysLowTold) return;
    const notification = preKeyCountNotification(this.newId(), this.currentRegistration?.keyBundle ?? null);
    if (!notification) return;
    this.preKeysLowTold = true;
    this.send(notification);
  }

  // ---- closing ----------------------------------------------------------------------------------

  /** SimNetwork closes the device: WhatsApp's stanza for that reason (faults.ts), then the client ends the socket. */
  private closeFor(code: number): void {
    this.streamError(closeStanza(code, this.currentPhase !== 'logging-in'));
  }

  private sendFailure(reason: number): void {
    this.streamError({ tag: 'failure', attrs: { reason: String(reason), location: 'sim' } });
  }

  /** A fault of the control API, as WhatsApp Web plays it (faults.ts). */
  private playFault(kind: SimFaultKind): void {
    const action = WA_FAULTS[kind];
    if ('stanza' in action) return this.streamError(action.stanza);
    if ('silence' in action) return void (this.silent = true);
    this.deps.ws.terminate();
  }

  streamError(node: BinaryNode): void {
    this.send(node);
    this.currentPhase = 'closed';
    // the client closes on a stream error; one that does not is closed for it
    setTimeout(() => this.deps.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  fail(err: unknown): void {
    if (this.currentPhase === 'closed') return;
    this.deps.logger?.warn({ err, sessionId: this.sessionId }, 'whatsapp web connection failed');
    this.currentPhase = 'closed';
    this.deps.ws.terminate();
  }

  private onClosed(): void {
    this.currentPhase = 'closed';
    this.pairing.closed();
    this.deps.network.detach(this.sessionId, this.link);
  }
}
