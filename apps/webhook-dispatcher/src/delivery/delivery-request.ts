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

const PROTOCOL_HEADERS = new Set(['content-type', ...Object.values(WEBHOOK_HEADERS).map((h) => h.toLowerCase())]);

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
 * Seed 4.7 headers. customHeaders go on first and the protocol headers win, case-insensitively:
 * a receiver can trust X-Webhook-* and Content-Type whatever the webhook's owner configured.
 */
export function deliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.customHeaders ?? {})) {
    if (typeof value === 'string' && !isReservedHeader(name) && !/[\r\n]/.test(value)) headers[name] = value;
  }
  headers['content-type'] = 'application/json';
  headers[WEBHOOK_HEADERS.requestId] = input.eventId;
  headers[WEBHOOK_HEADERS.timestamp] = String(input.now);
  if (input.secret) {
    headers[WEBHOOK_HEADERS.hmac] = webhookSignature(input.secret, input.body);
    headers[WEBHOOK_HEADERS.hmacAlgorithm] = 'sha512';
  }
  return headers;
}
