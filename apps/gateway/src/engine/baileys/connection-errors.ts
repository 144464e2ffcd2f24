/** How a Baileys connection and its parts say what went wrong. */

/** Thrown by every call on a connection that has closed (or is closing): the runner must connect again. */
export class EngineConnectionClosedError extends Error {
  constructor(sessionId: string, action: string) {
    super(`cannot ${action}: the WhatsApp connection of session ${sessionId} is closed`);
    this.name = 'EngineConnectionClosedError';
  }
}

/** Baileys rejects with Boom errors and plain values alike: their message, for a log line or a readable Error. */
export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
