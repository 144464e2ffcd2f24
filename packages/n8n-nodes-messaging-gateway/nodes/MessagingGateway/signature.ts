import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com/), which the gateway's dispatcher sends beside its
 * own X-Webhook-Hmac (docs/webhook-delivery.md): `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<raw body>">`, keyed with the bytes of a `whsec_<base64>` secret.
 */
export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;

/** A fresh secret in the spec's serialization: 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

export function sign(secret: string, id: string, timestamp: string, body: Buffer): string {
  const mac = createHmac('sha256', keyOf(secret));
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

/** Why a delivery is refused, or null when its signature is valid and fresh. */
export function signatureProblem(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer | undefined,
  nowSeconds = Math.floor(Date.now() / 1000),
): string | null {
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestamp || !signatures) return 'missing webhook-id, webhook-timestamp or webhook-signature';
  if (!body) return 'the request body is not available to verify';
  if (!/^\d{1,15}$/.test(timestamp)) return 'webhook-timestamp is not a Unix time in seconds';
  if (Math.abs(nowSeconds - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) return 'webhook-timestamp is outside the tolerance (a replay?)';
  const expected = Buffer.from(sign(secret, id, timestamp, body));
  // the header may carry several space-separated signatures (a secret being rotated); one valid v1 is enough
  const match = signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return match ? null : 'the signature does not match';
}
