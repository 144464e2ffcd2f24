import { DomainError, type SessionActionHandlers } from '@app/contracts';
import { CONTACT_SIM_ACTIONS } from './contacts';
import { SIM_MESSAGE_ACTIONS } from './message-actions';
import type { SimActionScope } from './scope';
import { MEDIA_SIM_ACTIONS } from './media';
import { SIM_CHAT_ACTIONS } from './chats';
import { SIM_GROUP_ACTIONS } from './group-admin';
import { ACCOUNT_EXTRAS_SIM_ACTIONS } from './account-extras';
import type { SimWorld } from './world';

/** What every handler is given here: the asking device's scope with the whole SimWorld (each area reads its part). */
export type SimWorldScope = SimActionScope<SimWorld>;

/**
 * How the simulator plays each operation of SessionActionMap (libs/contracts/src/session-actions.ts) asked by a device
 * over the device protocol (op `action`): one table per area, each in its own file beside this one. TypeScript
 * requires a handler for every action of the map, so the `sim` engine can do whatever the Baileys engine can.
 */
export const SIM_ACTIONS: SessionActionHandlers<SimWorldScope> = {
  ...CONTACT_SIM_ACTIONS,
  ...MEDIA_SIM_ACTIONS,
  ...SIM_CHAT_ACTIONS,
  ...SIM_GROUP_ACTIONS,
  ...SIM_MESSAGE_ACTIONS,
  ...ACCOUNT_EXTRAS_SIM_ACTIONS,
};

export function performSimAction(scope: SimWorldScope, action: unknown, args: unknown): unknown {
  const handler = typeof action === 'string' ? (SIM_ACTIONS as Record<string, unknown>)[action] : undefined;
  if (typeof handler !== 'function') throw new DomainError('validation_error', `unknown session action ${String(action)}`, { action });
  return (handler as (scope: SimWorldScope, args: unknown) => unknown)(scope, args ?? {});
}

export type { Delivery, SimActionNetwork, SimActionScope } from './scope';
export { SimWorld } from './world';
