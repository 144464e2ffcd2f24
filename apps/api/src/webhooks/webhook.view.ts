import type { WebhookView } from '@app/contracts';
import type { Webhook } from '@app/database';

/** The seed's 2.3 fields plus the delivery controls (rate limit, disabled state); the secret never leaves the service. */
export function toWebhookView(w: Webhook): WebhookView {
  return {
    id: w.id,
    organizationId: w.organizationId,
    url: w.url,
    events: w.events,
    sessionId: w.sessionId,
    active: w.active,
    customHeaders: w.customHeaders,
    retryPolicy: { policy: w.retryPolicy.policy, delaySeconds: w.retryPolicy.delaySeconds, attempts: w.retryPolicy.attempts },
    rateLimitPerSecond: w.rateLimitPerSecond ?? null,
    disabledAt: w.disabledAt ? w.disabledAt.getTime() : null,
    disabledReason: w.disabledReason ?? null,
    createdAt: w.createdAt.getTime(),
    updatedAt: w.updatedAt.getTime(),
  };
}
