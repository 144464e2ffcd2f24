import type {
  CallIncomingPayload,
  GroupParticipantsPayload,
  GroupUpdatePayload,
  MessageAckPayload,
  MessageEventPayload,
  MessageReactionPayload,
  MessageView,
  PollVotePayload,
  PresenceUpdatePayload,
} from './messages';
import type { ContactBlockPayload } from './contacts';
import type { CampaignProgressPayload } from './campaigns';
import type { GroupView, SessionStatus } from './sessions';
import type { ChatUpdatePayload, HistorySyncedPayload } from './chats';
import type { WebhookDisabledPayload } from './webhooks';
import type { ChannelMessagePayload, LabelUpdatePayload, StatusReceivedPayload } from './account-extras';

/** The event envelope: identical on webhooks and on the realtime WebSocket. */
export interface EventEnvelope<P = Record<string, unknown>> {
  id: string; // evt_<ulid>
  event: EventType;
  organizationId: string;
  sessionId: string | null;
  timestamp: number; // epoch ms
  payload: P;
}

export const EVENT_TYPES = [
  'session.status',
  'session.connected',
  'session.disconnected',
  'session.logged_out',
  'auth.qr',
  'message.received',
  'message.sent',
  'message.failed',
  'message.ack',
  'message.reaction',
  'message.edited',
  'message.revoked',
  'poll.vote',
  'group.created',
  'group.update',
  'group.participants',
  'presence.update',
  'call.incoming',
  'webhook.test',
  'webhook.disabled',
  'contact.blocked',
  'contact.unblocked',
  'chat.update',
  'history.synced',
  'label.update',
  'status.received',
  'channel.message',
  'campaign.progress',
  'campaign.completed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface SessionStatusPayload {
  status: SessionStatus;
  previousStatus: SessionStatus | null;
  reason: string | null;
  /** only on the event of a move (the status unchanged): the gateway the session left */
  fromGatewayId?: string;
  /** only on the event of a move: the gateway the session was placed on */
  toGatewayId?: string;
}

/** `message.edited` (CONTRACT 12): a stored message's text (or caption) changed on the network. */
export interface MessageEditedPayload {
  /** the Message resource after the edit */
  message: MessageView;
  /** the text (or caption) before the edit */
  previousText: string | null;
}

/** `message.revoked` (CONTRACT 12): a stored message was deleted for everyone; `by` is who deleted it. */
export interface MessageRevokedPayload {
  messageId: string;
  waMessageId: string;
  chatJid: string;
  by: string;
}

export interface SessionConnectedPayload {
  phoneNumber: string;
  waJid: string;
  waLid: string | null;
}

/** How the gateway read a close of a working connection (docs/baileys-engine.md, "Closes"). */
export type DisconnectReason = 'transient' | 'restart_required' | 'logged_out' | 'replaced' | 'forbidden' | 'client_version_refused' | 'bad_session';

export interface SessionDisconnectedPayload {
  reason: DisconnectReason;
  statusCode: number | null;
  message: string;
}

export interface SessionLoggedOutPayload {
  /** `credentials_unusable`: the stored credential was another engine's or could not be read; a new scan pairs again */
  reason: 'logout_requested' | 'unlinked_on_phone' | 'credentials_unusable';
}

export interface AuthQrPayload {
  qr: string;
  /** epoch ms */
  expiresAt: number;
}

export interface WebhookTestPayload {
  webhookId: string;
  message: string;
}

/**
 * The catalog as types: the payload each event type carries (docs/events.md, "Catalog"). Every publisher is generic
 * over it, so a producer cannot emit a payload the catalog does not describe.
 */
export interface EventPayloads {
  'session.status': SessionStatusPayload;
  'session.connected': SessionConnectedPayload;
  'session.disconnected': SessionDisconnectedPayload;
  'session.logged_out': SessionLoggedOutPayload;
  'auth.qr': AuthQrPayload;
  'message.received': MessageEventPayload;
  'message.sent': MessageEventPayload;
  'message.failed': MessageEventPayload;
  'message.ack': MessageAckPayload;
  'message.reaction': MessageReactionPayload;
  'poll.vote': PollVotePayload;
  'group.created': GroupView;
  'group.update': GroupUpdatePayload;
  'group.participants': GroupParticipantsPayload;
  'presence.update': PresenceUpdatePayload;
  'call.incoming': CallIncomingPayload;
  'webhook.test': WebhookTestPayload;
  'webhook.disabled': WebhookDisabledPayload;
  'message.edited': MessageEditedPayload;
  'message.revoked': MessageRevokedPayload;
  'contact.blocked': ContactBlockPayload;
  'contact.unblocked': ContactBlockPayload;
  'chat.update': ChatUpdatePayload;
  'history.synced': HistorySyncedPayload;
  'label.update': LabelUpdatePayload;
  'status.received': StatusReceivedPayload;
  'channel.message': ChannelMessagePayload;
  'campaign.progress': CampaignProgressPayload;
  'campaign.completed': CampaignProgressPayload;
}

/** The map's keys are exactly EVENT_TYPES, both ways: a type added to one and not the other fails to compile here. */
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type EventPayloadsCoverEventTypes = Holds<SameKeys<keyof EventPayloads, EventType>>;

/**
 * An event of the catalog with the payload the catalog gives its type. Left open (`CatalogEvent`), it is the union
 * over every type, so a pair whose payload does not match its type is rejected even when the type is not a literal.
 */
export type CatalogEvent<T extends EventType = EventType> = { [K in T]: { event: K; payload: EventPayloads[K] } }[T];

/**
 * Redis stream the producers append envelopes to (after the outbox row is written).
 * Full key is `${REDIS_KEY_PREFIX}:${EVENT_STREAM}`.
 */
export const EVENT_STREAM = 'events';
/** Consumer group of the webhook dispatcher on EVENT_STREAM. */
export const DISPATCHER_CONSUMER_GROUP = 'webhook-dispatcher';
/** Pub/sub channel telling dispatchers a webhook changed (payload: webhook id). */
export const WEBHOOK_CHANGED_CHANNEL = 'webhooks:changed';

/** Does a webhook's `events` list select this type? `["*"]` all, `[]` none, otherwise exact. */
export function eventSelected(events: readonly string[], type: string): boolean {
  return events.includes('*') || events.includes(type);
}
