import { SimAccountExtras } from './account-extras';

/**
 * What the simulated network knows beyond devices, messages and groups (sim-network.ts): the state the operations of
 * CONTRACT 12 and 13 read and change, one object per area (accounts and profiles, chat state, group administration,
 * labels, statuses, channels, calls). Both front doors and the control API reach it through `SimNetwork.world`.
 * In memory, like the rest of the simulator.
 */
export class SimWorld {
  /** business labels, statuses, channels (CONTRACT 13) */
  readonly accountExtras = new SimAccountExtras();
}
