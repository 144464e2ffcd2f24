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

export function loggerOptions(app: string, level: string): LoggerOptions {
  return {
    level,
    base: { app },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
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

/** Where a process's logs go: `fd` as JSON, or as one short human line per entry (pino-pretty, in-process). */
export function logDestination(format: LogFormat, fd: number): DestinationStream {
  if (!wantsPretty(format, fd)) return pino.destination({ fd, sync: false });
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
