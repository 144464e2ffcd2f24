import { DomainError, type SimNetworkFrame } from '@app/contracts';
import { DeviceLink, SimNetwork } from '../sim-network';

class RecordingLink implements DeviceLink {
  frames: SimNetworkFrame[] = [];
  send(frame: SimNetworkFrame): void {
    this.frames.push(frame);
  }
  close(): void {}
  drop(): void {}
}

/** Two paired devices on one network: the account 15550001111 (session A) and 15550002222 (session B). */
function network() {
  const net = new SimNetwork({ qrIntervalMs: 60_000 });
  const a = new RecordingLink();
  const b = new RecordingLink();
  net.attach('A', a, null);
  net.scan('A', { phoneNumber: '15550001111' });
  net.attach('B', b, null);
  net.scan('B', { phoneNumber: '15550002222' });
  const act = (session: 'A' | 'B', action: string, args: object) => net.request(session, session === 'A' ? a : b, 'action', { action, args });
  return { net, a, b, act };
}

describe('the simulator’s contacts, profiles and presence (SimContacts)', () => {
  it('knows who is on WhatsApp: registered accounts, paired devices’ numbers and inbound senders', () => {
    const { net, act } = network();
    net.world.contacts.put(net, { phoneNumber: '15550003333' });
    net.inbound('A', { from: '15550004444@s.whatsapp.net', text: 'hi' });
    const { results } = act('A', 'contacts.check', { phoneNumbers: ['15550002222', '15550003333', '15550004444', '15550009999'] }) as { results: Array<{ exists: boolean; lid: string | null }> };
    expect(results.map((r) => r.exists)).toEqual([true, true, true, false]);
    expect(results[0].lid).toBe(net.lidOf('15550002222'));
  });

  it('carries an account’s name on its messages and tells the devices that know it when it changes', () => {
    const { net, a } = network();
    net.world.contacts.put(net, { phoneNumber: '15550003333', name: 'Ana' });
    net.inbound('A', { from: '15550003333', text: 'hi' });
    expect(a.frames.find((f) => f.type === 'message')).toMatchObject({ message: { pushName: 'Ana' } });
    const renamed = net.world.contacts.put(net, { phoneNumber: '15550003333', name: 'Ana M' });
    expect(renamed.delivered).toEqual(['A']);
    expect(a.frames.at(-1)).toMatchObject({ type: 'contact', contact: { jid: '15550003333@s.whatsapp.net', pushName: 'Ana M' } });
  });

  it('refuses bad control input naming the field, and changes nothing', () => {
    const { net } = network();
    const fieldOf = (body: object) => {
      try {
        net.world.contacts.put(net, body as Record<string, unknown>);
      } catch (err) {
        return Object.keys((err as DomainError).details);
      }
      return null;
    };
    expect(fieldOf({ phoneNumber: 'abc' })).toEqual(['phoneNumber']);
    expect(fieldOf({ phoneNumber: '15550003333', name: 'x'.repeat(26) })).toEqual(['name']);
    expect(fieldOf({ phoneNumber: '15550003333', pictureBase64: 'not base64!' })).toEqual(['pictureBase64']);
    expect(fieldOf({ phoneNumber: '15550003333', isBusiness: 'yes' })).toEqual(['isBusiness']);
    expect(net.world.contacts.exists('15550003333')).toBe(false);
  });

  it('blocks, hides the profile from whom it blocked, and plays presence subscriptions both ways', () => {
    const { net, a, act } = network();
    net.world.contacts.put(net, { phoneNumber: '15550002222', about: 'B here' });
    act('B', 'contacts.block', { jid: '15550001111@s.whatsapp.net', block: true });
    expect(net.world.contacts.accountView('15550002222').blocked).toEqual(['15550001111@s.whatsapp.net']);
    expect(act('A', 'contacts.profile', { jid: '15550002222@s.whatsapp.net' })).toEqual({ exists: true, about: null, pictureUrl: null });
    act('B', 'contacts.block', { jid: '15550001111', block: false });
    expect(act('A', 'contacts.profile', { jid: '15550002222' })).toMatchObject({ about: 'B here' });

    act('A', 'presence.subscribe', { jid: '15550002222' });
    expect(a.frames.at(-1)).toMatchObject({ type: 'presence', jid: '15550002222@s.whatsapp.net', presence: 'unavailable' });
    act('B', 'presence.account', { presence: 'available' });
    expect(a.frames.at(-1)).toMatchObject({ type: 'presence', jid: '15550002222@s.whatsapp.net', presence: 'available' });
    expect(net.presenceLog('B')).toEqual([{ type: 'account-presence', presence: 'available', at: expect.any(Number) }]);
    expect(() => act('A', 'presence.subscribe', { jid: '15550009999' })).toThrow(DomainError);
  });
});
