import { DomainError, type MediaActionMap, type SessionActionHandlers } from '@app/contracts';
import type { SimActionScope } from './scope';

/**
 * `media.reupload` on the simulator: its media never expires (it keeps every upload for its lifetime), and its
 * references are `{engine: 'sim'}`, so there is nothing to upload again. A Baileys reference cannot come from a `sim`
 * session; asking is refused as bad input.
 */
export const MEDIA_SIM_ACTIONS: Pick<SessionActionHandlers<SimActionScope>, keyof MediaActionMap> = {
  'media.reupload': (_scope, args) => {
    throw new DomainError('validation_error', 'the simulator keeps its media; there is nothing to upload again', { waMessageId: args.waMessageId });
  },
};
