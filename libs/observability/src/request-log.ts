import type { LoggerService } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { type Logger } from 'pino';

const { chindingsSym, streamSym, timeSym } = pino.symbols;

const pathOf = (url: string | undefined) => url?.split('?')[0];

/** A request's id: a caller's sane X-Request-Id echoed, otherwise a fresh one; always returned as a header. */
export type RequestIdSource = (req: IncomingMessage, res: ServerResponse) => string;

type LoggedRequest = IncomingMessage & { id?: string; originalUrl?: string };

/** When a request began (`performance.now()`), kept on its response for the one listener all responses share. */
const STARTED = Symbol('started');

type LoggedResponse = ServerResponse & { req: LoggedRequest; [STARTED]?: number };

/** What else wants to know when a request is done (its duration metric), told by the log's one listener. */
export type RequestDone = (req: LoggedRequest, res: ServerResponse, seconds: number) => void;

/**
 * The line `logger[level]({req: {id, method, url}, res: {statusCode}, responseTime}, msg)` writes, built directly:
 * its shape is fixed and none of its paths is redacted, so pino's general path (hooks, redaction, serialising key by
 * key) is skipped; level, time and bindings come from the logger itself, so the line is byte for byte pino's.
 */
function requestLine(logger: Logger, level: 'info' | 'warn' | 'error', id: string, method: string, path: string, status: number, ms: number, msg: string): string {
  const fields = logger as unknown as Record<symbol, unknown>;
  return (
    `{"level":${logger.levels.values[level]}${(fields[timeSym] as () => string)()}${fields[chindingsSym] as string},` +
    `"req":{"id":${JSON.stringify(id)},"method":${JSON.stringify(method)},"url":${JSON.stringify(path)}},` +
    `"res":{"statusCode":${status}},"responseTime":${ms},"msg":${JSON.stringify(msg)}}\n`
  );
}

/**
 * One short line per request (`GET /api/v1/sessions 200 12ms`) with method, path (no query string: it may carry a
 * token), status, duration and request id; never the headers. Written when the response is done, by the process's
 * one logger: no child logger and no async context per request (they were a tenth of the API's CPU per request).
 * 5xx at error; a request whose client went away before the answer was complete at warn. `done` runs in the same
 * listener (one 'close' listener per request instead of one per concern).
 */
export function requestLogger(logger: Logger, requestId: RequestIdSource, done?: RequestDone) {
  // one 'close' listener function for every request, its response as `this`: no closure and no once-wrapper each
  function onClose(this: LoggedResponse): void {
    const { req } = this;
    const elapsed = performance.now() - this[STARTED]!;
    done?.(req, this, elapsed / 1000);
    const ms = Math.round(elapsed);
    const aborted = !this.writableFinished;
    const level = this.statusCode >= 500 ? 'error' : aborted ? 'warn' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    const method = req.method ?? '';
    const path = pathOf(req.originalUrl ?? req.url) ?? '';
    const msg = aborted ? `${method} ${path} aborted after ${ms}ms` : `${method} ${path} ${this.statusCode} ${ms}ms`;
    (logger as unknown as Record<symbol, { write(line: string): void }>)[streamSym].write(
      requestLine(logger, level, req.id!, method, path, this.statusCode, ms, msg),
    );
  }
  return (req: LoggedRequest, res: ServerResponse, next: () => void): void => {
    (res as LoggedResponse)[STARTED] = performance.now();
    req.id = requestId(req, res);
    res.on('close', onClose);
    next();
  };
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's logger interface over pino: `logger.log(message, context)` becomes `{context, msg}` at info, `error(message,
 * stack, context)` carries the stack as `err`. Objects and Errors are logged as structured fields.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: Level, message: unknown, rest: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    // Nest appends the logger's context as the last argument; an error's stack comes before it
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const stack = level === 'error' && rest.length > 1 && typeof rest[rest.length - 2] === 'string' ? (rest[rest.length - 2] as string) : undefined;
    const fields: Record<string, unknown> = context === undefined ? {} : { context };
    if (message instanceof Error) {
      this.logger[level]({ ...fields, err: message }, message.message);
    } else if (message && typeof message === 'object') {
      const { msg, message: text, ...others } = message as Record<string, unknown>;
      this.logger[level]({ ...fields, ...others }, typeof (msg ?? text) === 'string' ? String(msg ?? text) : '');
    } else {
      this.logger[level](stack ? { ...fields, err: { stack } } : fields, String(message));
    }
  }
}
