import type { Logger } from 'pino';

export interface StrayFaultDeps {
  logger: Pick<Logger, 'error'>;
  /** the session the failing code ran for (engine/session-context.ts), null when it cannot be told */
  sessionOf: () => string | null;
  /** closes the session's socket and opens it again; resolves false when the session is not held here */
  restartSession: (sessionId: string) => Promise<boolean>;
  clock?: () => number;
  /** a session restarts at most once per this interval, so a fault on every connect cannot loop fast (default 30 s) */
  minRestartIntervalMs?: number;
  /** counted by kind and whether it was traced to a session */
  count?: (kind: StrayFaultKind, attributed: boolean) => void;
}

export type StrayFaultKind = 'unhandled_rejection' | 'uncaught_exception';

/**
 * A rejection nobody handled or an exception nobody caught, from a library's callback (Baileys' socket, its timers):
 * by default Node ends the process, and every session on the node with it. This handler keeps the process: it logs
 * the fault with the session it was traced to and restarts that session's socket (its state may be broken); a fault
 * it cannot trace is logged and every session is kept as it is.
 */
export class StrayFaults {
  private readonly lastRestart = new Map<string, number>();
  private readonly clock: () => number;
  private readonly minIntervalMs: number;

  constructor(private readonly deps: StrayFaultDeps) {
    this.clock = deps.clock ?? Date.now;
    this.minIntervalMs = deps.minRestartIntervalMs ?? 30_000;
  }

  /** Installs both process-level handlers; returns their removal. */
  install(target: NodeJS.Process = process): () => void {
    const onRejection = (reason: unknown) => this.onFault('unhandled_rejection', reason);
    const onException = (err: Error) => this.onFault('uncaught_exception', err);
    target.on('unhandledRejection', onRejection);
    target.on('uncaughtException', onException);
    return () => {
      target.off('unhandledRejection', onRejection);
      target.off('uncaughtException', onException);
    };
  }

  /** Runs in the async context of the failing code: that is where its session is read. */
  onFault(kind: StrayFaultKind, reason: unknown): void {
    const sessionId = this.deps.sessionOf();
    this.deps.count?.(kind, sessionId !== null);
    const err = reason instanceof Error ? { message: reason.message, stack: reason.stack } : String(reason);
    if (!sessionId) {
      this.deps.logger.error({ kind, err }, 'stray fault outside any session; the process and every session are kept');
      return;
    }
    const now = this.clock();
    const last = this.lastRestart.get(sessionId);
    const restart = last === undefined || now - last >= this.minIntervalMs;
    this.deps.logger.error({ kind, sessionId, err, restart }, restart ? 'stray fault in a session; restarting its connection' : 'stray fault in a session restarted moments ago; kept as it is');
    if (!restart) return;
    this.lastRestart.set(sessionId, now);
    this.deps.restartSession(sessionId).catch((restartErr) => this.deps.logger.error({ sessionId, err: String(restartErr) }, 'restarting a session after a stray fault failed'));
  }
}
