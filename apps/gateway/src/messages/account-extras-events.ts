import type { Logger } from 'pino';
import type { CatalogEvent } from '@app/contracts';
import type { AccountExtrasEngineEvent } from '../engine/account-extras-events';
import type { SessionRecords } from '../sessions/session-ports';

export interface AccountExtrasEventsDeps {
  sessionId: string;
  records: Pick<SessionRecords, 'find'>;
  /** publishes one event of the session (durable once it resolves) */
  publish(event: CatalogEvent<'label.update' | 'status.received' | 'channel.message'>): Promise<void>;
  logger: Logger;
}

/**
 * Labels, statuses and channel posts the network reports (CONTRACT 13) → `label.update`, `status.received`,
 * `channel.message`. A contact's status is announced only when the session's `receiveStatus` is on (read at each
 * status, so a PATCH applies to the next one); otherwise it is dropped, as status broadcasts always were.
 */
export async function takeAccountExtrasEvent(event: AccountExtrasEngineEvent, deps: AccountExtrasEventsDeps): Promise<void> {
  switch (event.type) {
    case 'label':
      return deps.publish({ event: 'label.update', payload: event.change });
    case 'status': {
      const session = await deps.records.find(deps.sessionId);
      if (!session?.receiveStatus) {
        deps.logger.debug({ waMessageId: event.status.waMessageId, from: event.status.from }, 'status not announced: receiveStatus is off');
        return;
      }
      return deps.publish({ event: 'status.received', payload: event.status });
    }
    case 'channel-message':
      return deps.publish({ event: 'channel.message', payload: event.post });
  }
}
