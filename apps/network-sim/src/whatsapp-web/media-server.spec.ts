import { hkdfSync } from 'node:crypto';
import { request } from 'node:https';
import { decryptMedia, encryptMedia, MediaIntegrityError } from './media-crypto';
import { MediaHost, uploadToken } from './media-server';
import type { Baileys } from './wa-kit';

/** Baileys' getMediaKeys (HKDF-SHA256, 112 bytes, `WhatsApp <Kind> Keys`): jest cannot load the ESM module itself. */
const KINDS: Record<string, string> = { image: 'Image', document: 'Document', audio: 'Audio', 'md-msg-hist': 'History' };
const baileys = {
  getMediaKeys: async (key: Buffer, type: string) => {
    const expanded = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `WhatsApp ${KINDS[type]} Keys`, 112));
    return { iv: expanded.subarray(0, 16), cipherKey: expanded.subarray(16, 48), macKey: expanded.subarray(48, 80) };
  },
} as unknown as Baileys;

function call(url: string, options: { method: string; ca?: string; body?: Buffer }): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method, ...(options.ca ? { ca: options.ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('media encryption (both ends of a WhatsApp media message)', () => {
  const plain = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31) % 256));

  it('decrypts what it encrypted, and checks both hashes', async () => {
    const enc = await encryptMedia(baileys, plain, 'image');
    expect(enc.file.length).toBe(Math.ceil((plain.length + 1) / 16) * 16 + 10);
    expect(enc.fileLength).toBe(plain.length);
    const back = await decryptMedia(baileys, enc.file, { mediaKey: enc.mediaKey, mediaType: 'image', fileSha256: enc.fileSha256, fileEncSha256: enc.fileEncSha256 });
    expect(back.equals(plain)).toBe(true);
  });

  it('refuses a tampered file, another key or another media type (the mac), and a wrong hash', async () => {
    const enc = await encryptMedia(baileys, plain, 'document');
    const tampered = Buffer.from(enc.file);
    tampered[100] ^= 1;
    await expect(decryptMedia(baileys, tampered, { mediaKey: enc.mediaKey, mediaType: 'document' })).rejects.toThrow(MediaIntegrityError);
    await expect(decryptMedia(baileys, enc.file, { mediaKey: Buffer.alloc(32, 1), mediaType: 'document' })).rejects.toThrow(/mac/);
    await expect(decryptMedia(baileys, enc.file, { mediaKey: enc.mediaKey, mediaType: 'image' })).rejects.toThrow(/mac/);
    await expect(decryptMedia(baileys, enc.file, { mediaKey: enc.mediaKey, mediaType: 'document', fileSha256: Buffer.alloc(32) })).rejects.toThrow(/fileSha256/);
    await expect(decryptMedia(baileys, enc.file, { mediaKey: enc.mediaKey, mediaType: 'document', fileEncSha256: Buffer.alloc(32) })).rejects.toThrow(/fileEncSha256/);
  });
});

describe('MediaHost (the HTTPS host media_conn names)', () => {
  let host: MediaHost;
  beforeAll(async () => {
    host = await MediaHost.start();
  });
  afterAll(() => host.close());

  const authOf = () => host.mediaConn().attrs.auth;

  it('names itself in media_conn: loopback host with its port, an auth and a ttl', () => {
    const conn = host.mediaConn();
    expect(conn).toMatchObject({ tag: 'media_conn', attrs: { ttl: '300' } });
    expect(authOf()).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(conn.content).toEqual([{ tag: 'host', attrs: { hostname: host.hostname, maxContentLengthBytes: expect.any(String) } }]);
    expect(host.hostname).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('takes an upload with its auth and token, answers url and direct_path, and serves the bytes there', async () => {
    const enc = await encryptMedia(baileys, Buffer.from('a picture'), 'image');
    const token = uploadToken(enc.file);
    const res = await call(`https://${host.hostname}/mms/image/${token}?auth=${encodeURIComponent(authOf())}&token=${token}`, { method: 'POST', ca: host.caPem, body: enc.file });
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.body.toString());
    expect(answer.direct_path).toMatch(/^\/v\/t62\.7118-24\/image-[0-9a-f]+\.enc\?/);
    expect(answer.url).toBe(`https://${host.hostname}${answer.direct_path}&mms3=true`);
    const download = await call(`https://${host.hostname}${answer.direct_path}`, { method: 'GET', ca: host.caPem });
    expect(download.status).toBe(200);
    expect(download.body.equals(enc.file)).toBe(true);
    expect(host.get(answer.url)?.equals(enc.file)).toBe(true);
  });

  it('refuses a wrong auth (401) and bytes that do not hash to the token (400); an unknown path is 404', async () => {
    const file = Buffer.from('bytes');
    const token = uploadToken(file);
    const base = `https://${host.hostname}/mms/image/${token}`;
    expect((await call(`${base}?auth=nope&token=${token}`, { method: 'POST', ca: host.caPem, body: file })).status).toBe(401);
    expect((await call(`${base}?auth=${encodeURIComponent(authOf())}`, { method: 'POST', ca: host.caPem, body: Buffer.from('other bytes') })).status).toBe(400);
    expect((await call(`https://${host.hostname}/v/t62.7118-24/nothing.enc`, { method: 'GET', ca: host.caPem })).status).toBe(404);
  });

  it('is reached only by a client that trusts the run\'s CA', async () => {
    await expect(call(`https://${host.hostname}/v/t62.7118-24/nothing.enc`, { method: 'GET' })).rejects.toThrow(/certificate/);
  });
});
