import { RetryPolicy, retryDelayMs } from '@app/contracts';

export type AttemptOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; delayMs: number }
  | { kind: 'dead' };

export interface AttemptResult {
  /** HTTP status, or null when no answer came (connection failure, timeout, refused target). */
  statusCode: number | null;
  /** Retry-After header of the answer, verbatim. */
  retryAfter?: string | null;
  /** a broker confirmed the message (event sinks have no status code) */
  confirmed?: boolean;
}

/** Retry-After as milliseconds from `now`: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/** 2xx only is success (CONTRACT 7); redirects are not followed. A sink's success is the broker's confirm (CONTRACT 15). */
export function isDelivered(result: AttemptResult): boolean {
  if (result.confirmed) return true;
  return result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
}

/**
 * What follows attempt `attemptInBudget` (1-based within the current retry budget): 2xx is delivered;
 * anything else is retried after the policy's delay until `attempts` tries were made, then dead.
 * A Retry-After on 429/503 is honoured, capped at the policy's delay for that step.
 */
export function nextStep(policy: RetryPolicy, attemptInBudget: number, result: AttemptResult, now: number): AttemptOutcome {
  if (isDelivered(result)) return { kind: 'delivered' };
  if (attemptInBudget >= policy.attempts) return { kind: 'dead' };
  const policyDelay = retryDelayMs(policy, attemptInBudget);
  if (result.statusCode === 429 || result.statusCode === 503) {
    const asked = parseRetryAfter(result.retryAfter, now);
    if (asked !== null) return { kind: 'retry', delayMs: Math.min(asked, policyDelay) };
  }
  return { kind: 'retry', delayMs: policyDelay };
}
