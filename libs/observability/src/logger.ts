import { isatty } from 'node:tty';
import pino, { DestinationStream, Logger, LoggerOptions } from 'pino';
import pretty from 'pino-pretty';

/** Paths never written to logs: credentials, tokens, secrets, HMAC keys. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.query.token',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.token',
  '*.accessToken',
  '*.secretEncrypted',
  'password',
  'secret',
  'token',
  'accessToken',
];

/** `auto`: short coloured lines when the output is a terminal, JSON otherwise (files, pipes, log collectors). */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * Nest's boot chatter (one line per module and per route, ~45 of them) is for debugging the framework, not for
 * running the product: it is logged at debug.
 */
const NEST_BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'WebSocketsController']);

let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * pino's `isoTime` (`,"time":"2026-01-02T03:04:05.678Z"`), the same text without a Date and its formatting per line:
 * the part up to the second is formatted once a second. It was most of the time a request line took to build.
 */
export function isoTime(): string {
  const now = Date.now();
  const ms = now % 1000;
  const second = now - ms;
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = `,"time":"${new Date(second).toISOString().slice(0, 20)}`;
  }
  return `${isoPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

export function loggerOptions(app: string, level: string): LoggerOptions {
  return {
    level,
    base: { app },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: isoTime,
    hooks: {
      logMethod(args, method, callLevel) {
        const first = args[0] as unknown;
        const context = first && typeof first === 'object' ? (first as { context?: unknown }).context : undefined;
        if (callLevel === 30 && typeof context === 'string' && NEST_BOOT_CONTEXTS.has(context) && !this.isLevelEnabled('debug')) return;
        method.apply(this, args);
      },
    },
  };
}

export function wantsPretty(format: LogFormat, fd: number): boolean {
  return format === 'pretty' || (format === 'auto' && isatty(fd));
}

type SonicBoom = ReturnType<typeof pino.destination>;

/** Batched destinations whose current turn the process's exit must still write (one 'exit' listener for all). */
const batched = new Set<WeakRef<TurnBatchedDestination>>();
const forgotten = new FinalizationRegistry<WeakRef<TurnBatchedDestination>>((ref) => batched.delete(ref));
let exitHooked = false;

/**
 * The lines logged in one event-loop turn, handed to `out` (asynchronous) as one write when the turn ends. A busy API
 * ends several requests per turn; each asynchronous write is a hop to libuv's thread pool (a futex wake, the write,
 * an eventfd back), which cost more than building the line. A line waits for nothing but the end of its own turn.
 * On the process's exit (a crash, `process.exit`) the current turn and whatever `out` still holds are written
 * synchronously; a SIGKILL loses the current turn's lines and a write still in flight, as it lost the latter before.
 */
export class TurnBatchedDestination implements DestinationStream {
  private pending = '';
  private scheduled = false;

  constructor(private readonly out: SonicBoom) {
    const ref = new WeakRef(this);
    batched.add(ref);
    forgotten.register(this, ref);
    if (!exitHooked) {
      exitHooked = true;
      process.once('exit', () => {
        for (const r of batched) r.deref()?.flushSync();
      });
    }
  }

  write(line: string): void {
    this.pending += line;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.endTurn);
  }

  /** pino's `logger.flush(cb)`: the current turn now, then `out`'s own flush. */
  flush(cb?: (err?: Error) => void): void {
    this.endTurn();
    this.out.flush(cb);
  }

  flushSync(): void {
    this.endTurn();
    // not open yet (a crash at boot): its own exit hook opens nothing either; the turn then stays in its buffer
    const state = this.out as unknown as { fd: number; destroyed: boolean };
    if (state.fd >= 0 && !state.destroyed) this.out.flushSync();
  }

  private readonly endTurn = (): void => {
    this.scheduled = false;
    if (this.pending === '') return;
    const lines = this.pending;
    this.pending = '';
    this.out.write(lines);
  };
}

/** Where a process's logs go: `fd` as JSON, or as one short human line per entry (pino-pretty, in-process). */
export function logDestination(format: LogFormat, fd: number): DestinationStream {
  if (!wantsPretty(format, fd)) return new TurnBatchedDestination(pino.destination({ fd, sync: false }));
  return pretty({
    destination: fd,
    sync: true,
    colorize: format === 'pretty' || isatty(fd),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,app,context,req,res,responseTime',
    singleLine: true,
  });
}

/** A process's logger; on stderr by default, so a CLI's stdout stays clean for its own output. */
export function createLogger(app: string, level: string, format: LogFormat = 'auto', fd = 2): Logger {
  return pino(loggerOptions(app, level), logDestination(format, fd));
}

export type { Logger };
