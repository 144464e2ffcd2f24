import { SimChats } from './chats';
import { SimContacts } from './contacts';
import { SimGroupAdmin } from './group-admin';
import { SimMessageActions } from './message-actions';
import { SimAccountExtras } from './account-extras';

/**
 * What the simulated network knows beyond devices, messages and groups (sim-network.ts): the state the operations of
 * CONTRACT 12 and 13 read and change, one object per area (accounts and profiles, chat state, group administration,
 * labels, statuses, channels, calls). Both front doors and the control API reach it through `SimNetwork.world`.
 * In memory, like the rest of the simulator.
 */
export class SimWorld {
  /** accounts, profiles, blocklists, presence subscriptions (actions/contacts.ts) */
  readonly contacts = new SimContacts();
  /** chat state per device (archived, pinned, muted, labels), history syncs in flight: actions/chats.ts */
  readonly chats = new SimChats();
  /** invite codes, pictures and metadata reads of groups (actions/group-admin.ts) */
  readonly groupAdmin = new SimGroupAdmin();
  /** message actions (edit window) and calls */
  readonly messages = new SimMessageActions();
  /** business labels, statuses, channels (CONTRACT 13) */
  readonly accountExtras = new SimAccountExtras();
}
