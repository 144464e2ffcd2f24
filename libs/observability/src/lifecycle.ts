import type { Logger } from 'pino';

/**
 * Graceful stop on SIGTERM/SIGINT, the same for every process: log, run `stop` once, exit 0 when it is done
 * (1 when it fails or takes longer than `graceMs`), flushing the logger first so the last lines are not lost. `stop`
 * is told which signal came (the gateway drains on SIGTERM, stops at once on SIGINT).
 */
export function stopOnSignals(logger: Logger, graceMs: number, stop: (signal: 'SIGTERM' | 'SIGINT') => Promise<void>): void {
  let stopping = false;
  const exit = (code: number) => logger.flush(() => process.exit(code));
  const onSignal = (signal: 'SIGTERM' | 'SIGINT') => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), graceMs).unref();
    stop(signal).then(
      () => exit(0),
      (err) => {
        logger.error({ err: String(err) }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}

export interface DependencyChecks {
  postgres: boolean;
  redis: boolean;
}

/** Readiness of the two stores every process needs, each check bounded so a hung store reads as not ready. */
export async function checkDependencies(
  db: { query(sql: string): Promise<unknown> },
  redis: { ping(): Promise<string> },
  timeoutMs = 2000,
): Promise<DependencyChecks> {
  const bounded = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs).unref())]);
  const [postgres, ping] = await Promise.all([
    bounded(db.query('SELECT 1')).then(() => true, () => false),
    bounded(redis.ping()).then((r) => r === 'PONG', () => false),
  ]);
  return { postgres, redis: ping };
}

/**
 * The one line a process prints when it cannot start. A port in use names the variable that moves it (the usual
 * first-hour problem: another app, or a second checkout's demo, already on 3000); anything else is its message.
 * Never a stack: the line is for the operator, not for us.
 */
export function startupFailureLine(app: string, err: unknown, portVariable: string): string {
  const e = err as { code?: unknown; port?: unknown; message?: unknown } | null;
  if (e?.code === 'EADDRINUSE') {
    const port = typeof e.port === 'number' ? ` ${e.port}` : '';
    return `${app}: port${port} is already in use; set ${portVariable} to a free port (or stop what listens there)`;
  }
  return `${app} failed to start: ${err instanceof Error ? err.message : String(err)}`;
}
