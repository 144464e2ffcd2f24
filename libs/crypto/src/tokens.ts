import { createHash, createHmac, randomBytes } from 'node:crypto';
import { API_KEY_PREFIX } from '@app/contracts';

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A new API key token: prefix + 32 random bytes, base64url. */
export function newApiKeyToken(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Seed 4.7: lowercase hex HMAC-SHA512 of the exact raw body, keyed with the secret. */
export function webhookSignature(secret: string, rawBody: Buffer | string): string {
  return createHmac('sha512', secret).update(rawBody).digest('hex');
}
