import type { DestinationViewFields } from './webhooks';

/**
 * Where a destination's deliveries go (CONTRACT 15): an HTTPS webhook, a RabbitMQ exchange (AMQP 0-9-1 with
 * publisher confirms) or a NATS JetStream subject (publish acks). Every seam that differs per kind holds a
 * `Record<DestinationKind, …>`, so a new kind fails to compile until each of them handles it.
 */
export const DESTINATION_KINDS = ['http', 'amqp', 'nats', 'chatwoot'] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** The kinds `/event-sinks` manages (webhooks are `/webhooks`). */
export const EVENT_SINK_KINDS = ['amqp', 'nats'] as const;
export type EventSinkKind = (typeof EVENT_SINK_KINDS)[number];

/** A sink's broker-side address, beside its URL; only the fields of its kind are set. */
export interface SinkTarget {
  /** amqp: the exchange published to ('' is the default exchange) */
  exchange?: string;
  /** amqp: routing key template */
  routingKey?: string;
  /** nats: subject template */
  subject?: string;
  /** chatwoot: the account, inbox and behaviour of a session's Chatwoot integration (CONTRACT 16) */
  chatwoot?: ChatwootSettings;
}

/** What a Chatwoot integration is set to (its base URL is the destination's url, its token the stored secret). */
export interface ChatwootSettings {
  accountId: number;
  /** the inbox given at connect; null: the dispatcher creates one (its id is then in chatwoot_integrations) */
  inboxId: number | null;
  groups: boolean;
  signMessages: boolean;
  importDays: number;
}

/** Placeholders of routing keys and subjects. */
export const SINK_PLACEHOLDERS = ['{event}', '{organizationId}', '{sessionId}'] as const;
export const SINK_DEFAULTS = { routingKey: '{event}', subject: 'wa.{organizationId}.{sessionId}.{event}' } as const;
/** What `{sessionId}` becomes for an event of no session (organization-wide events). */
export const SINK_NO_SESSION = '_';

/** The URL schemes each sink kind takes. */
export const SINK_URL_SCHEMES: Record<EventSinkKind, readonly string[]> = {
  amqp: ['amqp:', 'amqps:'],
  nats: ['nats:', 'tls:'],
};

/** A routing key or subject for one event: the template with its placeholders filled in. */
export function renderSinkTemplate(template: string, event: { event: string; organizationId: string; sessionId: string | null }): string {
  return template
    .replaceAll('{event}', event.event)
    .replaceAll('{organizationId}', event.organizationId)
    .replaceAll('{sessionId}', event.sessionId ?? SINK_NO_SESSION);
}

/**
 * A URL as shown anywhere outside the dispatcher's memory: the password is `***` (never returned, logged or put
 * in an event); the user name stays, so an operator sees which account is used.
 */
export function maskedSinkUrl(url: string, hasPassword: boolean): string {
  if (!hasPassword) return url;
  const u = new URL(url);
  u.password = '***';
  return u.toString();
}

export interface EventSinkView extends DestinationViewFields {
  kind: EventSinkKind;
  /** the broker URL with its password masked (`amqp://user:***@host/vhost`) */
  url: string;
  /** amqp */
  exchange: string | null;
  /** amqp: routing key template */
  routingKey: string | null;
  /** nats: subject template */
  subject: string | null;
}
