/**
 * Error codes that cross the process boundary (HTTP envelope, command replies).
 * One global filter in the API maps DomainError to `{error:{code,message,details}}`.
 */
export const ERROR_STATUS = {
  validation_error: 422,
  // malformed HTTP the handlers never see: undecodable bodies and what Node's own parser refuses
  bad_request: 400,
  uri_too_long: 414,
  unsupported_media_type: 415,
  headers_too_large: 431,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  not_implemented: 501,
  gateway_unavailable: 503,
  // PostgreSQL or Redis cannot be reached: retry later (with Retry-After)
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: Record<string, unknown> };
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && value in ERROR_STATUS;
}
