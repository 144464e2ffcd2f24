import type {
  AuthenticationCreds,
  CacheStore,
  proto,
  SignalKeyStore,
  UserFacingSocketConfig,
  WASocket,
} from '@whiskeysockets/baileys';

/** Baileys' logger interface (not exported by name); pino loggers satisfy it. */
export type BaileysLogger = NonNullable<UserFacingSocketConfig['logger']>;

/**
 * The parts of Baileys the engine calls at runtime. Baileys is ESM-only: Node 20 can `require()` it, jest cannot,
 * so it is loaded here, lazily, on the first connect; tests hand the engine a fake runtime instead.
 */
export interface BaileysRuntime {
  makeWASocket(config: UserFacingSocketConfig): WASocket;
  initAuthCreds(): AuthenticationCreds;
  makeCacheableSignalKeyStore(store: SignalKeyStore, logger?: BaileysLogger, cache?: CacheStore): SignalKeyStore;
  /** app-state sync keys are protobuf objects; after a JSON round trip they must be rebuilt as such */
  appStateSyncKeyFromObject(value: object): proto.Message.IAppStateSyncKeyData;
}

let loaded: BaileysRuntime | null = null;

export function loadBaileysRuntime(): BaileysRuntime {
  if (loaded) return loaded;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const baileys = require('@whiskeysockets/baileys') as typeof import('@whiskeysockets/baileys');
  loaded = {
    makeWASocket: baileys.makeWASocket,
    initAuthCreds: baileys.initAuthCreds,
    makeCacheableSignalKeyStore: baileys.makeCacheableSignalKeyStore,
    appStateSyncKeyFromObject: (value) => baileys.proto.Message.AppStateSyncKeyData.fromObject(value),
  };
  return loaded;
}
