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
type DocumentedError = 'unauthorized' | 'forbidden' | 'not_found' | 'conflict' | 'validation_error' | 'rate_limited' | 'not_implemented' | 'gateway_unavailable';

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
};

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
