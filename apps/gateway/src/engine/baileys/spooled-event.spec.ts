import type { EngineEvent } from '../engine.interface';
import { decodeSpooledEvent, encodeSpooledEvent } from './spooled-event';

const raw = new Uint8Array([0, 1, 2, 250, 255, 10, 34, 92]);

/** One of every kind of event the spool keeps, with the values JSON does not carry as they are (bytes, nulls, unicode). */
const events: EngineEvent[] = [
  {
    type: 'message',
    message: {
      id: '3EB0AAA', from: '15550001111@s.whatsapp.net', chatJid: '120363000000000001@g.us', text: null, timestamp: 1_700_000_000_000, fromMe: false,
      type: 'image',
      media: {
        mimetype: 'image/jpeg', size: 52_311, filename: null, caption: 'ünïcødé 🎉 "quoted" \\ back',
        ref: { engine: 'baileys', mediaType: 'image', directPath: '/v/t62.7118-24/1_2?ccb=11-4', mediaKey: 'q83vEjRWeJA=', url: null },
      },
      location: null, contact: null, poll: null, quotedWaMessageId: 'Q1', mentions: ['15550002222@s.whatsapp.net'],
      // proto.Message.encode(...).finish() is a Buffer in Node
      raw: Buffer.from(raw),
    },
  },
  { type: 'message', message: { id: 'B', from: 'a@s.whatsapp.net', chatJid: 'a@s.whatsapp.net', text: 'plain', timestamp: 1, fromMe: true, raw: Buffer.from('proto#0') } },
  { type: 'receipt', waMessageId: 'OUT1', chatJid: 'a@s.whatsapp.net', status: 'read' },
  { type: 'reaction', waMessageId: 'OUT1', chatJid: 'a@s.whatsapp.net', from: 'b@s.whatsapp.net', emoji: '', fromMe: false },
  { type: 'poll-vote', pollWaMessageId: 'P1', chatJid: 'g@g.us', voter: 'b@s.whatsapp.net', selectedOptions: [] },
  { type: 'group-participants', groupJid: 'g@g.us', action: 'add', participants: ['b@s.whatsapp.net'], network: [{ id: '1@lid', phoneNumber: 'b@s.whatsapp.net', admin: null }] },
  { type: 'group-update', groupJid: 'g@g.us', changes: { subject: 'x', isAnnounce: false }, network: { addressingMode: 'lid', participants: [] } },
  { type: 'call', callId: 'C1', from: 'b@s.whatsapp.net', isVideo: true, isGroup: false },
];

describe('spooled engine events', () => {
  it.each(events.map((e) => [e.type, e] as const))('a %s event comes back exactly as it was spooled', (_type, event) => {
    const { origin, seq, event: back } = decodeSpooledEvent(encodeSpooledEvent('conn-1', 7, event));
    expect({ origin, seq }).toEqual({ origin: 'conn-1', seq: 7 });
    // strict: same classes (raw a Buffer, as protobuf's encode gives it in Node), same keys, same values
    expect(back).toStrictEqual(event);
  });

  it('keeps a plain Uint8Array byte for byte, as bytes', () => {
    const plain: EngineEvent = { type: 'message', message: { id: 'U', from: 'a@s.whatsapp.net', chatJid: 'a@s.whatsapp.net', text: 'x', timestamp: 1, fromMe: false, raw } };
    const { event } = decodeSpooledEvent(encodeSpooledEvent('c', 1, plain));
    const back = (event as Extract<EngineEvent, { type: 'message' }>).message.raw!;
    expect(back).toBeInstanceOf(Uint8Array);
    expect([...back]).toEqual([...raw]);
  });

  it('refuses what is not a spooled event of this version', () => {
    expect(() => decodeSpooledEvent('{"v":2,"origin":"c","seq":1,"event":{"type":"receipt"}}')).toThrow('not a spooled engine event of version 1');
    expect(() => decodeSpooledEvent('{"v":1,"origin":"c","event":{"type":"receipt"}}')).toThrow('not a spooled engine event');
    expect(() => decodeSpooledEvent('{"event":{}}')).toThrow('not a spooled engine event');
    expect(() => decodeSpooledEvent('not json')).toThrow();
  });
});
