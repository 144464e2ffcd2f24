import type { WebhookView } from '@app/contracts';
import type { Webhook } from '@app/database';
import { destinationViewFields } from '../destinations/destination.view';

/** The seed's 2.3 fields plus the delivery controls (rate limit, disabled state); the secret never leaves the service. */
export function toWebhookView(w: Webhook): WebhookView {
  return { ...destinationViewFields(w), url: w.url, customHeaders: w.customHeaders };
}
