import { applyDecorators } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiResponse } from '@nestjs/swagger';
import { ERROR_STATUS, ErrorBody, ErrorCode } from '@app/contracts';

export class ErrorDetail {
  @ApiProperty({ enum: Object.keys(ERROR_STATUS) }) code: ErrorCode;
  @ApiProperty() message: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: '{} when there is nothing more to say' }) details: Record<string, unknown>;
}

/** The one error shape of the API (CONTRACT 5), whichever status carries it. */
export class ErrorEnvelope {
  @ApiProperty({ type: ErrorDetail }) error: ErrorDetail;
}

/** The codes an operation documents; each maps to its own status. */
type DocumentedError = ErrorCode;

/** What the error filter really answers, so the examples in Swagger UI are bodies a caller will see. */
const ERRORS: Record<DocumentedError, { description: string; example: ErrorBody }> = {
  unauthorized: {
    description: 'no credential, or one that is unknown, revoked, expired or malformed',
    example: { error: { code: 'unauthorized', message: 'missing or invalid credentials', details: {} } },
  },
  forbidden: {
    description: 'the credential lacks the capability the operation needs',
    example: { error: { code: 'forbidden', message: 'the caller lacks the needed capability', details: { required: ['sessions:write'] } } },
  },
  not_found: {
    description: "no such resource in the caller's organization (another organization's ids are not found either)",
    example: { error: { code: 'not_found', message: 'session not found', details: { id: 'ses_01JD3Z8Q5W7N2K4M6P8R0T2V4X' } } },
  },
  conflict: {
    description: 'the resource is not in a state that allows this operation; `details` says which state',
    example: { error: { code: 'conflict', message: 'the session is not waiting for a QR scan (status working)', details: { status: 'working' } } },
  },
  validation_error: {
    description: 'the body or query does not validate; `details.fields` names each field',
    example: { error: { code: 'validation_error', message: 'request is invalid', details: { fields: { label: ['label must be shorter than or equal to 200 characters'] } } } },
  },
  rate_limited: {
    description: 'a request, login or quota limit is reached; `Retry-After` says when to try again (seconds)',
    example: { error: { code: 'rate_limited', message: 'too many requests (credential); retry in 12 s', details: { limit: 'credential', retryAfterSeconds: 12 } } },
  },
  not_implemented: {
    description: 'the operation is not available in the current state of the session',
    example: { error: { code: 'not_implemented', message: 'groups can only be created while the session is connected', details: { status: 'stopped' } } },
  },
  gateway_unavailable: {
    description: "no gateway can take the session, or the session's gateway did not answer in time",
    example: { error: { code: 'gateway_unavailable', message: 'no gateway is available to host the session', details: {} } },
  },
  unavailable: {
    description: 'PostgreSQL or Redis cannot be reached right now; retry after `Retry-After` seconds',
    example: { error: { code: 'unavailable', message: 'a service the API depends on is unreachable; retry later', details: { retryAfterSeconds: 5 } } },
  },
  payload_too_large: {
    description: 'the body is larger than the route accepts (`BODY_LIMIT_BYTES`; a send: `MEDIA_MAX_BYTES` of media)',
    example: { error: { code: 'payload_too_large', message: 'request body is too large', details: {} } },
  },
  bad_request: {
    description: 'HTTP the server cannot read: a body that does not match its Content-Encoding, bad header bytes, a bad request line',
    example: { error: { code: 'bad_request', message: 'the body does not match its Content-Encoding', details: {} } },
  },
  uri_too_long: {
    description: 'the URL is longer than 8 KiB',
    example: { error: { code: 'uri_too_long', message: 'the URL is too long', details: {} } },
  },
  unsupported_media_type: {
    description: 'a body in an encoding or charset the server does not decode',
    example: { error: { code: 'unsupported_media_type', message: 'unsupported content encoding "compress"', details: {} } },
  },
  headers_too_large: {
    description: 'the request headers exceed 16 KiB',
    example: { error: { code: 'headers_too_large', message: 'request headers are too large', details: {} } },
  },
  internal: {
    description: 'an unexpected failure (PostgreSQL or Redis unreachable, a bug); logged on the server, no internals in the answer',
    example: { error: { code: 'internal', message: 'internal error', details: {} } },
  },
};

/** An error response object as the document shows it: envelope schema, description and a real example. */
export function errorResponse(code: DocumentedError): { description: string; content: { 'application/json': { schema: { $ref: string }; example: ErrorBody } } } {
  return { description: ERRORS[code].description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' }, example: ERRORS[code].example } } };
}

/** Error responses with the envelope schema and a real example, on an operation or on every operation of a controller. */
export function ApiErrors(...codes: DocumentedError[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...codes.map((code) => ApiResponse({ status: ERROR_STATUS[code], description: ERRORS[code].description, type: ErrorEnvelope, example: ERRORS[code].example })),
  );
}

/** Summary, description and the operation's own error responses (beside those its controller declares). */
export function ApiEndpoint(summary: string, description: string, ...errors: DocumentedError[]): MethodDecorator {
  return applyDecorators(ApiOperation({ summary, description }), ApiErrors(...errors));
}

/** The same for an operation that needs no credentials (`security: []` overrides the document's requirement). */
export function ApiPublicEndpoint(summary: string, description: string, ...errors: DocumentedError[]): MethodDecorator {
  return applyDecorators(ApiOperation({ summary, description, security: [] }), ApiErrors(...errors));
}
