import type { MessageView } from './messages';
import type { SessionStatus } from './sessions';

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
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface SessionStatusPayload {
  status: SessionStatus;
  previousStatus: SessionStatus | null;
  reason: string | null;
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
