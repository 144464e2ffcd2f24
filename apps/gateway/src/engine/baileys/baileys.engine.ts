import type { Logger } from 'pino';
import type {
  AuthenticationCreds,
  GroupMetadata,
  proto,
  SignalDataTypeMap,
  SignalKeyStore,
  UserFacingSocketConfig,
  WABrowserDescription,
  WAMessage,
  WAMessageKey,
  WASocket,
} from '@whiskeysockets/baileys';
import { type SyncHistoryMode } from '@app/contracts';
import type { EventSpool } from '@app/messaging';
import type { TargetAllowList } from '@app/net-guard';
import type {
  AuthStateStore,
  CloseReason,
  ConnectOptions,
  EngineConnection,
  EngineLookups,
  SessionEngine,
} from '../engine.interface';
import { type BaileysLogger, type BaileysRuntime, loadBaileysRuntime } from './baileys-runtime';
import {
  groupMetadataFrom,
} from './baileys-mapping';
import { proxyAgentFor, type ProxyUnreachableError } from './proxy-agent';
import { BoundedCache, SignalKeyCache } from './signal-key-cache';
import { assertOwnCredential } from '../credentials-unusable';
import { runInSessionContext } from '../session-context';
import type { WaWebVersionSource } from './wa-web-version';
import { BaileysConnection } from './baileys-connection';
import type { HeldReceiptsMetrics } from './held-receipts';
import { describe, EngineConnectionClosedError } from './connection-errors';
import { storedContent } from './baileys-identity';

export { EngineConnectionClosedError };

export type SocketFactory = (config: UserFacingSocketConfig) => WASocket;

export interface BaileysEngineOptions {
  /** Where the socket connects; default WhatsApp Web. Tests point it at a local WebSocket server. */
  waWebSocketUrl?: string;
  /** Where one session's socket connects, when that depends on the session (the emulator seam, whatsapp-emulator.ts). */
  socketUrlFor?: (sessionId: string) => string;
  /** How the linked device shows on the phone; default Baileys' own. */
  browser?: WABrowserDescription;
  /** Bounds the WebSocket handshake, each send, and how long close() and pairing waits may take. */
  connectTimeoutMs?: number;
  /** Socket factory; default Baileys' makeWASocket. Unit tests pass a fake socket. */
  makeSocket?: SocketFactory;
  /** Baileys' runtime helpers; default the real module, required on the first connect. */
  runtime?: BaileysRuntime;
  /** Which WhatsApp Web version to announce (WHATSAPP_WEB_VERSION, the fetch); absent = Baileys' default. */
  waWebVersion?: WaWebVersionSource;
  /**
   * After the gateway did not take a spooled event (PostgreSQL down, say) while the socket stays open, the spool is
   * handed over again after this delay, doubling up to 30 s while it keeps failing (default 1000 ms).
   */
  spoolRetryMs?: number;
  /**
   * Where every inbound event is kept from the moment Baileys hands it over until the gateway has taken it
   * (docs/baileys-engine.md, "The inbound spool"). Without one, events are handed over unspooled.
   */
  spool?: EventSpool;
  /** Counts the delivery receipts held until their messages are durable (docs/baileys-engine.md, "Receipts after durable"). */
  receiptMetrics?: HeldReceiptsMetrics;
  /** Private proxy hosts and ranges a session's `proxyUrl` may name (SESSION_PROXY_ALLOWED); default none. */
  proxyAllowList?: TargetAllowList;
  /** How long each QR shows (Baileys' `qrTimeout`, BAILEYS_QR_TIMEOUT_MS); absent = Baileys' 60 s, then 20 s. */
  qrTimeoutMs?: number;
}


/**
 * Closes after which the session stays on this gateway and its signal-key cache stays right: the reconnect reuses it.
 * After any other close (our own close for a stop, a move or a lost lease; a logout; a bad session) another holder
 * may write the keys, or they were wiped, so the next connect starts a fresh cache.
 */
const KEEPS_KEY_CACHE: ReadonlySet<CloseReason> = new Set(['transient', 'restart_required']);

/**
 * What a session keeps on this gateway across its sockets, until the runner forgets it: the retry counters of
 * messages it could not decrypt (Baileys asks the sender again at most a few times per message; a socket of its own
 * would start counting from zero after every reconnect) and contacts' device lists (each one a USync query saved).
 */
interface SessionCaches {
  /** reset after a close that may let another holder write the keys (see KEEPS_KEY_CACHE) */
  keys: SignalKeyCache;
  msgRetryCounters: BoundedCache;
  userDevices: BoundedCache;
}

/** Baileys' own TTLs for these two caches (an hour, five minutes), with a bound ours adds. */
const MSG_RETRY_TTL_MS = 60 * 60_000;
const USER_DEVICES_TTL_MS = 5 * 60_000;
const SESSION_CACHE_MAX_ITEMS = 5000;

