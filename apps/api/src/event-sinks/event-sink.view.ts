import { EventSinkKind, EventSinkView, maskedSinkUrl } from '@app/contracts';
import type { Webhook } from '@app/database';
import { destinationViewFields } from '../destinations/destination.view';

/** A sink as the API shows it: its URL's password masked (it is stored encrypted, apart from the URL). */
export function toEventSinkView(w: Webhook): EventSinkView {
  return {
    ...destinationViewFields(w),
    kind: w.kind as EventSinkKind,
    url: maskedSinkUrl(w.url, w.secretEncrypted !== null),
    exchange: w.target.exchange ?? null,
    routingKey: w.target.routingKey ?? null,
    subject: w.target.subject ?? null,
  };
}
