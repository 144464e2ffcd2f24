import type { SimCredential, SimNetworkFrame } from '@app/contracts';
import { DeviceLink, SimNetwork } from './sim-network';

/** The network's end of a device socket, recording what the network sent down it. */
class RecordingLink implements DeviceLink {
  frames: SimNetworkFrame[] = [];
  closedWith: number | null = null;
  send(frame: SimNetworkFrame): void {
    this.frames.push(frame);
  }
  close(code: number): void {
    this.closedWith = code;
  }
  drop(): void {
    this.closedWith = 1006;
  }
  /** the texts of the inbound messages this socket was given, in order */
  texts(): string[] {
    return this.frames.flatMap((f) => (f.type === 'message' ? [f.message.text ?? ''] : []));
  }
  eventIdOf(text: string): string {
    const frame = this.frames.find((f) => f.type === 'message' && f.message.text === text);
    if (!frame || !('eventId' in frame)) throw new Error(`no frame for ${text}`);
    return frame.eventId;
  }
}

const SESSION = 'ses_ack';

function pairedDevice(): { network: SimNetwork; link: RecordingLink; credential: SimCredential } {
  const network = new SimNetwork({ qrIntervalMs: 60_000 });
  const link = new RecordingLink();
  network.attach(SESSION, link, null);
  network.scan(SESSION, { phoneNumber: '15550001111' });
  const paired = link.frames.find((f) => f.type === 'paired');
  if (!paired || paired.type !== 'paired') throw new Error('not paired');
  return { network, link, credential: paired.credential };
}

const send = (network: SimNetwork, ...texts: string[]) => {
  for (const text of texts) network.inbound(SESSION, { from: '15559990000@s.whatsapp.net', text });
};

describe('SimNetwork acknowledgements (CONTRACT 9)', () => {
  it('keeps every delivered event until it is acked, and redelivers exactly the un-acked ones, in order, on the next open', () => {
    const { network, link, credential } = pairedDevice();
    send(network, 'm1', 'm2', 'm3', 'm4', 'm5');
    expect(link.texts()).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    network.ack(SESSION, link, link.eventIdOf('m2'));
    network.ack(SESSION, link, link.eventIdOf('m4'));
    network.ack(SESSION, link, link.eventIdOf('m4'));
    expect(network.view(SESSION).pendingInbound).toBe(3);

    network.drop(SESSION);
    network.detach(SESSION, link);
    send(network, 'm6');
    const next = new RecordingLink();
    network.attach(SESSION, next, credential);
    expect(next.frames[0]).toMatchObject({ type: 'open' });
    expect(next.texts()).toEqual(['m1', 'm3', 'm5', 'm6']);
    // the same event keeps its id across deliveries, so a late ack of the first copy still counts
    expect(next.eventIdOf('m1')).toBe(link.eventIdOf('m1'));
  });

  it('takes an ack from a replaced socket whose transport is still open (it stored the event), not from a closed one', () => {
    const { network, link, credential } = pairedDevice();
    send(network, 'm1', 'm2');
    const replacement = new RecordingLink();
    network.attach(SESSION, replacement, credential);
    expect(link.closedWith).not.toBeNull();
    // the old socket's ack frame arrives after the new socket opened, before the old transport closed
    network.ack(SESSION, link, link.eventIdOf('m1'));
    network.detach(SESSION, link);
    // a socket that has closed acks nothing
    network.ack(SESSION, link, link.eventIdOf('m2'));
    expect(network.view(SESSION).pendingInbound).toBe(1);

    network.drop(SESSION);
    network.detach(SESSION, replacement);
    const third = new RecordingLink();
    network.attach(SESSION, third, credential);
    expect(third.texts()).toEqual(['m2']);
  });

  it('an unlink drops what is pending with the pairing', () => {
    const { network } = pairedDevice();
    send(network, 'm1');
    network.unlink(SESSION);
    expect(network.view(SESSION).pendingInbound).toBe(0);
  });
});
