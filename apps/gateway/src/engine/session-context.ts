import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which session the code running now works for, carried through every callback, timer and promise that starts from
 * it (AsyncLocalStorage). The engine opens each socket inside its session's context, so everything the socket's
 * library does later (WebSocket frames, keep-alive timers, its promises) runs in it too, and a stray rejection or
 * exception from inside it can be traced to its session by the process-level handlers in main.ts.
 */
const context = new AsyncLocalStorage<{ sessionId: string }>();

export function runInSessionContext<T>(sessionId: string, run: () => T): T {
  return context.run({ sessionId }, run);
}

/** The session of the current async context, null outside any. */
export function currentSessionId(): string | null {
  return context.getStore()?.sessionId ?? null;
}
