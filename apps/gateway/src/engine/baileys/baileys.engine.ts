import type { Logger } from 'pino';
import type {
  AuthenticationCreds,
  BaileysEventMap,
  ConnectionState,
  SignalDataTypeMap,
  SignalKeyStore,
  UserFacingSocketConfig,
  WABrowserDescription,
  WASocket,
} from '@whiskeysockets/baileys';
import type {
  AuthStateStore,
  ConnectOptions,
  EngineConnection,
  EngineEvent,
  GroupInfo,
  SessionEngine,
} from '../engine.interface';
import { type BaileysLogger, type BaileysRuntime, loadBaileysRuntime } from './baileys-runtime';
import { accountFrom, closeReasonFor, groupInfoFrom, inboundMessageFrom, statusCodeOf, toUserJid } from './baileys-mapping';

export type SocketFactory = (config: UserFacingSocketConfig) => WASocket;

export interface BaileysEngineOptions {
  /** Where the socket connects; default WhatsApp Web. Tests point it at a local WebSocket server. */
  waWebSocketUrl?: string;
  /** How the linked device shows on the phone; default Baileys' own. */
  browser?: WABrowserDescription;
  /** Bounds the WebSocket handshake, each send, and how long close() and pairing waits may take. */
  connectTimeoutMs?: number;
  /** Socket factory; default Baileys' makeWASocket. Unit tests pass a fake socket. */
  makeSocket?: SocketFactory;
  /** Baileys' runtime helpers; default the real module, required on the first connect. */
  runtime?: BaileysRuntime;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 20_000;

/** Thrown by every call on a connection that has closed (or is closing): the runner must connect again. */
export class EngineConnectionClosedError extends Error {
  constructor(sessionId: string, action: string) {
    super(`cannot ${action}: the WhatsApp connection of session ${sessionId} is closed`);
    this.name = 'EngineConnectionClosedError';
  }
}

/**
 * The real WhatsApp network through Baileys. One connect() is one socket: the engine never reconnects by itself;
 * it reports why a socket closed and the SessionRunner decides what comes next.
 */
export class BaileysEngine implements SessionEngine {
  readonly name = 'baileys' as const;

  constructor(private readonly options: BaileysEngineOptions = {}) {}

  async connect({ sessionId, auth, onEvent, logger }: ConnectOptions): Promise<EngineConnection> {
    const runtime = this.options.runtime ?? loadBaileysRuntime();
    const makeSocket = this.options.makeSocket ?? runtime.makeWASocket;
    const connectTimeoutMs = this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const baileysLogger = quietLogger(logger, sessionId);

    const creds = (await auth.readCreds<AuthenticationCreds>()) ?? runtime.initAuthCreds();
    const keys = runtime.makeCacheableSignalKeyStore(signalKeyStore(auth, runtime), baileysLogger);

    const sock = makeSocket({
      auth: { creds, keys },
      logger: baileysLogger,
      connectTimeoutMs,
      ...(this.options.waWebSocketUrl ? { waWebSocketUrl: this.options.waWebSocketUrl } : {}),
      ...(this.options.browser ? { browser: this.options.browser } : {}),
      // the phone keeps its notifications; a gateway is not a person reading chats
      markOnlineOnConnect: false,
      syncFullHistory: false,
      generateHighQualityLinkPreview: false,
    });
    return new BaileysConnection({ sessionId, sock, creds, auth, onEvent, logger, connectTimeoutMs });
  }
}

/** Baileys logs a lot at info; it speaks at warn or above, and never louder than the gateway's own level. */
function quietLogger(logger: Logger, sessionId: string): BaileysLogger {
  const level = logger.isLevelEnabled('warn') ? 'warn' : logger.level;
  return logger.child({ engine: 'baileys', sessionId }, { level }) as unknown as BaileysLogger;
}

/** Baileys' key store over our AuthStateStore; values come back from JSON, so protobuf keys are rebuilt. */
function signalKeyStore(auth: AuthStateStore, runtime: BaileysRuntime): SignalKeyStore {
  return {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const found = await auth.readKeys<SignalDataTypeMap[T]>(type, ids);
      if (type === 'app-state-sync-key') {
        for (const id of Object.keys(found)) {
          found[id] = runtime.appStateSyncKeyFromObject(found[id] as object) as SignalDataTypeMap[T];
        }
      }
      return found;
    },
    async set(data) {
      await auth.writeKeys(data as Record<string, Record<string, unknown | null>>);
    },
    async clear() {
      await auth.clear();
    },
  };
}

