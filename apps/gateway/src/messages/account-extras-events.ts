import type { Logger } from 'pino';
import type { CatalogEvent } from '@app/contracts';
import type { AccountExtrasEngineEvent } from '../engine/account-extras-events';
import type { FollowedChannelBook } from '../engine/engine.interface';
import type { SessionRecords, StoreTx } from '../store-ports';

type ExtrasEvent = CatalogEvent<'label.update' | 'status.received' | 'channel.message'>;

/** The part of `chats` (ChatsRepository) that keeps the labels each chat carries. */
export interface ChatLabelStore {
  /** a label added to (`assigned`) or taken off a chat */
  setLabel(organizationId: string, sessionId: string, jid: string, labelId: string, assigned: boolean, tx?: StoreTx): Promise<void>;
  /** a deleted label leaves every chat of the session */
  dropLabel(sessionId: string, labelId: string, tx?: StoreTx): Promise<void>;
}

export interface AccountExtrasEventsDeps {
  sessionId: string;
  records: Pick<SessionRecords, 'find'>;
  /** publishes one event of the session (durable once it resolves) */
  publish(event: ExtrasEvent): Promise<void>;
  /**
   * Where the chats' labels are kept (absent: label changes are only announced): each association is stored and its
   * `label.update` written in one transaction (`transact`, as SessionEventSink's).
   */
  chatLabels?: {
    organizationId: string;
    store: ChatLabelStore;
    transact<T>(work: (tx: StoreTx, publish: (event: ExtrasEvent) => void) => Promise<T>): Promise<T>;
  };
  /** the followed channels the gateway keeps: a channel that posts to the account is one it follows */
  channels?: Pick<FollowedChannelBook, 'remember'>;
  logger: Logger;
}

/**
 * Labels, statuses and channel posts the network reports (CONTRACT 13) → `label.update`, `status.received`,
 * `channel.message`. A contact's status is announced only when the session's `receiveStatus` is on (read at each
 * status, so a PATCH applies to the next one); otherwise it is dropped, as status broadcasts always were. A label
 * added to or taken off a chat, or deleted, also changes the labels the chats carry (`GET …/chats`).
 */
export async function takeAccountExtrasEvent(event: AccountExtrasEngineEvent, deps: AccountExtrasEventsDeps): Promise<void> {
  switch (event.type) {
    case 'label': {
      const { change } = event;
      const labels = deps.chatLabels;
      if (!labels || (change.action !== 'deleted' && !change.chatJid)) return deps.publish({ event: 'label.update', payload: change });
      return labels.transact(async (tx, publish) => {
        if (change.action === 'deleted') await labels.store.dropLabel(deps.sessionId, change.labelId, tx);
        else await labels.store.setLabel(labels.organizationId, deps.sessionId, change.chatJid!, change.labelId, change.action === 'assigned', tx);
        publish({ event: 'label.update', payload: change });
      });
    }
    case 'status': {
      const session = await deps.records.find(deps.sessionId);
      if (!session?.receiveStatus) {
        deps.logger.debug({ waMessageId: event.status.waMessageId, from: event.status.from }, 'status not announced: receiveStatus is off');
        return;
      }
      return deps.publish({ event: 'status.received', payload: event.status });
    }
    case 'channel-message':
      await deps.channels?.remember({ jid: event.post.channelJid });
      return deps.publish({ event: 'channel.message', payload: event.post });
  }
}
