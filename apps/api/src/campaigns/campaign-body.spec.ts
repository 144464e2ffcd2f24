import { createHash } from 'node:crypto';
import { DomainError } from '@app/contracts';
import { parseCampaignBody } from './campaign-body';
import { CampaignMediaLoader, DEFAULT_MIMETYPE, sniffMimetype } from './campaign-media';

const NOW = 1_800_000_000_000;
const LIMITS = { mediaMaxBytes: 1024 };
const png = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.from('pixels')]);
const recipients = [{ to: '15550001', variables: { name: 'Ana' } }, { to: '15550002', variables: { name: 'Bo' } }];

/** The 422's fields of a body that must be refused. */
function fieldsOf(message: unknown, extra: Record<string, unknown> = {}): Record<string, string[]> {
  try {
    parseCampaignBody({ name: 'c', message, recipients, ...extra }, NOW, LIMITS);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('validation_error');
    return (err as DomainError).details.fields as Record<string, string[]>;
  }
  throw new Error('the body was accepted');
}

describe('a campaign body (CONTRACT 17)', () => {
  describe('media campaigns', () => {
    it('takes an image with a caption template, from base64 or a URL, mimetype and filename optional', () => {
      const b64 = parseCampaignBody({ name: 'img', message: { type: 'image', text: 'Hi {{name}}', media: { base64: png.toString('base64') } }, recipients }, NOW, LIMITS);
      expect(b64.message).toEqual({ type: 'image', text: 'Hi {{name}}', media: null, location: null, contact: null, poll: null });
      expect(b64.media).toEqual({ url: null, base64: png.toString('base64'), mimetype: null, filename: null });
      const url = parseCampaignBody(
        { name: 'doc', message: { type: 'document', media: { url: 'https://example.com/a.pdf', mimetype: 'application/pdf', filename: 'a.pdf' } }, recipients },
        NOW,
        LIMITS,
      );
      expect(url.message).toMatchObject({ type: 'document', text: null });
      expect(url.media).toEqual({ url: 'https://example.com/a.pdf', base64: null, mimetype: 'application/pdf', filename: 'a.pdf' });
    });

    it.each(['image', 'video', 'audio', 'document', 'sticker', 'voice'])('takes type %s', (type) => {
      expect(parseCampaignBody({ name: 'm', message: { type, media: { base64: 'AAAA' } }, recipients }, NOW, LIMITS).message.type).toBe(type);
    });

    it('checks the caption against every recipient at creation, as a text: the 422 names the recipient and the variable', () => {
      let err: DomainError | undefined;
      try {
        parseCampaignBody({ name: 'c', message: { type: 'video', text: 'Hi {{name}} {{code}}', media: { base64: 'AAAA' } }, recipients }, NOW, LIMITS);
      } catch (e) {
        err = e as DomainError;
      }
      expect(err?.details).toMatchObject({ recipient: { index: 0, to: '15550001@s.whatsapp.net' }, variable: 'code' });
    });

    it('refuses a media type without media, with both url and base64, or with neither', () => {
      expect(fieldsOf({ type: 'image', text: 'Hi' })).toEqual({ 'message.media': [expect.stringContaining('required')] });
      expect(fieldsOf({ type: 'image', media: { url: 'https://example.com/a.png', base64: 'AAAA' } })).toEqual({ 'message.media': ['exactly one of media.url and media.base64 is required'] });
      expect(fieldsOf({ type: 'image', media: { mimetype: 'image/png' } })).toEqual({ 'message.media': ['exactly one of media.url and media.base64 is required'] });
    });

    it('refuses a caption on a type that carries none (audio, voice, sticker)', () => {
      for (const type of ['audio', 'voice', 'sticker']) {
        expect(fieldsOf({ type, text: 'Hi {{name}}', media: { base64: 'AAAA' } })).toEqual({ 'message.text': [`a ${type} carries no caption: text is not allowed for type ${type}`] });
      }
    });

    it('refuses base64 larger than MEDIA_MAX_BYTES before decoding it, and malformed base64, URLs, MIME types and file names', () => {
      const big = Buffer.alloc(LIMITS.mediaMaxBytes + 1).toString('base64');
      expect(fieldsOf({ type: 'image', media: { base64: big } })).toEqual({ 'message.media.base64': ['must be at most 1024 bytes'] });
      expect(fieldsOf({ type: 'image', media: { base64: Buffer.alloc(LIMITS.mediaMaxBytes).toString('base64') } }, { name: '' })).not.toHaveProperty('message.media.base64');
      expect(fieldsOf({ type: 'image', media: { base64: 'not base64!' } })).toHaveProperty(['message.media.base64']);
      expect(fieldsOf({ type: 'image', media: { url: 'ftp://example.com/a.png' } })).toHaveProperty(['message.media.url']);
      expect(fieldsOf({ type: 'image', media: { base64: 'AAAA', mimetype: 'png' } })).toHaveProperty(['message.media.mimetype']);
      expect(fieldsOf({ type: 'document', media: { base64: 'AAAA', filename: '../etc/passwd' } })).toHaveProperty(['message.media.filename']);
      expect(fieldsOf({ type: 'image', media: { base64: 'AAAA', caption: 'x' } })).toEqual({ 'message.media.caption': ['property should not exist'] });
    });

    it('refuses media on a text, and a caption longer than 1024', () => {
      expect(fieldsOf({ text: 'Hi', media: { base64: 'AAAA' } })).toEqual({ 'message.media': ['media is not allowed for type text'] });
      expect(fieldsOf({ type: 'image', text: 'x'.repeat(1025), media: { base64: 'AAAA' } })).toHaveProperty(['message.text']);
    });
  });

  it('refuses unknown properties named like Object.prototype\'s own (valueOf, __proto__) as any other, by name (a fuzz case)', () => {
    const fields = fieldsOf({ text: 'Hi' }, JSON.parse('{"valueOf": 1, "constructor": null, "__proto__": {"x": 1}}'));
    expect(fields).toEqual({ valueOf: ['property should not exist'], constructor: ['property should not exist'], ['__proto__']: ['property should not exist'] });
    expect(Object.keys(fields)).toEqual(['valueOf', 'constructor', '__proto__']);
  });

  it('still takes a text template', () => {
    expect(parseCampaignBody({ name: 't', message: { text: 'Hi {{name}}' }, recipients }, NOW, LIMITS)).toMatchObject({ message: { type: 'text', text: 'Hi {{name}}', media: null }, media: null });
  });
});

