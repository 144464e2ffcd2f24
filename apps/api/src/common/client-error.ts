import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError, ERROR_STATUS } from '@app/contracts';

/** Longer request targets are 414: below Node's header limit (16 KiB), so the answer is ours, not the parser's. */
export const MAX_URL_LENGTH = 8192;

interface ParserError extends Error {
  code?: string;
  /** the chunk the parser was reading when it gave up */
  rawPacket?: Buffer;
}

/**
 * The envelope for a request Node's HTTP parser refused before any route ran, or null when nothing should be
 * written (the peer is gone, or timed out). The parser says only "header overflow" for both a huge request line and
 * huge headers; the chunk it was reading tells them apart.
 */
export function parserErrorEnvelope(err: ParserError): DomainError | null {
  if (err.code === 'ECONNRESET' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return null;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const text = err.rawPacket?.toString('latin1') ?? '';
    const lineEnd = text.indexOf('\r\n');
    if ((lineEnd < 0 ? text.length : lineEnd) > MAX_URL_LENGTH) return new DomainError('uri_too_long', `request URL is longer than ${MAX_URL_LENGTH} bytes`);
    return new DomainError('headers_too_large', 'request headers are too large');
  }
  return new DomainError('bad_request', 'malformed HTTP request');
}

/**
 * The `clientError` listener of the API's HTTP server: what Node would answer with an empty body is answered in
 * the `{error:{code,message,details}}` envelope, then the connection is closed (the parser state is unusable).
 */
export function answerClientError(err: ParserError, socket: Duplex): void {
  const error = parserErrorEnvelope(err);
  const responding = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!error || !socket.writable || responding?.headersSent) {
    socket.destroy();
    return;
  }
  const status = ERROR_STATUS[error.code];
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
