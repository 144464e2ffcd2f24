import { DomainError } from '@app/contracts';

/** Names of the API's rate limits, as they appear in `details.limit` and the metric's `limit` label. */
export type RateLimitName = 'ip' | 'credential' | 'login_ip' | 'login_account' | 'login_account_ceiling';

/** 429 in the envelope; the error filter turns `retryAfterSeconds` into the Retry-After header. */
export function rateLimited(limit: RateLimitName, retryAfterMs: number): DomainError {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new DomainError('rate_limited', `too many requests (${limit}); retry in ${retryAfterSeconds} s`, { limit, retryAfterSeconds });
}
