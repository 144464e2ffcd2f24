/**
 * The Chatwoot integration (CONTRACT 16): a session's inbox in a Chatwoot account. Inbound WhatsApp messages reach it
 * as a destination kind of the webhook dispatcher (`chatwoot`); agents' replies come back through Chatwoot's webhook.
 */

/** The events a Chatwoot integration's destination receives; nothing else is fanned out to it. */
export const CHATWOOT_EVENTS = ['message.received', 'message.edited', 'message.revoked', 'message.reaction', 'message.failed', 'message.ack'] as const;
export type ChatwootEvent = (typeof CHATWOOT_EVENTS)[number];

/** Chatwoot messages we create carry this source id prefix, so their webhooks are told from an agent's (no echo). */
export const CHATWOOT_SOURCE_PREFIX = 'WAID:';

/** The idempotency key of the send an agent's Chatwoot message makes (one per attachment, `:0`, `:1`, …). */
export const chatwootSendKey = (integrationId: string, chatwootMessageId: number, part: number): string => `chatwoot:${integrationId}:${chatwootMessageId}:${part}`;

/** The URL Chatwoot's inbox webhook calls (the integration's secret in it): the API answers it, the dispatcher creates an inbox with it. */
export const chatwootWebhookUrl = (publicUrl: string, integrationId: string, secret: string): string =>
  `${publicUrl.replace(/\/+$/, '')}/api/v1/integrations/chatwoot/${integrationId}/webhook?secret=${secret}`;

export interface ChatwootIntegrationView {
  id: string;
  organizationId: string;
  sessionId: string;
  baseUrl: string;
  accountId: number;
  /** the inbox given at connect, else the one created for the integration; null until it is created */
  inboxId: number | null;
  /** the token, masked: its last 4 characters only */
  apiAccessToken: string;
  groups: boolean;
  signMessages: boolean;
  importDays: number;
  active: boolean;
  /** the URL to set as the inbox's webhook in Chatwoot; its `secret` authenticates Chatwoot's calls */
  webhookUrl: string;
  /** `importing`, `imported`, `none` (importDays 0) */
  importState: 'none' | 'pending' | 'importing' | 'imported';
  importedMessages: number;
  /** why the last delivery to Chatwoot failed, null while it works */
  lastError: string | null;
  failingSince: number | null;
  disabledAt: number | null;
  createdAt: number;
  updatedAt: number;
}
