import type { SessionActionHandlers } from '@app/contracts';
import type { BaileysActionContext } from './context';
import { BAILEYS_MESSAGE_ACTIONS } from './message-actions';

/**
 * What the Baileys engine does for each operation of SessionActionMap (libs/contracts/src/session-actions.ts): one
 * table per area, each in its own file beside this one, each handler calling Baileys' own socket functions.
 * TypeScript requires a handler for every action of the map.
 */
export const BAILEYS_ACTIONS: SessionActionHandlers<BaileysActionContext> = {
  ...BAILEYS_MESSAGE_ACTIONS,
};

export type { BaileysActionContext } from './context';
export { watchCalls } from './message-actions';
