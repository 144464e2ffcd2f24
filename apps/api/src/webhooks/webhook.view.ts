import type { WebhookView } from '@app/contracts';
import type { Webhook } from '@app/database';

/** Exactly the seed's 2.3 fields; the secret never leaves the service. */
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
    createdAt: w.createdAt.getTime(),
    updatedAt: w.updatedAt.getTime(),
  };
}
