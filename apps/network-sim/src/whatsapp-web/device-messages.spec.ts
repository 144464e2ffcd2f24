import { DeviceLink, SimNetwork } from '../sim-network';
import { WaDirectory } from './directory';
import { DeviceMessageScope, recordDeviceMessage, sentContentOf } from './device-messages';
import type { Baileys } from './wa-kit';

const OWN = '15551110000@s.whatsapp.net';
const ANA = '15551110001@s.whatsapp.net';
type Decoded = Parameters<typeof sentContentOf>[0];
const decoded = (m: object) => m as Decoded;

function scope(): DeviceMessageScope {
  const network = new SimNetwork({ qrIntervalMs: 60_000 });
  const link: DeviceLink = { send: () => undefined, close: () => undefined, drop: () => undefined };
  network.attach('s1', link, null);
  network.scan('s1', { phoneNumber: '15551110000' });
  const baileys = {} as Baileys;
  return { baileys, network, directory: new WaDirectory(() => baileys), sessionId: 's1', link, account: { jid: OWN, lid: network.lidOf('15551110000') } };
}

describe('what the device sends over WhatsApp Web, as the network records it', () => {
  it('reads edits (bare, as Baileys sends them, or inside editedMessage), revokes, forwarded texts and votes', () => {
    const edit = { protocolMessage: { key: { id: 'M1', remoteJid: ANA, fromMe: true }, type: 14, editedMessage: { conversation: 'fixed' } } };
    expect(sentContentOf(decoded(edit), ANA)).toEqual({ type: 'edit', waMessageId: 'M1', text: 'fixed' });
    expect(sentContentOf(decoded({ editedMessage: { message: edit } }), ANA)).toEqual({ type: 'edit', waMessageId: 'M1', text: 'fixed' });
    expect(sentContentOf(decoded({ protocolMessage: { key: { id: 'M1' }, type: 0 } }), ANA)).toEqual({ type: 'revoke', waMessageId: 'M1' });
    // other protocol messages (history sync, key shares) are not messages of the chat
    expect(sentContentOf(decoded({ protocolMessage: { key: { id: 'M1' }, type: 5 } }), ANA)).toBeNull();
    const forward = { extendedTextMessage: { text: 'look', contextInfo: { isForwarded: true, forwardingScore: 1 } } };
    expect(sentContentOf(decoded(forward), ANA)).toEqual({ type: 'text', text: 'look', forwarded: true, backgroundColor: null });
    expect(sentContentOf(decoded({ conversation: 'plain' }), ANA)).toEqual({ type: 'text', text: 'plain', forwarded: false, backgroundColor: null });
    const vote = { pollUpdateMessage: { pollCreationMessageKey: { id: 'P1', fromMe: true }, vote: { encPayload: Buffer.from([1]), encIv: Buffer.from([2]) } } };
    expect(sentContentOf(decoded(vote), ANA)).toMatchObject({ type: 'pollVote', pollWaMessageId: 'P1' });
  });

  it('an edit and a delete change the original entry as the device protocol does; a forward is marked forwarded', () => {
    const s = scope();
    recordDeviceMessage(s, 'M1', ANA, { type: 'text', text: 'helo', forwarded: false });
    recordDeviceMessage(s, 'E1', ANA, { type: 'edit', waMessageId: 'M1', text: 'hello' });
    recordDeviceMessage(s, 'F1', ANA, { type: 'text', text: 'hello', forwarded: true });
    recordDeviceMessage(s, 'R1', ANA, { type: 'revoke', waMessageId: 'M1' });
    const [original, forwarded, ...rest] = s.network.listMessages('s1');
    expect(rest).toEqual([]);
    expect(original).toMatchObject({ id: 'M1', text: 'helo', edits: [{ text: 'hello', at: expect.any(Number) }], revoked: expect.any(Number), forwarded: false });
    expect(forwarded).toMatchObject({ id: 'F1', text: 'hello', forwarded: true, edits: [], revoked: null });
    // a poll keeps its secret with the front door (for the votes), not on the network's entry
    recordDeviceMessage(s, 'P1', ANA, { type: 'poll', poll: { name: 'Lunch?', options: ['a', 'b'], selectableCount: 1 }, secret: Buffer.alloc(32, 7) });
    expect(s.directory.polls.get('s1 P1')?.secret).toEqual(Buffer.alloc(32, 7));
    expect(s.network.findSent('s1', 'P1')).toMatchObject({ type: 'poll', poll: { name: 'Lunch?', options: ['a', 'b'], selectableCount: 1 } });
    expect(s.network.findSent('s1', 'P1')).not.toHaveProperty('secret');
    // what the network refuses (a deleted message, one it never saw) is refused here too
    expect(() => recordDeviceMessage(s, 'E2', ANA, { type: 'edit', waMessageId: 'M1', text: 'again' })).toThrow(/deleted/);
    expect(() => recordDeviceMessage(s, 'E3', ANA, { type: 'edit', waMessageId: 'NOPE', text: 'x' })).toThrow(/did not send/);
  });
});
