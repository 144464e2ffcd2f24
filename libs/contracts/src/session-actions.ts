import type { AccountExtrasActionMap } from './account-extras';
import type { ChatActionMap } from './chats';
import type { ContactActionMap } from './contacts';
import type { GroupActionMap } from './group-admin';
import type { MessageActionMap } from './message-actions';
import type { MediaActionMap } from './media-actions';

/**
 * Every operation on a connected session that needs the network and answers at once (CONTRACT 12 and 13): look a
 * number up, block a contact, mark a chat read, edit a message, administer a group, follow a channel… One seam for
 * all of them, so a new operation is one entry here plus one handler per engine, never a new command or socket call
 * path:
 *
 *   API service ──SessionActions.perform──▶ command `session.action` ──▶ SessionHost ──▶ SessionRunner.perform
 *     (404 across organizations, 409 when not `working`)                     (409 when no open connection)
 *   ──▶ EngineConnection.perform(action, args) ──▶ Baileys: apps/gateway/src/engine/baileys/actions/<area>.ts
 *                                               └─▶ sim: device op `action` ──▶ apps/network-sim/src/actions/<area>.ts
 *
 * Sends (forwards, votes, voice notes, stickers, statuses) are NOT actions: they go through the message log and the
 * send queue (CONTRACT 10) so they are paced, counted and sent exactly once.
 *
 * Each entry: `{ args, result }`, both JSON-able (they cross Redis and the simulator's WebSocket). An engine refuses an
 * operation WhatsApp refuses with a DomainError (`conflict` for "not allowed now", `validation_error` for bad input).
 */
export type SessionActionMap = ContactActionMap & ChatActionMap & MessageActionMap & GroupActionMap & AccountExtrasActionMap & MediaActionMap;

export type SessionActionName = keyof SessionActionMap & string;
export type SessionActionArgs<A extends SessionActionName> = SessionActionMap[A] extends { args: infer T } ? T : never;
export type SessionActionResult<A extends SessionActionName> = SessionActionMap[A] extends { result: infer T } ? T : never;

/** A table of handlers, one per action: an engine (or the simulator) provides one for every entry of the map. */
export type SessionActionHandlers<Ctx> = {
  [A in SessionActionName]: (ctx: Ctx, args: SessionActionArgs<A>) => Promise<SessionActionResult<A>> | SessionActionResult<A>;
};
