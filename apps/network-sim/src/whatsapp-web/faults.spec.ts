import { SIM_CLOSE_CODES, SIM_FAULT_KINDS } from '@app/contracts';
import { closeStanza, WA_FAULTS } from './faults';

/**
 * What Baileys rc14 reports for a stanza (Socket/socket.js and Utils/generics.js, restated so a change to the table
 * shows here): `<stream:error>` → its `code`, else 440 for a `conflict` child, else 500; `<failure>` → its `reason`.
 */
function baileysStatusOf(node: { tag: string; attrs: Record<string, string>; content?: unknown }): number {
  if (node.tag === 'failure') return Number(node.attrs.reason || 500);
  const first = Array.isArray(node.content) ? (node.content[0] as { tag: string } | undefined) : undefined;
  return Number(node.attrs.code || (first?.tag === 'conflict' ? 440 : 500));
}

describe('WhatsApp Web faults', () => {
  it('has a way to play every fault kind of the contract', () => {
    expect(Object.keys(WA_FAULTS).sort()).toEqual([...SIM_FAULT_KINDS].sort());
  });

  it.each([
    ['stream-error-515', 'stream:error', 515],
    ['stream-error-ack', 'stream:error', 500],
    ['conflict', 'stream:error', 440],
    ['failure-401', 'failure', 401],
    ['failure-403', 'failure', 403],
    ['failure-405', 'failure', 405],
  ] as const)('%s is a <%s> Baileys reports as %d', (kind, tag, status) => {
    const action = WA_FAULTS[kind];
    if (!('stanza' in action)) throw new Error(`${kind} sends no stanza`);
    expect(action.stanza.tag).toBe(tag);
    expect(baileysStatusOf(action.stanza)).toBe(status);
  });

  it('the <ack/> stream error has no code (what makes Baileys say 500) and names ack', () => {
    const action = WA_FAULTS['stream-error-ack'];
    expect(action).toEqual({ stanza: { tag: 'stream:error', attrs: {}, content: [{ tag: 'ack', attrs: {} }] } });
  });

  it('silent and drop send nothing', () => {
    expect(WA_FAULTS.silent).toEqual({ silence: true });
    expect(WA_FAULTS.drop).toEqual({ drop: true });
  });

  it.each([
    [SIM_CLOSE_CODES.loggedOut, true, 401, 'stream:error'],
    [SIM_CLOSE_CODES.loggedOut, false, 401, 'failure'],
    [SIM_CLOSE_CODES.replaced, true, 440, 'stream:error'],
    [SIM_CLOSE_CODES.restartRequired, true, 515, 'stream:error'],
    [SIM_CLOSE_CODES.forbidden, true, 403, 'failure'],
    [SIM_CLOSE_CODES.clientVersionRefused, true, 405, 'failure'],
    [SIM_CLOSE_CODES.streamError, true, 500, 'stream:error'],
  ])('the network close %d (logged in: %s) is what Baileys reports as %d', (code, loggedIn, status, tag) => {
    const stanza = closeStanza(code, loggedIn);
    expect(stanza.tag).toBe(tag);
    expect(baileysStatusOf(stanza)).toBe(status);
  });

  it('an unlink of a logged-in device says device_removed', () => {
    expect(closeStanza(SIM_CLOSE_CODES.loggedOut, true).content).toEqual([{ tag: 'conflict', attrs: { type: 'device_removed' } }]);
  });
});
