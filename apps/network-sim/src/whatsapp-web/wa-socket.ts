/**
 * What the rooms of one WhatsApp Web connection share (connection.ts is the one that implements it): the socket's
 * dependencies, its phase, the device's registration and account, the ack ledger and the outbound queue, and how to
 * send a stanza. Declared here, below every room, so that connection.ts imports the rooms and none of them imports it.
 */
import type { SimAccount, SimCredential } from '@app/contracts';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { DeviceLink, SimNetwork } from '../sim-network';
import type { AckLedger } from './ack-ledger';
import type { CertifiedServer } from './certificates';
import type { DeviceOutbound } from './device-outbound';
import type { CompanionRegistration, WaDirectory } from './directory';
import type { RetryLedger } from './retry-ledger';
import type { Baileys, BinaryNode } from './wa-kit';

export interface WaConnectionDeps {
  baileys: Baileys;
  server: CertifiedServer;
  network: SimNetwork;
  directory: WaDirectory;
  sessionId: string;
  ws: WebSocket;
  logger?: Logger;
}

/** A socket's life: the Noise handshake (hello, finish), then a registration or a login, then open, then closed. */
export type Phase = 'hello' | 'finish' | 'registering' | 'logging-in' | 'open' | 'closed';

/** The logged-in device as the network's operations name it (app state, group IQs, actions). */
export interface OpenDevice {
  network: SimNetwork;
  sessionId: string;
  link: DeviceLink;
  account: SimAccount;
}

/** The steps of linking a companion that the network's frames and the device's IQs start (companion-pairing.ts). */
export interface PairingSteps {
  /** the network shows a QR: the pair-device refs, once */
  showRefs(): void;
  /** the network paired the device: pair-success, the companion's signature, the 515 restart */
  completePairing(credential: SimCredential): Promise<void>;
  /** an `md` IQ of the companion (the code flow's stages, the unlink): the content of its result */
  answerMd(iq: BinaryNode): BinaryNode[] | undefined;
  /** the device's answer to one of the server's own IQs */
  replied(node: BinaryNode): void;
}

export interface WaSocket {
  readonly deps: WaConnectionDeps;
  readonly sessionId: string;
  readonly phase: Phase;
  readonly link: DeviceLink & { showQr: () => string | null };
  /** the device's registration, from its client payload on */
  readonly registration: CompanionRegistration | null;
  readonly ledger: AckLedger;
  readonly outbound: DeviceOutbound;
  /** what retry receipts need, either way (retry-receipts.ts) */
  readonly retries: RetryLedger;
  readonly pairing: PairingSteps;
  /** the device and its account once it is logged in (phase `open`), null otherwise */
  openDevice(): OpenDevice | null;
  send(node: BinaryNode): void;
  newId(): string;
  lidOf(phoneNumber: string): string;
  /** the server's `<success>`: the network opened the device's session */
  loggedIn(): void;
  /** the device uploaded pre-keys: the app state key and what waited for them can go out */
  preKeysUploaded(): void;
  /** a contact took one of the device's one-time pre-keys: tell it, once per upload, when few are left */
  tellPreKeysLow(): void;
  /** a stream error or failure, after which the client closes the socket */
  streamError(node: BinaryNode): void;
  /** something this side cannot go on from: the socket ends */
  fail(err: unknown): void;
}
