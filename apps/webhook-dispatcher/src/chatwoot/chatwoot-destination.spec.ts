import type { MessageView } from '@app/contracts';
import { contentOf } from './chatwoot-destination';

const message = (over: Partial<MessageView>): MessageView => ({ type: 'text', text: null, media: null, location: null, contact: null, ...over }) as MessageView;

describe('contentOf: what a Chatwoot agent reads for each WhatsApp message type', () => {
  it('gives a location as its label and a map link, a contact card as name and number', () => {
    expect(contentOf(message({ type: 'location', location: { latitude: 52.52, longitude: 13.4, name: 'Shop', address: 'Main St 1' } }), false)).toBe(
      '📍 Shop, Main St 1 https://maps.google.com/?q=52.52,13.4',
    );
    expect(contentOf(message({ type: 'contact', contact: { fullName: 'Ana', phoneNumber: '+15550001' } }), false)).toBe('👤 Ana +15550001');
  });

  it('gives media its caption, and says so when the media is gone', () => {
    const media = { mimetype: 'image/png', size: 3, filename: null, caption: 'receipt' };
    expect(contentOf(message({ type: 'image', media }), false)).toBe('receipt');
    expect(contentOf(message({ type: 'image', media }), true)).toBe('receipt (the media is no longer available)');
    expect(contentOf(message({ type: 'poll' }), false)).toBe('[poll]');
  });
});
