import pino, { Logger, LoggerOptions } from 'pino';

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

export function loggerOptions(app: string, level: string): LoggerOptions {
  return {
    level,
    base: { app },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
}

/** JSON logs on stderr, so a CLI's stdout stays clean for its own output. */
export function createLogger(app: string, level: string): Logger {
  return pino(loggerOptions(app, level), pino.destination({ fd: 2, sync: false }));
}

export type { Logger };
