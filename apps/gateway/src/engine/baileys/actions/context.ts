import type { WASocket } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { BaileysRuntime } from '../baileys-runtime';
import type { EngineEvent, EngineLookups, FollowedChannelBook } from '../../engine.interface';

/** What a Baileys action handler (actions/<area>.ts) is given: the open socket and what the connection knows. */
export interface BaileysActionContext {
  readonly sessionId: string;
  /** the open socket (the connection checked it is open before calling the handler) */
  readonly sock: WASocket;
  /** `<digits>@s.whatsapp.net` of the account, null before login */
  ownJid(): string | null;
  /** Baileys' functions loaded at run time (ESM): proto, jidNormalizedUser, … (baileys-runtime.ts) */
  readonly runtime: BaileysRuntime;
  /** PostgreSQL lookups of the session (stored messages and groups), null in callers without a store */
  readonly lookups: EngineLookups | null;
  /** the followed channels the gateway keeps; absent or null in callers without a store */
  readonly channels?: FollowedChannelBook | null;
  /** passes an engine event to the gateway, as if the network had sent it (spooled, in order) */
  emit(event: EngineEvent): void;
  readonly logger: Logger;
}
