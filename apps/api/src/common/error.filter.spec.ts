import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { DomainError } from '@app/contracts';
import { toDomainError } from './error.filter';

describe('toDomainError', () => {
  it('keeps domain errors as they are', () => {
    const e = new DomainError('conflict', 'busy');
    expect(toDomainError(e)).toEqual({ error: e, unexpected: false });
  });

  it('maps framework and body-parser errors to codes', () => {
    expect(toDomainError(new NotFoundException('Cannot GET /x')).error.code).toBe('not_found');
    expect(toDomainError(new PayloadTooLargeException()).error.code).toBe('payload_too_large');
    expect(toDomainError(new BadRequestException('Unexpected token')).error.code).toBe('validation_error');
    expect(toDomainError(Object.assign(new Error('x'), { type: 'entity.too.large' })).error.code).toBe('payload_too_large');
    expect(toDomainError(Object.assign(new SyntaxError('x'), { type: 'entity.parse.failed' })).error.code).toBe('validation_error');
  });

  it('maps undecodable bodies and other client errors raised below Nest to 4xx codes, never internal', () => {
    const zlib = Object.assign(new Error('incorrect header check'), { code: 'Z_DATA_ERROR', status: 400 });
    expect(toDomainError(zlib)).toEqual({ error: expect.objectContaining({ code: 'bad_request' }), unexpected: false });
    expect(toDomainError(Object.assign(new Error('x'), { type: 'encoding.unsupported', status: 415 })).error.code).toBe('unsupported_media_type');
    expect(toDomainError(Object.assign(new URIError("Failed to decode param '%FF'"), { status: 400 })).error.code).toBe('bad_request');
  });

  it('answers PostgreSQL or Redis out of reach with 503 unavailable and a retry hint, not internal', () => {
    for (const outage of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      new Error('Connection is closed.'),
    ]) {
      const { error, unexpected } = toDomainError(outage);
      expect(unexpected).toBe(false);
      expect(error.toBody()).toEqual({ error: { code: 'unavailable', message: expect.any(String), details: { retryAfterSeconds: 5 } } });
      expect(error.status).toBe(503);
    }
  });

  it('hides anything unexpected behind internal', () => {
    const { error, unexpected } = toDomainError(new TypeError('cannot read properties of undefined (secret stuff)'));
    expect(unexpected).toBe(true);
    expect(error.code).toBe('internal');
    expect(error.message).toBe('internal error');
  });
});
