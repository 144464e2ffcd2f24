import { DomainError } from '@app/contracts';
import type { RateLimitName } from './limit-metrics';

/** 429 in the envelope; the error filter turns `retryAfterSeconds` into the Retry-After header. */
export function rateLimited(limit: RateLimitName, retryAfterMs: number): DomainError {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new DomainError('rate_limited', `too many requests (${limit}); retry in ${retryAfterSeconds} s`, { limit, retryAfterSeconds });
}
