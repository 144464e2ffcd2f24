import type {
  AuthenticationCreds,
  CacheStore,
  proto,
  SignalKeyStore,
  UserFacingSocketConfig,
  WAMessage,
  WASocket,
} from '@whiskeysockets/baileys';

/** Baileys' logger interface (not exported by name); pino loggers satisfy it. */
export type BaileysLogger = NonNullable<UserFacingSocketConfig['logger']>;

/** Who signed a poll vote: both JIDs exactly as the voter's phone used them to derive the key. */
export interface PollVoteContext {
  pollCreatorJid: string;
  pollMsgId: string;
  pollEncKey: Uint8Array;
  voterJid: string;
}

export interface PollOptionVotes {
  name: string;
  voters: string[];
}

/** proto.Message to bytes and back: what `raw` holds (stored content for retry receipts, quotes and polls). */
export interface MessageCodec {
  encodeMessage(content: proto.IMessage): Uint8Array;
  decodeMessage(bytes: Uint8Array): proto.IMessage;
}

/** Baileys' poll helpers: decrypt one vote, and turn votes into option names (options are sent as SHA-256 hashes). */
export interface PollCrypto {
  decryptPollVote(vote: proto.Message.IPollEncValue, context: PollVoteContext): proto.Message.IPollVoteMessage;
  getAggregateVotesInPollMessage(poll: Pick<WAMessage, 'message' | 'pollUpdates'>, meId?: string): PollOptionVotes[];
}

/**
 * The parts of Baileys the engine calls at runtime. Baileys is ESM-only: Node 20 can `require()` it, jest cannot,
 * so it is loaded here, lazily, on the first connect; tests hand the engine a fake runtime instead.
 */
export interface BaileysRuntime extends MessageCodec, PollCrypto {
  makeWASocket(config: UserFacingSocketConfig): WASocket;
  initAuthCreds(): AuthenticationCreds;
  makeCacheableSignalKeyStore(store: SignalKeyStore, logger?: BaileysLogger, cache?: CacheStore): SignalKeyStore;
  /** app-state sync keys are protobuf objects; after a JSON round trip they must be rebuilt as such */
  appStateSyncKeyFromObject(value: object): proto.Message.IAppStateSyncKeyData;
  /** the WhatsApp Web version this Baileys release announces by default */
  bundledWaWebVersion?: [number, number, number];
  /** Baileys' `fetchLatestWaWebVersion`: WhatsApp Web's current version, or null when it could not be read */
  fetchLatestWaWebVersion?(signal: AbortSignal): Promise<[number, number, number] | null>;
}

let loaded: BaileysRuntime | null = null;

export function loadBaileysRuntime(): BaileysRuntime {
  if (loaded) return loaded;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy, synchronous load: an import statement would load Baileys in every process that imports this file
  const baileys = require('@whiskeysockets/baileys') as typeof import('@whiskeysockets/baileys');
  loaded = {
    makeWASocket: baileys.makeWASocket,
    initAuthCreds: baileys.initAuthCreds,
    makeCacheableSignalKeyStore: baileys.makeCacheableSignalKeyStore,
    appStateSyncKeyFromObject: (value) => baileys.proto.Message.AppStateSyncKeyData.fromObject(value),
    encodeMessage: (content) => baileys.proto.Message.encode(content).finish(),
    decodeMessage: (bytes) => baileys.proto.Message.decode(bytes),
    decryptPollVote: (vote, context) => baileys.decryptPollVote(vote, context),
    getAggregateVotesInPollMessage: (poll, meId) => baileys.getAggregateVotesInPollMessage(poll, meId),
    bundledWaWebVersion: [...baileys.DEFAULT_CONNECTION_CONFIG.version] as [number, number, number],
    fetchLatestWaWebVersion: async (signal) => {
      // Baileys answers its bundled version with isLatest false when the page cannot be read: that is no answer
      const { version, isLatest } = await baileys.fetchLatestWaWebVersion({ signal });
      return isLatest ? ([...version] as [number, number, number]) : null;
    },
  };
  return loaded;
}
