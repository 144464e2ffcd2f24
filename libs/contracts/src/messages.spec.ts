import { MEDIA_MESSAGE_TYPES, mediaContent } from './messages';

describe('mediaContent (the one place that says which media types carry a caption)', () => {
  const media = { data: 'AAEC', mimetype: 'application/octet-stream', filename: null };

  it.each([['image'], ['video'], ['document']] as const)('%s keeps its caption, even a null one', (type) => {
    expect(mediaContent(type, media, 'hello')).toEqual({ type, media, caption: 'hello' });
    expect(mediaContent(type, media, null)).toEqual({ type, media, caption: null });
  });

  it.each([['audio'], ['voice'], ['sticker']] as const)('%s has no caption field at all', (type) => {
    const content = mediaContent(type, media, 'dropped');
    expect(content).toEqual({ type, media });
    expect('caption' in content).toBe(false);
  });

  it('every media type is one of the two', () => {
    const captioned = MEDIA_MESSAGE_TYPES.filter((type) => 'caption' in mediaContent(type, media, null));
    expect(captioned).toEqual(['image', 'video', 'document']);
  });
});
