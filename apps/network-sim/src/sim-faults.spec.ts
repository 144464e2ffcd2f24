import { DomainError, SIM_CLOSE_CODES, SIM_FAULT_KINDS, SimNetworkFrame } from '@app/contracts';
import { applyFault } from './sim-faults';
import { DeviceLink, SimNetwork } from './sim-network';

/** The network's end of a device connection, recording what the network did to it. */
class RecordingLink implements DeviceLink {
  frames: SimNetworkFrame[] = [];
  ended: Array<{ how: 'close'; code: number } | { how: 'drop' } | { how: 'silence' }> = [];
  send(frame: SimNetworkFrame): void {
    this.frames.push(frame);
  }
  close(code: number): void {
    this.ended.push({ how: 'close', code });
  }
  drop(): void {
    this.ended.push({ how: 'drop' });
  }
  silence(): void {
    this.ended.push({ how: 'silence' });
  }
}

const errorOf = (fn: () => unknown): DomainError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a DomainError');
};

function pairedDevice(id: string) {
  const network = new SimNetwork({ qrIntervalMs: 60_000 });
  const link = new RecordingLink();
  network.attach(id, link, null);
  network.scan(id, { phoneNumber: '15550001111' });
  return { network, link };
}

describe('the fault call', () => {
  it.each([
    ['drop', { how: 'drop' }],
    ['silent', { how: 'silence' }],
    ['stream-error-515', { how: 'close', code: SIM_CLOSE_CODES.restartRequired }],
    ['stream-error-ack', { how: 'close', code: SIM_CLOSE_CODES.streamError }],
    ['conflict', { how: 'close', code: SIM_CLOSE_CODES.replaced }],
    ['failure-403', { how: 'close', code: SIM_CLOSE_CODES.forbidden }],
    ['failure-405', { how: 'close', code: SIM_CLOSE_CODES.clientVersionRefused }],
  ])('%s ends the connection its way, keeps the pairing, and the device is offline for the network', (kind, ended) => {
    const { network, link } = pairedDevice(`ses-${kind}`);
    const view = applyFault(network, `ses-${kind}`, { kind });
    expect(link.ended).toEqual([ended]);
    expect(view).toMatchObject({ fault: kind, state: 'paired', connected: false });
    // what arrives meanwhile waits for the next open
    expect(network.inbound(`ses-${kind}`, { from: '15559990000', text: 'hi' })).toMatchObject({ queued: true });
  });

  it('failure-401 forgets a paired device (unlinked) and a pairing code in progress (a fresh QR flow next)', () => {
    const { network, link } = pairedDevice('ses-401');
    expect(applyFault(network, 'ses-401', { kind: 'failure-401' })).toMatchObject({ state: 'unlinked', jid: null, connected: false });
    expect(link.ended).toEqual([{ how: 'close', code: SIM_CLOSE_CODES.loggedOut }]);

    const pending = new SimNetwork({ qrIntervalMs: 60_000 });
    const device = new RecordingLink();
    pending.attach('ses-code', device, null);
    pending.request('ses-code', device, 'requestPairingCode', { phoneNumber: '15550002222' });
    expect(applyFault(pending, 'ses-code', { kind: 'failure-401' })).toMatchObject({ state: 'unpaired', connected: false });
    expect(errorOf(() => pending.enterPairingCode('ses-code', { code: 'ABCD1234' })).code).toBe('conflict');
  });

  it('knows every kind of the contract and refuses others, naming the field; 404 unknown device; 409 not connected', () => {
    const { network } = pairedDevice('ses-bad');
    expect(errorOf(() => applyFault(network, 'ses-bad', { kind: 'meteor' }))).toMatchObject({ code: 'validation_error', details: { kind: 'meteor' } });
    expect(errorOf(() => applyFault(network, 'ses-bad', {})).code).toBe('validation_error');
    expect(errorOf(() => applyFault(network, 'ses-bad', { kind: 'drop', extra: 1 })).details).toEqual({ fields: ['extra'] });
    expect(errorOf(() => applyFault(network, 'nobody', { kind: 'drop' })).code).toBe('not_found');
    applyFault(network, 'ses-bad', { kind: 'drop' });
    expect(errorOf(() => applyFault(network, 'ses-bad', { kind: 'drop' })).code).toBe('conflict');
    expect([...SIM_FAULT_KINDS]).toEqual(['drop', 'silent', 'stream-error-515', 'stream-error-ack', 'conflict', 'failure-401', 'failure-403', 'failure-405']);
  });

  it('silent on a transport that cannot be silenced is refused and changes nothing', () => {
    const network = new SimNetwork({ qrIntervalMs: 60_000 });
    const link: DeviceLink = { send: () => undefined, close: () => undefined, drop: () => undefined };
    network.attach('ses-mute', link, null);
    network.scan('ses-mute', {});
    expect(errorOf(() => applyFault(network, 'ses-mute', { kind: 'silent' })).code).toBe('not_implemented');
    expect(network.view('ses-mute').connected).toBe(true);
  });
});

describe('a door that plays faults in its own protocol (DeviceLink.fault)', () => {
  class OwnProtocolLink extends RecordingLink {
    played: string[] = [];
    fault(kind: (typeof SIM_FAULT_KINDS)[number]): void {
      this.played.push(kind);
    }
  }

  it.each(SIM_FAULT_KINDS.map((kind) => [kind]))('%s is handed to the link as the kind, and the network sees the device go offline', (kind) => {
    const network = new SimNetwork({ qrIntervalMs: 60_000 });
    const link = new OwnProtocolLink();
    network.attach('own', link, null);
    network.scan('own', { phoneNumber: '15550002222' });
    const view = applyFault(network, 'own', { kind });
    expect(link.played).toEqual([kind]);
    expect(link.ended).toEqual([]);
    expect(view).toMatchObject({ connected: false, fault: kind, state: kind === 'failure-401' ? 'unlinked' : 'paired' });
  });
});
