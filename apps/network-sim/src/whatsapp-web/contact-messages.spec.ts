import { callOffer, devicePresence, presenceStanza } from './contact-messages';

const LIAM = '15551110003@s.whatsapp.net';

describe('what a contact\'s phone sends besides messages', () => {
  it('says availability with <presence> and typing with <chatstate> (a group names the member)', () => {
    expect(presenceStanza({ chatJid: LIAM, jid: LIAM, presence: 'unavailable' })).toEqual({ tag: 'presence', attrs: { from: LIAM, type: 'unavailable' } });
    expect(presenceStanza({ chatJid: LIAM, jid: LIAM, presence: 'composing' })).toEqual({ tag: 'chatstate', attrs: { from: LIAM }, content: [{ tag: 'composing', attrs: {} }] });
    expect(presenceStanza({ chatJid: '1-2@g.us', jid: LIAM, presence: 'recording' })).toEqual({
      tag: 'chatstate',
      attrs: { from: '1-2@g.us', participant: LIAM },
      content: [{ tag: 'composing', attrs: { media: 'audio' } }],
    });
    expect(presenceStanza({ chatJid: LIAM, jid: LIAM, presence: 'paused' }).content).toEqual([{ tag: 'paused', attrs: {} }]);
  });

  it('rings with an offer naming the call and its creator; video adds <video>', () => {
    const offer = callOffer('c1', { callId: 'CALL1', from: LIAM, isVideo: true });
    expect(offer.attrs).toMatchObject({ from: LIAM, id: 'c1' });
    const [inner] = offer.content as Array<{ tag: string; attrs: Record<string, string>; content: Array<{ tag: string }> }>;
    expect([inner.tag, inner.attrs, inner.content.map((c) => c.tag)]).toEqual(['offer', { 'call-id': 'CALL1', 'call-creator': LIAM }, ['audio', 'video']]);
  });

  it('reads the device\'s chat states as the network logs them; its own availability is not logged', () => {
    expect(devicePresence({ tag: 'chatstate', attrs: { to: LIAM }, content: [{ tag: 'composing', attrs: {} }] })).toEqual({ chatJid: LIAM, presence: 'composing' });
    expect(devicePresence({ tag: 'chatstate', attrs: { to: LIAM }, content: [{ tag: 'paused', attrs: {} }] })).toEqual({ chatJid: LIAM, presence: 'paused' });
    expect(devicePresence({ tag: 'presence', attrs: { type: 'available', name: 'x' } })).toBeNull();
  });
});
