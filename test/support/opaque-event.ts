import type { EventEnvelope, EventType } from '@app/contracts';
import type { EventPublisher, PublishInput } from '@app/events';

interface OpaqueInput {
  event: EventType;
  organizationId: string;
  sessionId: string | null;
  payload: object;
}

/**
 * An event whose payload the catalog (`EventPayloads`, libs/contracts) does not describe, for the tests of the pipeline
 * itself (outbox, stream, fan-out, realtime), to which a payload is opaque. Only tests step around the catalog.
 */
export function opaqueEvent(input: OpaqueInput): PublishInput {
  return input as PublishInput;
}

/** `EventPublisher.build` of an opaque event, typed as a receiver reads an envelope (the payload a plain record). */
export function buildOpaque(publisher: Pick<EventPublisher, 'build'>, input: OpaqueInput): EventEnvelope {
  return publisher.build(opaqueEvent(input)) as EventEnvelope<object> as EventEnvelope;
}
