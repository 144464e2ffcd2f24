import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError, ERROR_STATUS, ErrorCode } from '@app/contracts';
import { isStoreUnreachable } from '@app/infra';
import { DeferredRequestLimits } from '../limits/deferred-request-limits';

const STATUS_CODE: Record<number, ErrorCode> = {
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'validation_error',
  429: 'rate_limited',
  431: 'headers_too_large',
  501: 'not_implemented',
  503: 'gateway_unavailable',
};

/** What a caller is told to wait while PostgreSQL or Redis is unreachable: a restart takes seconds, a failover tens. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

const invalidJson = () => new DomainError('validation_error', 'request body is not valid JSON', { fields: { body: ['is not valid JSON'] } });

/** Body-parser errors carry `type`; they arrive before any controller runs. */
function fromBodyParser(err: { type?: string; status?: number; code?: string; message?: string } | null | undefined): DomainError | null {
  if (!err || typeof err !== 'object') return null;
  if (err.type === 'entity.parse.failed') return invalidJson();
  if (err.type === 'entity.too.large') return new DomainError('payload_too_large', 'request body is too large');
  if (err.type === 'encoding.unsupported') return new DomainError('unsupported_media_type', 'unsupported Content-Encoding (identity, gzip, deflate or br)');
  if (err.type === 'entity.encoding.invalid') return new DomainError('bad_request', 'request body is not well-formed UTF-8');
  if (err.type === 'charset.unsupported') return new DomainError('unsupported_media_type', 'unsupported charset (utf-8)');
  // zlib's verdict on a body that does not match its Content-Encoding (a gzip header on plain JSON)
  if (typeof err.code === 'string' && /^(Z_|ERR__ERROR)/.test(err.code) && err.status === 400) {
    return new DomainError('bad_request', 'request body does not match its Content-Encoding');
  }
  return null;
}

/**
 * The one mapping from anything thrown to the `{error:{code,message,details}}` envelope.
 * PostgreSQL or Redis out of reach is 503 `unavailable` (retry later), not a bug of ours.
 * Unknown errors become a generic 500 `internal`, logged but never shown.
 */
export function toDomainError(exception: unknown): { error: DomainError; unexpected: boolean } {
  if (exception instanceof DomainError) return { error: exception, unexpected: false };
  if (isStoreUnreachable(exception)) {
    return {
      error: new DomainError('unavailable', 'a data store cannot be reached right now; retry later', { retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS }),
      unexpected: false,
    };
  }
  const parsed = fromBodyParser(exception as { type?: string });
  if (parsed) return { error: parsed, unexpected: false };
  const status = (exception as { status?: unknown } | null)?.status;
  if (!(exception instanceof HttpException) && typeof status === 'number' && status >= 400 && status < 500) {
    // http-errors raised below Nest (router, body parser) with a client status: never a 500
    const code = status === 400 ? 'bad_request' : STATUS_CODE[status] ?? 'bad_request';
    return { error: new DomainError(code, code === 'bad_request' ? 'malformed request' : (exception as Error).message ?? code), unexpected: false };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    // our pipes throw DomainError, so a bare 400 can only be the body parser's verdict on the JSON
    if (status === 400) return { error: invalidJson(), unexpected: false };
    const code = STATUS_CODE[status] ?? (status >= 500 ? 'internal' : 'validation_error');
    const message = status === 404 || status === 405 ? 'route not found' : code === 'internal' ? 'internal error' : exception.message;
    return { error: new DomainError(code, message), unexpected: status >= 500 && code === 'internal' };
  }
  return { error: new DomainError('internal', 'internal error'), unexpected: true };
}

@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const { error, unexpected } = toDomainError(exception);
    const http = host.switchToHttp();
    // the request id ties the log line to the request's own (and to what the caller was told in X-Request-Id)
    const requestId = () => (http.getRequest<{ id?: string }>() ?? {}).id;
    if (unexpected) {
      const detail = exception instanceof Error ? exception.stack ?? exception.message : String(exception);
      this.logger.error({ msg: detail, requestId: requestId() });
    } else if (error.code === 'unavailable') {
      // an outage, not a bug: its cause without a stack
      this.logger.warn({ msg: `store unreachable: ${exception instanceof Error ? exception.message : String(exception)}`, requestId: requestId() });
    }
    // a request whose API-wide limits were left to its handler, failed before the handler counted them
    DeferredRequestLimits.of(http.getRequest<object>())?.settle();
    const res = http.getResponse<Response>();
    if (res.headersSent) return;
    if ((error.code === 'rate_limited' || error.code === 'unavailable') && typeof error.details.retryAfterSeconds === 'number') {
      res.setHeader('Retry-After', String(error.details.retryAfterSeconds));
    }
    res.status(ERROR_STATUS[error.code]).json(error.toBody());
  }
}
