import { contactFromVcard, type SimInboundMessage } from '@app/contracts';
import { callOffer, contactContentOf, contactEdit, contactRevoke, deviceChatState, devicePresenceRequest, presenceStanza, stanzaTypeOf } from './contact-messages';

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

  it('reads the device\'s chat states as the network logs them (recording is composing audio)', () => {
    expect(deviceChatState({ tag: 'chatstate', attrs: { to: LIAM }, content: [{ tag: 'composing', attrs: {} }] })).toEqual({ chatJid: LIAM, presence: 'composing' });
    expect(deviceChatState({ tag: 'chatstate', attrs: { to: LIAM }, content: [{ tag: 'composing', attrs: { media: 'audio' } }] })).toEqual({ chatJid: LIAM, presence: 'recording' });
    expect(deviceChatState({ tag: 'chatstate', attrs: { to: LIAM }, content: [{ tag: 'paused', attrs: {} }] })).toEqual({ chatJid: LIAM, presence: 'paused' });
    expect(deviceChatState({ tag: 'presence', attrs: { type: 'available', name: 'x' } })).toBeNull();
  });

  it('reads the device\'s <presence>: its account online or offline, or a subscription to a contact', () => {
    expect(devicePresenceRequest({ tag: 'presence', attrs: { type: 'available', name: 'Ann' } })).toEqual({ kind: 'account', presence: 'available' });
    expect(devicePresenceRequest({ tag: 'presence', attrs: { type: 'unavailable', name: 'Ann' } })).toEqual({ kind: 'account', presence: 'unavailable' });
    expect(devicePresenceRequest({ tag: 'presence', attrs: { type: 'subscribe', to: LIAM, id: '1' } })).toEqual({ kind: 'subscribe', jid: LIAM });
    expect(devicePresenceRequest({ tag: 'presence', attrs: { type: 'subscribe' } })).toBeNull();
  });

  it('edits and deletes a contact\'s own message as its phone names it: fromMe, in the chat with the account or the group', () => {
    const ACCOUNT = '15551110000@s.whatsapp.net';
    const edit = contactEdit({ waMessageId: 'M1', chatJid: LIAM, text: 'fixed' }, ACCOUNT);
    expect(edit.editedMessage?.message?.protocolMessage).toMatchObject({ key: { id: 'M1', remoteJid: ACCOUNT, fromMe: true }, type: 14, editedMessage: { conversation: 'fixed' } });
    expect(contactRevoke({ waMessageId: 'M2', chatJid: '1-2@g.us' }, ACCOUNT).protocolMessage).toEqual({ key: { id: 'M2', remoteJid: '1-2@g.us', fromMe: true }, type: 0 });
  });

  describe('a contact\'s text, location and card, as its phone writes them', () => {
    const OWN = '15551110000@s.whatsapp.net';
    const inbound = (m: Partial<SimInboundMessage>): SimInboundMessage => ({
      id: 'I1', from: LIAM, chatJid: LIAM, type: 'text', text: null, media: null, location: null, contact: null, quotedWaMessageId: null, mentions: [], timestamp: 0, ...m,
    });

    it('a plain text is `conversation`; a reply or a mention makes it an extendedTextMessage with contextInfo', () => {
      expect(contactContentOf(inbound({ text: 'hi' }), null)).toEqual({ conversation: 'hi' });
      const reply = contactContentOf(inbound({ text: 'replying', quotedWaMessageId: 'M1' }), { waMessageId: 'M1', author: OWN, text: 'our text' });
      expect(reply).toEqual({ extendedTextMessage: { text: 'replying', contextInfo: { stanzaId: 'M1', participant: OWN, quotedMessage: { conversation: 'our text' } } } });
      const mention = contactContentOf(inbound({ text: 'hi @1555', mentions: ['15550001234@s.whatsapp.net'] }), null);
      expect(mention).toEqual({ extendedTextMessage: { text: 'hi @1555', contextInfo: { mentionedJid: ['15550001234@s.whatsapp.net'] } } });
      expect(stanzaTypeOf(reply!)).toBe('text');
    });

    it('a location is a locationMessage; a card a contactMessage (stanza type media) whose vCard reads back', () => {
      const place = contactContentOf(inbound({ type: 'location', location: { latitude: -33.86, longitude: 151.21, name: 'Sydney', address: null } }), null);
      expect(place).toEqual({ locationMessage: { degreesLatitude: -33.86, degreesLongitude: 151.21, name: 'Sydney' } });
      expect(stanzaTypeOf(place!)).toBe('text');
      const card = contactContentOf(inbound({ type: 'contact', contact: { fullName: 'Grace Hopper', phoneNumber: '15550003030' } }), null);
      expect(card?.contactMessage?.displayName).toBe('Grace Hopper');
      expect(contactFromVcard(card?.contactMessage?.vcard, null)).toEqual({ fullName: 'Grace Hopper', phoneNumber: '15550003030' });
      expect(stanzaTypeOf(card!)).toBe('media');
      // media is media-messages.ts'
      expect(contactContentOf(inbound({ type: 'image', text: 'caption' }), null)).toBeNull();
    });
  });
});