const DEFAULT_CONNECT_TIMEOUT_MS = 20_000;
const DEFAULT_SPOOL_RETRY_MS = 1000;


/**
 * The real WhatsApp network through Baileys. One connect() is one socket: the engine never reconnects by itself;
 * it reports why a socket closed and the SessionRunner decides what comes next.
 */
export class BaileysEngine implements SessionEngine {
  readonly name = 'baileys' as const;

  /** each session's caches on this gateway, reused by its reconnects, dropped by forget() */
  private readonly sessionCaches = new Map<string, SessionCaches>();
  /** spool entries handed to the gateway and not settled yet (`<sessionId> <entry id>`): a replay leaves them alone */
  private readonly inFlight = new Set<string>();

  constructor(private readonly options: BaileysEngineOptions = {}) {}

  waWebVersion(): string | null {
    return this.options.waWebVersion?.inUse() ?? null;
  }

  async connect(options: ConnectOptions): Promise<EngineConnection> {
    const { sessionId, auth, logger, lookups, syncHistory = 'none', channels } = options;
    const runtime = this.options.runtime ?? loadBaileysRuntime();
    const version = this.options.waWebVersion ? (await this.options.waWebVersion.current()).version : null;
    // a 405 (this version refused) makes the next connect of any session read the version again
    const onEvent: ConnectOptions['onEvent'] = (event) => {
      if (version && event.type === 'close' && event.reason === 'client_version_refused') this.options.waWebVersion?.refused(version);
      return options.onEvent(event);
    };
    const makeSocket = this.options.makeSocket ?? runtime.makeWASocket;
    const connectTimeoutMs = this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const baileysLogger = quietLogger(logger, sessionId);

    // another engine's credential (or none this engine reads) is refused before any socket: the runner logs it out
    const stored = await auth.readCreds<AuthenticationCreds>();
    assertOwnCredential('baileys', stored);
    const creds = stored ?? runtime.initAuthCreds();
    const caches = this.cachesOf(sessionId);
    const keyCache = caches.keys;
    const keys = runtime.makeCacheableSignalKeyStore(signalKeyStore(auth, runtime), baileysLogger, keyCache);
    const onClosed = (reason: CloseReason) => {
      if (!KEEPS_KEY_CACHE.has(reason) && caches.keys === keyCache) caches.keys = new SignalKeyCache();
    };

    // the lookups are handed to the socket before the connection exists; Baileys asks them only once it is open
    let connection: BaileysConnection | null = null;
    const fetchGroup = (jid: string) => connection?.fetchGroupForSend(jid) ?? Promise.resolve(undefined);
    // a message's receipt waits until it is durable; none arrives before the connection exists (it needs an open socket)
    const holdReceipt = (msg: WAMessage, send: () => Promise<void>) => (connection ? connection.holdReceipt(msg, send) : void send().catch(() => undefined));
    const config = this.socketConfig(options, { creds, keys, baileysLogger, connectTimeoutMs, version, caches, runtime, fetchGroup, holdReceipt });
    // everything the socket does from now on (frames, timers, promises) runs in the session's context: a stray
    // rejection from inside Baileys is traced to this session (main.ts)
    const sock = runInSessionContext(sessionId, () => makeSocket(config));
    connection = new BaileysConnection({
      sessionId,
      sock,
      creds,
      auth,
      onEvent,
      logger,
      connectTimeoutMs,
      runtime,
      lookups: lookups ?? null,
      channels: channels ?? null,
      spool: this.options.spool ?? null,
      spoolRetryMs: this.options.spoolRetryMs ?? DEFAULT_SPOOL_RETRY_MS,
      inFlight: this.inFlight,
      onClosed,
      receiptMetrics: this.options.receiptMetrics,
      syncHistory,
    });
    return connection;
  }

