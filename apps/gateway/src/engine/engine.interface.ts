import type { GroupInfo } from '@app/contracts';
import type { Logger } from 'pino';

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

export interface InboundMessage {
  id: string;
  from: string;
  chatJid: string;
  text: string | null;
  timestamp: number;
  fromMe: boolean;
  raw?: unknown;
}

export type { GroupInfo };

/**
 * Why a connection closed, already mapped from the engine's own codes:
 * - restart_required: reconnect at once (Baileys 515 after pairing)
 * - logged_out: the device was unlinked (Baileys 401); wipe auth state, do not reconnect
 * - replaced: another socket took the device (Baileys 440); do not reconnect
 * - bad_session: stored auth state is unusable; wipe and start a fresh QR flow
 * - transient: network trouble; reconnect with capped backoff
 * - closed_by_us: close() was called
 */
export type CloseReason = 'restart_required' | 'logged_out' | 'replaced' | 'bad_session' | 'transient' | 'closed_by_us';

export type EngineEvent =
  | { type: 'qr'; qr: string }
  | { type: 'open'; account: AccountIdentity }
  | { type: 'close'; reason: CloseReason; statusCode: number | null; message: string }
  | { type: 'message'; message: InboundMessage }
  | { type: 'group'; group: GroupInfo; action: 'created' | 'updated' };

export interface EngineConnection {
  /** Ask for a pairing code for this phone number instead of a QR (only before pairing). */
  requestPairingCode(phoneNumber: string): Promise<string>;
  createGroup(subject: string, participants: string[]): Promise<GroupInfo>;
  sendText(to: string, text: string): Promise<{ waMessageId: string }>;
  /** Unlink the device on the network, then close. */
  logout(): Promise<void>;
  /** Close the socket, keeping the pairing. Emits close(closed_by_us). Idempotent. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  sessionId: string;
  auth: AuthStateStore;
  onEvent: (event: EngineEvent) => void;
  logger: Logger;
}

export interface SessionEngine {
  readonly name: 'baileys' | 'sim';
  connect(options: ConnectOptions): Promise<EngineConnection>;
}

/** DI token for the SessionEngine chosen by GATEWAY_ENGINE. */
export const SESSION_ENGINE = Symbol('SESSION_ENGINE');
