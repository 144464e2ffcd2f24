import type { DestinationViewFields } from '@app/contracts';
import type { Webhook } from '@app/database';

/** What every destination's view shows of its row, beside its kind's own fields (a webhook's headers, a sink's target). */
export function destinationViewFields(w: Webhook): DestinationViewFields {
  return {
    id: w.id,
    organizationId: w.organizationId,
    events: w.events,
    sessionId: w.sessionId,
    active: w.active,
    retryPolicy: { policy: w.retryPolicy.policy, delaySeconds: w.retryPolicy.delaySeconds, attempts: w.retryPolicy.attempts },
    rateLimitPerSecond: w.rateLimitPerSecond ?? null,
    disabledAt: w.disabledAt ? w.disabledAt.getTime() : null,
    disabledReason: w.disabledReason ?? null,
    createdAt: w.createdAt.getTime(),
    updatedAt: w.updatedAt.getTime(),
  };
}
