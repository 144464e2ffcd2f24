import { parserErrorEnvelope } from './client-error';

const parserError = (code: string, rawPacket?: string) => Object.assign(new Error(code), { code, rawPacket: rawPacket === undefined ? undefined : Buffer.from(rawPacket, 'latin1') });

describe('parserErrorEnvelope', () => {
  it('tells an over-long request line (414) from over-large headers (431)', () => {
    expect(parserErrorEnvelope(parserError('HPE_HEADER_OVERFLOW', `GET /${'a'.repeat(9000)} HTTP/1.1\r\n`))?.code).toBe('uri_too_long');
    expect(parserErrorEnvelope(parserError('HPE_HEADER_OVERFLOW', `GET / HTTP/1.1\r\nX-Big: ${'a'.repeat(20000)}`))?.code).toBe('headers_too_large');
  });

  it('answers every other parser error with 400 bad_request, and nothing to a peer that is gone', () => {
    expect(parserErrorEnvelope(parserError('HPE_INVALID_HEADER_TOKEN'))?.toBody()).toEqual({
      error: { code: 'bad_request', message: 'malformed HTTP request', details: {} },
    });
    expect(parserErrorEnvelope(parserError('ECONNRESET'))).toBeNull();
    expect(parserErrorEnvelope(parserError('ERR_HTTP_REQUEST_TIMEOUT'))).toBeNull();
  });
});