interface ConnectionDeps {
  sessionId: string;
  sock: WASocket;
  creds: AuthenticationCreds;
  auth: AuthStateStore;
  onEvent: (event: EngineEvent) => void;
  logger: Logger;
  connectTimeoutMs: number;
}

type Phase = 'connecting' | 'awaiting_pairing' | 'open' | 'closed';

class BaileysConnection implements EngineConnection {
  private phase: Phase = 'connecting';
  private closeRequested = false;
  /** creds writes run one after another, so an older snapshot never overwrites a newer one */
  private credsSaved: Promise<void> = Promise.resolve();
  private readonly closed: Promise<void>;
  private markClosed!: () => void;
  private readonly phaseWaiters = new Set<() => void>();

  constructor(private readonly deps: ConnectionDeps) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    const { ev } = deps.sock;
    ev.on('connection.update', (update) => this.guard('connection.update', () => this.onConnectionUpdate(update)));
    ev.on('creds.update', (update) => this.guard('creds.update', () => this.onCredsUpdate(update)));
    ev.on('messages.upsert', (upsert) => this.guard('messages.upsert', () => this.onMessagesUpsert(upsert)));
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    const digits = phoneNumber.replace(/\D/g, '');
    if (digits.length < 6 || digits.length > 15) throw new Error('a pairing code needs a phone number of 6 to 15 digits');
    if (this.deps.creds.registered) throw new Error(`session ${this.deps.sessionId} is already paired`);
    // WhatsApp accepts the code request only once the handshake is done and it is waiting for a pairing
    await this.waitForPhase(['awaiting_pairing'], 'request a pairing code');
    return this.call('request a pairing code', () => this.deps.sock.requestPairingCode(digits));
  }

  async createGroup(subject: string, participants: string[]): Promise<GroupInfo> {
    this.assertOpen('create a group');
    const meta = await this.call('create a group', () => this.deps.sock.groupCreate(subject, participants));
    return groupInfoFrom(meta, this.ownJid());
  }

  async sendText(to: string, text: string): Promise<{ waMessageId: string }> {
    this.assertOpen('send a message');
    const sent = await this.call('send a message', () => this.deps.sock.sendMessage(to, { text }));
    if (!sent?.key?.id) throw new Error('WhatsApp returned no message id for the sent message');
    return { waMessageId: sent.key.id };
  }

  async logout(): Promise<void> {
    if (this.phase === 'closed' || this.closeRequested) throw new EngineConnectionClosedError(this.deps.sessionId, 'log out');
    try {
      // Baileys tells the network to remove this companion device, then ends the socket with 401 (logged_out)
      await this.deps.sock.logout();
    } catch (err) {
      await this.close();
      throw new Error(`logout did not reach WhatsApp: ${describe(err)}`);
    }
    await this.settle();
  }

  async close(): Promise<void> {
    if (this.phase === 'closed') return this.credsSaved;
    this.closeRequested = true;
    try {
      await this.deps.sock.end(undefined);
    } catch (err) {
      this.deps.logger.warn({ err: describe(err) }, 'baileys socket end failed');
    }
    await this.settle();
  }

  /** Waits (bounded) for the socket's close event, then for pending creds writes, so a takeover reads the latest. */
  private async settle(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.deps.connectTimeoutMs);
    });
    const outcome = await Promise.race([this.closed.then(() => 'closed' as const), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.finish({ type: 'close', reason: 'closed_by_us', statusCode: null, message: 'socket did not confirm the close' });
    await this.credsSaved;
  }

  private onConnectionUpdate(update: Partial<ConnectionState>): void {
    if (this.phase === 'closed') return;
    if (update.qr) {
      this.setPhase('awaiting_pairing');
      this.emit({ type: 'qr', qr: update.qr });
    }
    if (update.connection === 'open') {
      const account = accountFrom(this.deps.sock.user ?? this.deps.creds.me);
      if (!account) {
        this.deps.logger.error({ user: this.deps.sock.user?.id }, 'WhatsApp opened a connection without a usable account id');
        return;
      }
      this.setPhase('open');
      this.emit({ type: 'open', account });
    }
    if (update.connection === 'close') {
      const error = update.lastDisconnect?.error;
      const statusCode = statusCodeOf(error);
      this.finish({
        type: 'close',
        reason: this.closeRequested ? 'closed_by_us' : closeReasonFor(statusCode),
        statusCode,
        message: error ? describe(error) : 'connection closed',
      });
    }
  }

  private onCredsUpdate(update: Partial<AuthenticationCreds>): void {
    // the socket applies the update to the creds object too; doing it here keeps the snapshot right whatever the order
    Object.assign(this.deps.creds, update);
    this.credsSaved = this.credsSaved
      .then(() => this.deps.auth.writeCreds(this.deps.creds))
      .catch((err) => this.deps.logger.error({ err: describe(err) }, 'storing WhatsApp credentials failed'));
  }

  private onMessagesUpsert({ messages, type }: BaileysEventMap['messages.upsert']): void {
    // 'append' is history and our own echoes; only 'notify' is news
    if (type !== 'notify') return;
    const ownJid = this.ownJid();
    for (const raw of messages) {
      const message = inboundMessageFrom(raw, ownJid);
      if (message) this.emit({ type: 'message', message });
    }
  }

  /**
   * The close is reported only after pending creds writes: after pairing WhatsApp closes with 515 and the runner
   * connects again at once, and that socket must read the paired creds, not the ones from before the scan.
   */
  private finish(event: Extract<EngineEvent, { type: 'close' }>): void {
    if (this.phase === 'closed') return;
    this.setPhase('closed');
    void this.credsSaved.then(() => {
      this.markClosed();
      this.emit(event);
    });
  }

  private setPhase(phase: Phase): void {
    this.phase = phase;
    for (const wake of this.phaseWaiters) wake();
  }

  private async waitForPhase(wanted: Phase[], action: string): Promise<void> {
    const deadline = Date.now() + this.deps.connectTimeoutMs;
    while (!wanted.includes(this.phase)) {
      if (this.phase === 'closed' || this.closeRequested) throw new EngineConnectionClosedError(this.deps.sessionId, action);
      if (this.phase === 'open') throw new Error(`cannot ${action}: session ${this.deps.sessionId} is already connected`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`cannot ${action}: WhatsApp did not get ready within ${this.deps.connectTimeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.phaseWaiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, remaining);
        this.phaseWaiters.add(wake);
      });
    }
  }

  private assertOpen(action: string): void {
    if (this.phase === 'closed' || this.closeRequested) throw new EngineConnectionClosedError(this.deps.sessionId, action);
    if (this.phase !== 'open') throw new Error(`cannot ${action}: session ${this.deps.sessionId} is not connected yet`);
  }

  /** Baileys rejects with Boom errors whose text is terse; the caller gets one clear Error either way. */
  private async call<T>(action: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (this.phase === 'closed') throw new EngineConnectionClosedError(this.deps.sessionId, action);
      throw new Error(`cannot ${action}: ${describe(err)}`);
    }
  }

  private ownJid(): string | null {
    return toUserJid(this.deps.sock.user?.id) ?? toUserJid(this.deps.sock.user?.phoneNumber) ?? toUserJid(this.deps.creds.me?.id);
  }

  private emit(event: EngineEvent): void {
    try {
      this.deps.onEvent(event);
    } catch (err) {
      this.deps.logger.error({ err: describe(err), event: event.type }, 'engine event handler threw');
    }
  }

  /** An exception thrown inside Baileys' event emitter would break its flow; ours stay here. */
  private guard(what: string, run: () => void): void {
    try {
      run();
    } catch (err) {
      this.deps.logger.error({ err: describe(err), what }, 'handling a baileys event failed');
    }
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
