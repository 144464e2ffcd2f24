import type { LoggerService } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

const pathOf = (url: string | undefined) => url?.split('?')[0];

/** A request's id: a caller's sane X-Request-Id echoed, otherwise a fresh one; always returned as a header. */
export type RequestIdSource = (req: IncomingMessage, res: ServerResponse) => string;

type LoggedRequest = IncomingMessage & { id?: string; originalUrl?: string };

/**
 * One short line per request (`GET /api/v1/sessions 200 12ms`) with method, path (no query string: it may carry a
 * token), status, duration and request id; never the headers. Written when the response is done, by the process's
 * one logger: no child logger and no async context per request (they were a tenth of the API's CPU per request).
 * 5xx at error; a request whose client went away before the answer was complete at warn.
 */
export function requestLogger(logger: Logger, requestId: RequestIdSource) {
  return (req: LoggedRequest, res: ServerResponse, next: () => void): void => {
    const started = performance.now();
    const id = requestId(req, res);
    req.id = id;
    res.once('close', () => {
      const ms = Math.round(performance.now() - started);
      const aborted = !res.writableFinished;
      const level = res.statusCode >= 500 ? 'error' : aborted ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const path = pathOf(req.originalUrl ?? req.url);
      logger[level](
        { req: { id, method: req.method, url: path }, res: { statusCode: res.statusCode }, responseTime: ms },
        aborted ? `${req.method} ${path} aborted after ${ms}ms` : `${req.method} ${path} ${res.statusCode} ${ms}ms`,
      );
    });
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
