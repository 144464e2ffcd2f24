import type { DestinationKind } from '@app/contracts';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import { deliveryHeaders } from './delivery-request';
import type { PostResult } from './webhook-client';

/** One attempt's message as every kind of destination needs it; the body is the envelope's shared bytes. */
export interface DeliveryMessage {
  eventId: string;
  eventType: string;
  organizationId: string;
  sessionId: string | null;
  body: Buffer;
  /** epoch ms of this attempt */
  now: number;
}

/**
 * The one step of a delivery that differs per kind (CONTRACT 15): everything before it (fan-out, the fair scheduler,
 * the breaker) and after it (the delivery log, the retry schedule) is the same pipeline for every destination.
 * A destination never throws: a failure is a result with `error` set, and `confirmed` only once the receiver took it
 * (a 2xx answer, a publisher confirm, a JetStream ack).
 */
export interface Destination {
  deliver(target: WebhookTarget, message: DeliveryMessage): Promise<PostResult>;
  close(): Promise<void>;
}

/** Each kind's delivery; the compiler makes a new kind add its entry here. */
export type Destinations = Record<DestinationKind, Destination>;

/** What the HTTP destination needs of the client: one POST. */
export interface Poster {
  post(url: string, headers: Record<string, string>, body: Buffer): Promise<PostResult>;
  close?(): Promise<void>;
}

/** Webhooks: the signed POST (seed 4.7 and Standard Webhooks headers) through the guarded undici client. */
export class HttpDestination implements Destination {
  constructor(private readonly client: Poster) {}

  deliver(target: WebhookTarget, message: DeliveryMessage): Promise<PostResult> {
    const headers = deliveryHeaders({
      eventId: message.eventId,
      body: message.body,
      secret: target.secret,
      customHeaders: target.customHeaders,
      now: message.now,
    });
    return this.client.post(target.url, headers, message.body);
  }

  async close(): Promise<void> {
    await this.client.close?.();
  }
}

/** Closes every destination, whatever one of them throws. */
export async function closeDestinations(destinations: Destinations): Promise<void> {
  await Promise.allSettled(Object.values(destinations).map((d) => d.close()));
}
