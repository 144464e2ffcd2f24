import type { SimAccount, SimNetworkEvent, SimPresenceLogEntry } from '@app/contracts';
import type { Delivery, SimNetwork } from '../sim-network';
import type { SimWorld } from './world';

/** What a simulator action handler (actions/<area>.ts) is given: the paired device that asked, and the network. */
export interface SimActionScope {
  readonly network: SimNetwork;
  readonly world: SimWorld;
  readonly sessionId: string;
  /** the device's account on the network (the device is paired: unpaired devices are refused before) */
  readonly account: SimAccount;
  /** sends a network event to this device (kept until it acks it, as every event) */
  deliver(event: SimNetworkEvent): Delivery;
  /** records what the device did in its presence log (`GET /sim/sessions/{id}/presence-log`) */
  log(entry: SimPresenceLogEntry): void;
}
