import type { SignalContact } from './signal-party';
import { backgroundOf, isStatusJid, statusAudience, statusMessage } from './statuses';

describe('statuses on the WhatsApp Web front door', () => {
  it('reads the background Baileys writes (#rrggbb with an opaque alpha) and writes a contact\'s the same way', () => {
    // Baileys' assertColor('#1f6feb') = 0xff1f6feb
    expect(backgroundOf(0xff1f6feb)).toBe('#1f6feb');
    expect(backgroundOf(0xff000001)).toBe('#000001');
    expect(backgroundOf(undefined)).toBeNull();
    expect(backgroundOf(0)).toBeNull();
    const sealed = statusMessage({ id: 'S1', from: '15550001111@s.whatsapp.net', type: 'text', text: 'hi', media: null, backgroundColor: '#ff8800', timestamp: 1 });
    expect(sealed).toEqual({ extendedTextMessage: { text: 'hi', backgroundArgb: 0xffff8800 } });
    expect(backgroundOf(sealed!.extendedTextMessage.backgroundArgb)).toBe('#ff8800');
    expect(statusMessage({ id: 'S2', from: '15550001111@s.whatsapp.net', type: 'text', text: 'plain', media: null, backgroundColor: null, timestamp: 1 })).toEqual({ extendedTextMessage: { text: 'plain' } });
  });

  it('carries only kinds without media (an image status waits for the media host)', () => {
    expect(statusMessage({ id: 'S3', from: '15550001111@s.whatsapp.net', type: 'image', text: 'caption', media: null, backgroundColor: null, timestamp: 1 })).toBeNull();
  });

  it('the audience of a status is the accounts of its copies (a device jid once per account; unknown jids left out)', () => {
    const contacts: Record<string, string> = { '15550002222@s.whatsapp.net': '15550002222@s.whatsapp.net', '15550002222:3@s.whatsapp.net': '15550002222@s.whatsapp.net', '15550003333@s.whatsapp.net': '15550003333@s.whatsapp.net' };
    const contact = (jid: string) => (contacts[jid] ? ({ jid: contacts[jid] } as SignalContact) : null);
    const copies = ['15550002222@s.whatsapp.net', '15550002222:3@s.whatsapp.net', 'x@broadcast', '15550003333@s.whatsapp.net'].map((jid) => ({ tag: 'to', attrs: { jid } }));
    expect(statusAudience(copies, contact)).toEqual(['15550002222@s.whatsapp.net', '15550003333@s.whatsapp.net']);
    expect(isStatusJid('status@broadcast')).toBe(true);
    expect(isStatusJid('1-2@g.us')).toBe(false);
  });
});
