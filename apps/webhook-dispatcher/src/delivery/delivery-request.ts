import { createHmac } from 'node:crypto';
import { EventEnvelope, WEBHOOK_HEADERS } from '@app/contracts';
import { webhookSignature } from '@app/crypto';

/**
 * The envelope's bytes as they go on the wire. Serialized once, in the envelope's documented field
 * order (the outbox stores jsonb, which does not keep key order), so the bytes signed are the bytes sent.
 */
export function envelopeBody(envelope: EventEnvelope): Buffer {
  const { id, event, organizationId, sessionId, timestamp, payload } = envelope;
  return Buffer.from(JSON.stringify({ id, event, organizationId, sessionId, timestamp, payload }));
}

/** Standard Webhooks (standardwebhooks.com) headers, sent beside the seed's so receivers can use its libraries. */
export const STANDARD_WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

const PROTOCOL_HEADERS = new Set([
  'content-type',
  ...Object.values(WEBHOOK_HEADERS).map((h) => h.toLowerCase()),
  ...Object.values(STANDARD_WEBHOOK_HEADERS),
]);

/** customHeaders may not name these: protocol headers (seed 4.7) and framing headers undici sets itself. */
function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return PROTOCOL_HEADERS.has(lower) || lower.startsWith('x-webhook-') || ['host', 'content-length', 'transfer-encoding', 'connection'].includes(lower);
}

export interface DeliveryHeaderInput {
  eventId: string;
  body: Buffer;
  secret: string | null;
  customHeaders: Record<string, string>;
  now: number;
}

/**
 * The Standard Webhooks HMAC key: the secret's bytes, or, for a `whsec_<base64>` secret (the spec's own
 * serialization, what its libraries generate), the decoded bytes after the prefix.
 */
export function standardWebhookKey(secret: string): Buffer {
  if (secret.startsWith('whsec_')) {
    const decoded = Buffer.from(secret.slice('whsec_'.length), 'base64');
    if (decoded.length > 0) return decoded;
  }
  return Buffer.from(secret, 'utf8');
}

/** `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`; timestamp in whole seconds. */
export function standardWebhookSignature(secret: string, id: string, timestampSeconds: number, body: Buffer): string {
  const mac = createHmac('sha256', standardWebhookKey(secret)).update(`${id}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/**
 * Seed 4.7 headers, plus the Standard Webhooks trio (same id, the same instant in seconds, the same secret).
 * customHeaders go on first and the protocol headers win, case-insensitively: a receiver can trust X-Webhook-*,
 * webhook-* and Content-Type whatever the webhook's owner configured.
 */
export function deliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.customHeaders ?? {})) {
    if (typeof value === 'string' && !isReservedHeader(name) && !/[\r\n]/.test(value)) headers[name] = value;
  }
  headers['content-type'] = 'application/json';
  headers[WEBHOOK_HEADERS.requestId] = input.eventId;
  headers[WEBHOOK_HEADERS.timestamp] = String(input.now);
  const seconds = Math.floor(input.now / 1000);
  headers[STANDARD_WEBHOOK_HEADERS.id] = input.eventId;
  headers[STANDARD_WEBHOOK_HEADERS.timestamp] = String(seconds);
  if (input.secret) {
    headers[WEBHOOK_HEADERS.hmac] = webhookSignature(input.secret, input.body);
    headers[WEBHOOK_HEADERS.hmacAlgorithm] = 'sha512';
    headers[STANDARD_WEBHOOK_HEADERS.signature] = standardWebhookSignature(input.secret, input.eventId, seconds, input.body);
  }
  return headers;
}
