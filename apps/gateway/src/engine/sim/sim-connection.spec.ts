import type { OutboundMessage, SimInboundMessage } from '@app/contracts';
import { encodeRaw, toEngineEvent, toSendArgs } from './sim-connection';

const to = '15550001111@s.whatsapp.net';

describe('sim engine wire mapping', () => {
  it('sends the whole OutboundMessage, media bytes as base64 and the quoted raw content as base64', () => {
    const message: OutboundMessage = {
      waMessageId: '3EB0AA',
      to,
      content: { type: 'document', media: { data: Buffer.from('%PDF-1.7'), mimetype: 'application/pdf', filename: 'a.pdf' }, caption: 'doc' },
      quoted: { waMessageId: '3EB0BB', chatJid: to, fromMe: false, participant: null, raw: Buffer.from('{"t":1}') },
      mentions: ['15550002222@s.whatsapp.net'],
    };
    expect(toSendArgs(message)).toEqual({
      waMessageId: '3EB0AA',
      to,
      content: { type: 'document', media: { data: Buffer.from('%PDF-1.7').toString('base64'), mimetype: 'application/pdf', filename: 'a.pdf' }, caption: 'doc' },
      quoted: { waMessageId: '3EB0BB', chatJid: to, fromMe: false, participant: null, raw: Buffer.from('{"t":1}').toString('base64') },
      mentions: ['15550002222@s.whatsapp.net'],
    });
    const audio = toSendArgs({ ...message, content: { type: 'audio', media: { data: Buffer.from([1, 2]), mimetype: 'audio/ogg', filename: null } } });
    expect(audio.content).toEqual({ type: 'audio', media: { data: 'AQI=', mimetype: 'audio/ogg', filename: null } });
  });

  it('keeps raw small: media described by size, not copied', () => {
    const raw = encodeRaw({ type: 'image', media: { data: Buffer.alloc(100_000), mimetype: 'image/png', filename: null }, caption: 'x' });
    expect(JSON.parse(Buffer.from(raw).toString('utf8'))).toEqual({ type: 'image', media: { mimetype: 'image/png', filename: null, size: 100_000 }, caption: 'x' });
  });

  it('maps a network message to an InboundMessage with a sim MediaRef', () => {
    const message: SimInboundMessage = {
      id: '3EB0CC',
      from: to,
      chatJid: '120363000000000001@g.us',
      type: 'image',
      text: 'cap',
      media: { mediaId: 'm1', mimetype: 'image/jpeg', size: 10, filename: null, caption: 'cap', sha256: 'ab' },
      location: null,
      contact: null,
      quotedWaMessageId: '3EB0DD',
      mentions: [],
      timestamp: 5,
    };
    const event = toEngineEvent({ type: 'message', message });
    expect(event).toEqual({
      type: 'message',
      message: {
        id: '3EB0CC',
        from: to,
        chatJid: '120363000000000001@g.us',
        text: 'cap',
        timestamp: 5,
        fromMe: false,
        type: 'image',
        media: { mimetype: 'image/jpeg', size: 10, filename: null, caption: 'cap', ref: { engine: 'sim', mediaId: 'm1' } },
        location: null,
        contact: null,
        poll: null,
        quotedWaMessageId: '3EB0DD',
        mentions: [],
        raw: expect.any(Uint8Array),
      },
    });
  });

  it('marks reactions from the network as not our own', () => {
    expect(toEngineEvent({ type: 'reaction', waMessageId: 'A', chatJid: to, from: to, emoji: '' })).toEqual({
      type: 'reaction',
      waMessageId: 'A',
      chatJid: to,
      from: to,
      emoji: '',
      fromMe: false,
    });
  });
});
