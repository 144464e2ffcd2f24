import type { SessionActionHandlers } from '@app/contracts';
import { CONTACT_BAILEYS_ACTIONS } from './contacts';
import type { BaileysActionContext } from './context';
import { MEDIA_BAILEYS_ACTIONS } from './media';
import { CHAT_ACTIONS } from './chats';
import { BAILEYS_GROUP_ACTIONS } from './group-admin';
import { BAILEYS_MESSAGE_ACTIONS } from './message-actions';
import { ACCOUNT_EXTRAS_BAILEYS_ACTIONS } from './account-extras';

/**
 * What the Baileys engine does for each operation of SessionActionMap (libs/contracts/src/session-actions.ts): one
 * table per area, each in its own file beside this one, each handler calling Baileys' own socket functions.
 * TypeScript requires a handler for every action of the map.
 */
export const BAILEYS_ACTIONS: SessionActionHandlers<BaileysActionContext> = {
  ...CONTACT_BAILEYS_ACTIONS,
  ...MEDIA_BAILEYS_ACTIONS,
  ...CHAT_ACTIONS,
  ...BAILEYS_GROUP_ACTIONS,
  ...BAILEYS_MESSAGE_ACTIONS,
  ...ACCOUNT_EXTRAS_BAILEYS_ACTIONS,
};

export type { BaileysActionContext } from './context';
export { watchCalls } from './message-actions';
