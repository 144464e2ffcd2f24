import { DeviceLink, SimNetwork } from '../sim-network';
import { WaDirectory } from './directory';
import { vcardFor } from '@app/contracts';
import { DeviceMessageScope, recordDeviceMessage, sentContentOf, sentContextOf } from './device-messages';
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

  it('reads a location, a contact card (one, or the first of several) and the reply and mentions any content carries', () => {
    const place = { locationMessage: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Berlin' } };
    expect(sentContentOf(decoded(place), ANA)).toEqual({ type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Berlin', address: null } });
    const vcard = vcardFor({ fullName: 'Ada Lovelace', phoneNumber: '+44 20 7946 0000' });
    const card = { contactMessage: { displayName: 'Ada Lovelace', vcard } };
    expect(sentContentOf(decoded(card), ANA)).toEqual({ type: 'contact', contact: { fullName: 'Ada Lovelace', phoneNumber: '442079460000' } });
    const cards = { contactsArrayMessage: { displayName: '2 contacts', contacts: [{ displayName: 'Ada Lovelace', vcard }, { displayName: 'Other', vcard: 'BEGIN:VCARD\nFN:Other\nEND:VCARD' }] } };
    expect(sentContentOf(decoded(cards), ANA)).toMatchObject({ type: 'contact', contact: { fullName: 'Ada Lovelace' } });

    const reply = { extendedTextMessage: { text: 'as I said', contextInfo: { stanzaId: 'M1', participant: OWN, quotedMessage: { conversation: 'hello' } } } };
    expect(sentContextOf(decoded(reply))).toEqual({ quotedWaMessageId: 'M1', mentions: [] });
    const mention = { extendedTextMessage: { text: 'hi @15550008888', contextInfo: { mentionedJid: ['15550008888@s.whatsapp.net'] } } };
    expect(sentContextOf(decoded(mention))).toEqual({ quotedWaMessageId: null, mentions: ['15550008888@s.whatsapp.net'] });
    // a quote on a location too; messageContextInfo (the message secret) is not a reply's context
    expect(sentContextOf(decoded({ ...place, locationMessage: { ...place.locationMessage, contextInfo: { stanzaId: 'M2' } } })).quotedWaMessageId).toBe('M2');
    expect(sentContextOf(decoded({ conversation: 'plain', messageContextInfo: { messageSecret: Buffer.alloc(32) } }))).toEqual({ quotedWaMessageId: null, mentions: [] });
  });

  it('records the reply and mentions on the network entry, as the sim door does', () => {
    const s = scope();
    recordDeviceMessage(s, 'M1', ANA, { type: 'text', text: 'hello', forwarded: false });
    recordDeviceMessage(s, 'M2', ANA, { type: 'text', text: 'as I said', forwarded: false }, { quotedWaMessageId: 'M1', mentions: ['15550008888@s.whatsapp.net'] });
    recordDeviceMessage(s, 'L1', ANA, { type: 'location', location: { latitude: 1, longitude: 2, name: null, address: null } });
    expect(s.network.findSent('s1', 'M1')).toMatchObject({ quotedWaMessageId: null, mentions: [] });
    expect(s.network.findSent('s1', 'M2')).toMatchObject({ type: 'text', text: 'as I said', quotedWaMessageId: 'M1', mentions: ['15550008888@s.whatsapp.net'] });
    expect(s.network.findSent('s1', 'L1')).toMatchObject({ type: 'location', location: { latitude: 1, longitude: 2 } });
  });
});
