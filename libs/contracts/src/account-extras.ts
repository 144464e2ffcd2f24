import type { MediaView } from './messages';

/**
 * Labels (WhatsApp Business), statuses (stories) and channels (newsletters): CONTRACT 13. The session actions below
 * are asked by the API through the `session.action` command (commands.ts) and performed by each engine
 * (EngineConnection.perform): see session-actions.ts. A status post is not an action: it is a send (CONTRACT 10).
 */

/** A WhatsApp Business label: `color` is WhatsApp's palette index (0..19). */
export interface LabelView {
  id: string;
  name: string;
  color: number;
}

/** The labels a chat carries after a label was added to it or removed from it. */
export interface ChatLabelsView {
  chatJid: string;
  labels: LabelView[];
}

/** A channel (newsletter) the account follows. */
export interface ChannelView {
  /** `<digits>@newsletter` */
  jid: string;
  name: string;
  description: string | null;
  /** the invite code (`https://whatsapp.com/channel/<invite>`), when the network told it */
  invite: string | null;
  /** follower count, when the network told it */
  subscribers: number | null;
}

/** A post of a channel. `serverId` is the channel's own message number. */
export interface ChannelMessageView {
  channelJid: string;
  serverId: string;
  /** the text, or a media caption */
  text: string | null;
  /** `text`, `image`, `video`, … (MessageType), `unknown` for what we do not read */
  type: string;
  /** epoch ms */
  timestamp: number;
}

export const CHANNEL_MESSAGES_MAX = 100;

/** `<digits>@newsletter` */
export const CHANNEL_JID_PATTERN = /^\d{5,30}@newsletter$/;
/** A channel invite code, as in `https://whatsapp.com/channel/<code>`. */
export const CHANNEL_INVITE_PATTERN = /^[A-Za-z0-9_-]{10,64}$/;

/** The code of a channel invite given as the code itself or its link; null when it is neither. */
export function channelInviteCode(invite: string): string | null {
  const trimmed = invite.trim();
  const link = /^(?:https?:\/\/)?(?:www\.)?whatsapp\.com\/channel\/([A-Za-z0-9_-]+)\/?$/.exec(trimmed);
  const code = link ? link[1] : trimmed;
  return CHANNEL_INVITE_PATTERN.test(code) ? code : null;
}

/** The chat a status (story) is posted to and arrives from. */
export const STATUS_BROADCAST_JID = 'status@broadcast';

/** Message types a status can be. */
export const STATUS_TYPES = ['text', 'image', 'video'] as const;
export type StatusType = (typeof STATUS_TYPES)[number];

/** Session actions of CONTRACT 13 (labels, channels). */
export interface AccountExtrasActionMap {
  /** the account's WhatsApp Business labels (`conflict` for a non-business account) */
  'labels.list': { args: Record<string, never>; result: { data: LabelView[] } };
  /** adds a label to a chat (`not_found` for an unknown label, `conflict` for a non-business account) */
  'labels.addToChat': { args: { chatJid: string; labelId: string }; result: ChatLabelsView };
  /** removes a label from a chat */
  'labels.removeFromChat': { args: { chatJid: string; labelId: string }; result: ChatLabelsView };
  /** the channels the account follows */
  'channels.list': { args: Record<string, never>; result: { data: ChannelView[] } };
  /** follows the channel of an invite code (`not_found` for an unknown invite) */
  'channels.follow': { args: { invite: string }; result: ChannelView };
  /** unfollows a channel (`not_found` when not followed) */
  'channels.unfollow': { args: { jid: string }; result: Record<string, never> };
  /** the newest `count` posts of a channel, newest first */
  'channels.messages': { args: { jid: string; count: number }; result: { data: ChannelMessageView[] } };
}

// ------------------------------------------------------------------------------------------------
// Event payloads (envelope of CONTRACT 6)

export const LABEL_UPDATE_ACTIONS = ['edited', 'deleted', 'assigned', 'unassigned'] as const;
export type LabelUpdateAction = (typeof LABEL_UPDATE_ACTIONS)[number];

/**
 * `label.update`: a label was created or changed (`edited`, with `label`), deleted (`deleted`), or added to a chat
 * (`assigned`) or removed from one (`unassigned`), with `chatJid`. From the network: the phone, or this API.
 */
export interface LabelUpdatePayload {
  action: LabelUpdateAction;
  labelId: string;
  /** the label as it is now; null when deleted, or when the network named only its id */
  label: LabelView | null;
  /** the chat, for `assigned` / `unassigned` */
  chatJid: string | null;
}

/** `status.received`: a contact's status (story) reached the session (only with the session setting `receiveStatus`). */
export interface StatusReceivedPayload {
  waMessageId: string;
  /** the contact who posted it */
  from: string;
  type: string;
  /** the text, or a media caption */
  text: string | null;
  media: MediaView | null;
  /** epoch ms */
  timestamp: number;
}

/** `channel.message`: a post in a channel the account follows. */
export type ChannelMessagePayload = ChannelMessageView;