  /** The configuration of one session's Baileys socket: its auth state and caches, version, endpoint, proxy, history. */
  private socketConfig(
    { sessionId, logger, lookups, proxyUrl, syncHistory = 'none' }: ConnectOptions,
    socket: {
      creds: AuthenticationCreds;
      keys: SignalKeyStore;
      baileysLogger: BaileysLogger;
      connectTimeoutMs: number;
      version: UserFacingSocketConfig['version'] | null;
      caches: SessionCaches;
      runtime: BaileysRuntime;
      fetchGroup: (jid: string) => Promise<GroupMetadata | undefined>;
      holdReceipt: NonNullable<UserFacingSocketConfig['holdReceipt']>;
    },
  ): UserFacingSocketConfig {
    const { creds, keys, baileysLogger, connectTimeoutMs, version, caches, runtime, fetchGroup, holdReceipt } = socket;
    const waWebSocketUrl = this.options.socketUrlFor?.(sessionId) ?? this.options.waWebSocketUrl;
    // the session's proxy carries the socket and the media uploads (proxy-agent.ts)
    // (refused and failed proxies are logged here with their cause; the session's status only says proxy_unreachable)
    const onFailure = (err: ProxyUnreachableError) => logger.warn({ sessionId, cause: err.detail }, 'the session proxy is unreachable');
    const proxy = proxyUrl ? proxyAgentFor(proxyUrl, { allow: this.options.proxyAllowList, onFailure }) : null;
    return {
      auth: { creds, keys },
      logger: baileysLogger,
      connectTimeoutMs,
      ...(this.options.qrTimeoutMs ? { qrTimeout: this.options.qrTimeoutMs } : {}),
      ...(version ? { version } : {}),
      ...(waWebSocketUrl ? { waWebSocketUrl } : {}),
      ...(this.options.browser ? { browser: this.options.browser } : {}),
      ...(proxy ? { agent: proxy, fetchAgent: proxy } : {}),
      // the phone keeps its notifications; a gateway is not a person reading chats
      markOnlineOnConnect: false,
      holdReceipt,
      syncFullHistory: false,
      generateHighQualityLinkPreview: false,
      msgRetryCounterCache: caches.msgRetryCounters,
      userDevicesCache: caches.userDevices,
      // the session setting syncHistory (baileys-chats.ts): `none` keeps Baileys' defaults and stores nothing of it
      ...historySyncConfig(syncHistory),
      ...(lookups ? networkLookups(lookups, runtime, logger, fetchGroup) : {}),
    };
  }

  /** The session left this gateway (hand-off, stop, lost lease): what it cached here may be stale when it returns. */
  forget(sessionId: string): void {
    this.sessionCaches.delete(sessionId);
  }

  private cachesOf(sessionId: string): SessionCaches {
    let caches = this.sessionCaches.get(sessionId);
    if (!caches) {
      caches = {
        keys: new SignalKeyCache(),
        msgRetryCounters: new BoundedCache(MSG_RETRY_TTL_MS, SESSION_CACHE_MAX_ITEMS),
        userDevices: new BoundedCache(USER_DEVICES_TTL_MS, SESSION_CACHE_MAX_ITEMS),
      };
      this.sessionCaches.set(sessionId, caches);
    }
    return caches;
  }
}

/**
 * Baileys' history options for the session setting (CONTRACT 12): `recent` takes what WhatsApp sends a new linked device
 * (Baileys' default filter: everything but the full archive), `full` asks the phone for the full archive too. `none`
 * leaves Baileys' defaults (it still reads the initial bootstrap for its LID mappings) and the connection drops the
 * history it yields.
 */
export function historySyncConfig(mode: SyncHistoryMode): Pick<UserFacingSocketConfig, 'syncFullHistory' | 'shouldSyncHistoryMessage'> | Record<string, never> {
  if (mode === 'full') return { syncFullHistory: true, shouldSyncHistoryMessage: () => true };
  return {};
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
    // no `clear`: our store's clear() wipes the creds with the keys, and only a logout or a 401 may do that (the runner)
  };
}

/**
 * What Baileys asks back, served from our store: the content of a message we sent when a recipient's phone asks for a
 * retry (without it the recipient keeps seeing "waiting for this message"), and a group's addressing mode and member
 * ids for group sends. A group with no stored network form is fetched from the network (`fetchGroup`, the one query
 * Baileys would make itself) and stored, so the next send is answered from the store.
 */
function networkLookups(
  lookups: EngineLookups,
  runtime: BaileysRuntime,
  logger: Logger,
  fetchGroup: (jid: string) => Promise<GroupMetadata | undefined>,
): Pick<UserFacingSocketConfig, 'getMessage' | 'cachedGroupMetadata'> {
  // a failing store must not break Baileys' retry or send path: it then behaves as without a store
  const orUndefined = async <T>(what: string, run: () => Promise<T | undefined>): Promise<T | undefined> => {
    try {
      return await run();
    } catch (err) {
      logger.warn({ err: describe(err), what }, 'engine lookup failed');
      return undefined;
    }
  };
  return {
    getMessage: (key: WAMessageKey) =>
      orUndefined('message', async (): Promise<proto.IMessage | undefined> => {
        const raw = await storedContent(lookups, key);
        return raw ? runtime.decodeMessage(raw) : undefined;
      }),
    cachedGroupMetadata: async (jid: string) => {
      const stored = await orUndefined('group', async (): Promise<GroupMetadata | undefined> => {
        const group = await lookups.group(jid);
        return group ? groupMetadataFrom(group) : undefined;
      });
      return stored ?? fetchGroup(jid);
    },
  };
}
