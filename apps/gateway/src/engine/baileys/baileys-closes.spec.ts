import { Boom } from '@hapi/boom';
import type { BinaryNode } from '@whiskeysockets/baileys';
import { closeCauseOf, closeReasonFor } from './baileys-mapping';

/**
 * Closes built the way Baileys 7.0.0-rc14's Socket/socket.js builds them (the Boom it passes to `end()`), so the
 * mapping is checked against what the socket really reports:
 * - `CB:stream:error` → `new Boom('Stream Errored (<reason>)', { statusCode: code attr || CODE_MAP[reason] || 500, data: reasonNode })`
 * - `CB:failure` → `new Boom('Connection Failure', { statusCode: +reason attr || 500, data: node.attrs })`
 * - `CB:ib,,downgrade_webclient` → 411; ws close → 428 'Connection Terminated'; keep-alive miss → 408 'Connection was lost'
 */
function streamError(children: BinaryNode[], code?: string): Boom {
  const node: BinaryNode = { tag: 'stream:error', attrs: code ? { code } : {}, content: children };
  const [reasonNode] = children;
  const reason = code === '515' ? 'restart required' : (reasonNode?.tag ?? 'unknown');
  const statusCode = +(node.attrs.code || (reasonNode?.tag === 'conflict' ? 440 : 0) || 500);
  return new Boom(`Stream Errored (${reason})`, { statusCode, data: reasonNode || node });
}

function failure(reason: string): Boom {
  const attrs = { reason, location: 'frc' };
  return new Boom('Connection Failure', { statusCode: +(attrs.reason || 500), data: attrs });
}

const closeOf = (error: unknown) => {
  const cause = closeCauseOf(error);
  return { reason: cause.transport ? 'transient' : closeReasonFor(cause.statusCode), statusCode: cause.statusCode, message: cause.message };
};

describe('Baileys closes → what the gateway does', () => {
  it('a stream error without a code (<ack/>) is transient: Baileys says 500, the pairing is kept', () => {
    expect(closeOf(streamError([{ tag: 'ack', attrs: { id: '1' } }]))).toEqual({ reason: 'transient', statusCode: 500, message: 'Stream Errored (ack)' });
    expect(closeOf(streamError([{ tag: 'xml-not-well-formed', attrs: {} }]))).toMatchObject({ reason: 'transient', statusCode: 500 });
    expect(closeOf(streamError([]))).toEqual({ reason: 'transient', statusCode: 500, message: 'Stream Errored (unknown)' });
  });

  it('515 (restart required) asks for a fresh socket', () => {
    expect(closeOf(streamError([], '515'))).toEqual({ reason: 'restart_required', statusCode: 515, message: 'Stream Errored (restart required)' });
  });

  it('<conflict type="replaced"/> is 440: replaced', () => {
    expect(closeOf(streamError([{ tag: 'conflict', attrs: { type: 'replaced' } }]))).toEqual({
      reason: 'replaced',
      statusCode: 440,
      message: 'Stream Errored (conflict)',
    });
  });

  it('failure 401 is the device gone; 403 forbidden; 405 the client version refused', () => {
    expect(closeOf(failure('401'))).toEqual({ reason: 'logged_out', statusCode: 401, message: 'Connection Failure' });
    expect(closeOf(failure('403'))).toEqual({ reason: 'forbidden', statusCode: 403, message: 'Connection Failure' });
    expect(closeOf(failure('405'))).toEqual({ reason: 'client_version_refused', statusCode: 405, message: 'Connection Failure' });
    // a failure without a reason is Baileys' 500 too: transient
    expect(closeOf(new Boom('Connection Failure', { statusCode: 500, data: {} }))).toMatchObject({ reason: 'transient', statusCode: 500 });
  });

  it.each([
    [new Boom('Multi-device beta not joined', { statusCode: 411 }), 411],
    [new Boom('Connection Terminated', { statusCode: 428 }), 428],
    [new Boom('Connection was lost', { statusCode: 408 }), 408],
    [new Boom('QR refs attempts ended', { statusCode: 408 }), 408],
    [streamError([{ tag: 'unavailable', attrs: {} }], '503'), 503],
  ])('%s is transient', (error, statusCode) => {
    expect(closeOf(error)).toMatchObject({ reason: 'transient', statusCode });
  });
});
