import type { SessionActionHandlers } from '@app/contracts';
import type { BaileysActionContext } from './context';
import { ACCOUNT_EXTRAS_BAILEYS_ACTIONS } from './account-extras';

/**
 * What the Baileys engine does for each operation of SessionActionMap (libs/contracts/src/session-actions.ts): one
 * table per area, each in its own file beside this one, each handler calling Baileys' own socket functions.
 * TypeScript requires a handler for every action of the map.
 */
export const BAILEYS_ACTIONS: SessionActionHandlers<BaileysActionContext> = {
  ...ACCOUNT_EXTRAS_BAILEYS_ACTIONS,
};

export type { BaileysActionContext } from './context';
