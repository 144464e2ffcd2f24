import type { IncomingMessage } from 'node:http';
import { requireUtf8 } from './json-body';

const verify = (hex: string, encoding: string | null = 'utf-8') => () => requireUtf8({} as IncomingMessage, {}, Buffer.from(hex, 'hex'), encoding);

describe('requireUtf8 (the JSON parsers\' verify hook)', () => {
  it.each([
    ['an invalid byte', 'ff'],
    ['a lone continuation byte', '80'],
    ['an overlong "/"', 'c0af'],
    ['an overlong NUL', 'c080'],
    ['a three-byte overlong', 'e080af'],
    ['a UTF-16 surrogate encoded in UTF-8', 'eda080'],
    ['a truncated three-byte sequence', 'e282'],
    ['a truncated four-byte sequence', 'f09f98'],
    ['a code point above U+10FFFF', 'f4908080'],
  ])('refuses %s as 400 entity.encoding.invalid', (_what, bad) => {
    const body = Buffer.from('{"label":"a').toString('hex') + bad + Buffer.from('b"}').toString('hex');
    expect(verify(body)).toThrow(expect.objectContaining({ status: 400, type: 'entity.encoding.invalid' }));
  });

  it('accepts ASCII, two-, three- and four-byte characters (emoji)', () => {
    expect(verify(Buffer.from('{"label":"é € 日本 😀 👩‍👩‍👧"}').toString('hex'))).not.toThrow();
  });

  it('refuses another charset than UTF-8 as 415 charset.unsupported', () => {
    expect(verify(Buffer.from('{}', 'utf16le').toString('hex'), 'utf-16le')).toThrow(expect.objectContaining({ status: 415, type: 'charset.unsupported' }));
  });
});
