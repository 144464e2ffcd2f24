import type { ChannelMessageView, LabelUpdatePayload, StatusReceivedPayload } from '@app/contracts';

/**
 * What an engine reports of CONTRACT 13 (labels, statuses, channels), in the engine seam's words. Both engines
 * produce them (Baileys: baileys/account-extras-watch.ts; sim: the network's `label`, `status` and `channel-message`
 * events); the gateway turns them into events (apps/gateway/src/messages/account-extras-events.ts).
 */
export type AccountExtrasEngineEvent =
  /** a label was created, changed or deleted, or added to / removed from a chat */
  | { type: 'label'; change: LabelUpdatePayload }
  /** a contact's status (story) reached the account; announced only with the session setting `receiveStatus` */
  | { type: 'status'; status: StatusReceivedPayload }
  /** a post in a channel the account follows */
  | { type: 'channel-message'; post: ChannelMessageView };

export const ACCOUNT_EXTRAS_EVENT_TYPES: readonly AccountExtrasEngineEvent['type'][] = ['label', 'status', 'channel-message'];
