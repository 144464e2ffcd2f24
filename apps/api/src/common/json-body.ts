import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';

/** The media types the API's JSON parsers read. */
export const JSON_TYPES = ['application/json', 'application/*+json'];

/** What the body parser's verify hook throws; `status` and `type` survive into the error filter. */
class BodyEncodingError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The body parsers' `verify` hook: JSON travels as UTF-8 (RFC 8259 §8.1), and a body whose bytes are not well-formed
 * UTF-8 (an invalid byte, an overlong form, an encoded surrogate, a truncated sequence) is refused as 400 instead of
 * decoded into U+FFFD, which would store text the client never sent. Another charset is refused as 415.
 */
export function requireUtf8(_req: IncomingMessage, _res: unknown, body: Buffer, encoding: string | null): void {
  if (encoding !== null && encoding !== 'utf-8') throw new BodyEncodingError(415, 'charset.unsupported', `unsupported charset "${encoding}"`);
  if (!isUtf8(body)) throw new BodyEncodingError(400, 'entity.encoding.invalid', 'request body is not well-formed UTF-8');
}

/** The options every JSON parser of the API shares, with its size limit. */
export const jsonBodyOptions = (limit: number) => ({ limit, strict: false, type: JSON_TYPES, verify: requireUtf8 });
