import { DomainError } from '@app/contracts';

/** The errors a SessionRunner (and its parts) answers an engine or a row write with. */

/** An engine event the runner did not take: the engine must leave it un-acknowledged. */
export class EventNotTakenError extends Error {
  constructor(eventType: string, why: string) {
    super(`${eventType} not taken: ${why}`);
    this.name = 'EventNotTakenError';
  }
}

/** A session-row write was refused: another holder took the lease (a newer fencing token), or the row moved away. */
export class SessionFencedError extends DomainError {
  constructor(sessionId: string) {
    super('conflict', 'the session is held by another gateway', { sessionId });
  }
}
