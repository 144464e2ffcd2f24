import { EventSinkKind, EventSinkView, maskedSinkUrl } from '@app/contracts';
import type { Webhook } from '@app/database';

/** A sink as the API shows it: its URL's password masked (it is stored encrypted, apart from the URL). */
export function toEventSinkView(w: Webhook): EventSinkView {
  return {
    id: w.id,
    organizationId: w.organizationId,
    kind: w.kind as EventSinkKind,
    url: maskedSinkUrl(w.url, w.secretEncrypted !== null),
    exchange: w.target.exchange ?? null,
    routingKey: w.target.routingKey ?? null,
    subject: w.target.subject ?? null,
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