describe('a media campaign\'s file (CampaignMediaLoader)', () => {
  const fetcher = (answer: () => Promise<Buffer>) => ({ fetch: jest.fn(answer) });

  it('describes the bytes once: size, sha256, the given MIME type, else the one the bytes show, else the type\'s default', async () => {
    const loader = new CampaignMediaLoader(fetcher(async () => png));
    const fromUrl = await loader.load('image', { url: 'https://example.com/a', base64: null, mimetype: null, filename: null });
    expect(fromUrl.bytes.equals(png)).toBe(true);
    expect(fromUrl.media).toEqual({ mimetype: 'image/png', size: png.length, filename: null, sha256: createHash('sha256').update(png).digest('hex') });
    const given = await loader.load('document', { url: null, base64: png.toString('base64'), mimetype: 'application/x-custom', filename: 'f.bin' });
    expect(given.media).toMatchObject({ mimetype: 'application/x-custom', filename: 'f.bin', size: png.length });
    const unknown = await loader.load('video', { url: null, base64: Buffer.from('????').toString('base64'), mimetype: null, filename: null });
    expect(unknown.media.mimetype).toBe(DEFAULT_MIMETYPE.video);
  });

  it('names message.media.url in the fetcher\'s refusals, a file too large a 422 too', async () => {
    const refused = new DomainError('validation_error', 'media could not be fetched: not allowed', { fields: { 'media.url': ["the media URL's target is not allowed"] } });
    await expect(new CampaignMediaLoader(fetcher(async () => Promise.reject(refused))).load('image', { url: 'http://127.0.0.1/a', base64: null, mimetype: null, filename: null }))
      .rejects.toMatchObject({ code: 'validation_error', details: { fields: { 'message.media.url': ["the media URL's target is not allowed"] } } });
    const large = new DomainError('payload_too_large', 'media is larger than 10 bytes', { fields: { 'media.url': ['must be at most 10 bytes'] }, maxBytes: 10 });
    await expect(new CampaignMediaLoader(fetcher(async () => Promise.reject(large))).load('image', { url: 'https://example.com/a', base64: null, mimetype: null, filename: null }))
      .rejects.toMatchObject({ code: 'validation_error', details: { fields: { 'message.media.url': ['must be at most 10 bytes'] }, maxBytes: 10 } });
  });

  it('recognises the common formats by their first bytes', () => {
    expect(sniffMimetype(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffMimetype(png)).toBe('image/png');
    expect(sniffMimetype(Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'))).toBe('image/webp');
    expect(sniffMimetype(Buffer.from('%PDF-1.7', 'latin1'))).toBe('application/pdf');
    expect(sniffMimetype(Buffer.from('OggS\0\x02\0\0\0\0\0\0\0\0OpusHead', 'latin1'))).toBe('audio/ogg; codecs=opus');
    expect(sniffMimetype(Buffer.from('\0\0\0\x20ftypisom', 'latin1'))).toBe('video/mp4');
    expect(sniffMimetype(Buffer.from('\0\0\0\x20ftypM4A ', 'latin1'))).toBe('audio/mp4');
    expect(sniffMimetype(Buffer.from('ID3\x03', 'latin1'))).toBe('audio/mpeg');
    expect(sniffMimetype(Buffer.from('plain text'))).toBeNull();
  });
});
