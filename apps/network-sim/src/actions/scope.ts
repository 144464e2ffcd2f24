import type { SimAccount, SimGroup, SimMedia, SimNetworkEvent, SimPresenceLogEntry, SimSentMessage } from '@app/contracts';
import type { MediaInput } from '../sim-input';

/** What a control call that reaches a device answers: whether the device was offline (the event waits for it). */
export interface Delivery {
  queued: boolean;
}

/**
 * What the action handlers ask of the network (SimNetwork is it): declared here, below SimNetwork, so that the network
 * imports its actions and not the other way round.
 */
export interface SimActionNetwork {
  lidOf(phoneNumber: string): string;
  hasAccount(jid: string): boolean;
  /** the account of a paired device */
  accountOf(sessionId: string): SimAccount;
  /** the session ids of the paired devices of an account */
  sessionsOfAccount(jid: string): string[];
  /** queues an event for one device (pushed now when connected); null when the session has no paired device */
  deliverTo(sessionId: string, event: SimNetworkEvent): Delivery | null;
  /** the event to these members' devices; answers the sessions it reached */
  deliverToGroup(group: SimGroup, members: string[], event: SimNetworkEvent): string[];
  group(groupJid: string): SimGroup;
  findSent(sessionId: string, waMessageId: unknown): SimSentMessage | undefined;
  /** keeps media bytes on the network (served at GET /sim/media/{id}) */
  keepMediaBytes(input: MediaInput): SimMedia;
  /** keeps bytes the network serves at `GET /sim/media/{mediaId}` (a group's picture); answers the mediaId */
  holdMedia(data: Buffer, mimetype: string): string;
}

/**
 * What a simulator action handler (actions/<area>.ts) is given: the paired device that asked, the network, and the
 * part of SimWorld its area reads (`World`: each area names its own, so this file and the areas never import world.ts,
 * which gathers them; index.ts hands every handler the whole SimWorld).
 */
export interface SimActionScope<World = object> {
  readonly network: SimActionNetwork;
  readonly world: World;
  readonly sessionId: string;
  /** the device's account on the network (the device is paired: unpaired devices are refused before) */
  readonly account: SimAccount;
  /** sends a network event to this device (kept until it acks it, as every event) */
  deliver(event: SimNetworkEvent): Delivery;
  /** records what the device did in its presence log (`GET /sim/sessions/{id}/presence-log`) */
  log(entry: SimPresenceLogEntry): void;
}
