import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { CertificateRoot, trustWhatsAppEmulator } from './whatsapp-emulator';

describe('trustWhatsAppEmulator (the WHATSAPP_EMULATOR_URL test seam)', () => {
  let server: Server;
  let url: string;
  let answer: { status: number; body: unknown };

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url !== '/sim/whatsapp-web/trust') return void res.writeHead(404).end();
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const freshRoot = (): CertificateRoot => ({ PUBLIC_KEY: Buffer.alloc(32, 7), SERIAL: 0 });

  it('makes the certificate root the emulator names trusted and names the session in each socket URL', async () => {
    const key = Buffer.alloc(32, 9);
    answer = { status: 200, body: { rootPublicKey: key.toString('base64'), serial: 4242 } };
    const root = freshRoot();
    const emulator = await trustWhatsAppEmulator(url, root, () => undefined);
    expect(root.PUBLIC_KEY.equals(key)).toBe(true);
    expect(root.SERIAL).toBe(4242);
    expect(emulator.socketUrl('sess_1')).toBe(`${url.replace('http:', 'ws:')}/ws/chat?sessionId=sess_1`);
    expect(emulator.socketUrl('a b&c')).toBe(`${url.replace('http:', 'ws:')}/ws/chat?sessionId=a+b%26c`);
  });

  it('trusts the media host CA the emulator hands out, and refuses one that is not a CA certificate', async () => {
    const ca = await generate([{ name: 'commonName', value: 'Media CA' }], {
      keyType: 'ec',
      curve: 'P-256',
      extensions: [{ name: 'basicConstraints', cA: true, critical: true }],
    });
    const key = Buffer.alloc(32, 3).toString('base64');
    answer = { status: 200, body: { rootPublicKey: key, serial: 7, mediaCa: ca.cert } };
    const trusted: string[] = [];
    const emulator = await trustWhatsAppEmulator(url, freshRoot(), (pem) => trusted.push(pem));
    expect(trusted).toEqual([ca.cert]);
    expect(emulator.trust.mediaCa).toBe(ca.cert);

    answer = { status: 200, body: { rootPublicKey: key, serial: 7, mediaCa: 'not a certificate' } };
    const root = freshRoot();
    await expect(trustWhatsAppEmulator(url, root, (pem) => trusted.push(pem))).rejects.toThrow(/mediaCa/);
    expect(trusted).toHaveLength(1);
    expect(root).toEqual(freshRoot());
  });

  it.each([
    ['a short key', { rootPublicKey: Buffer.alloc(8).toString('base64'), serial: 1 }],
    ['no serial', { rootPublicKey: Buffer.alloc(32).toString('base64') }],
    ['not an object', 'hello'],
  ])('refuses an answer with %s and leaves the root alone', async (_what, body) => {
    answer = { status: 200, body };
    const root = freshRoot();
    await expect(trustWhatsAppEmulator(url, root)).rejects.toThrow(/trust anchor/);
    expect(root).toEqual(freshRoot());
  });

  it('fails at boot when the emulator answers an error or cannot be reached', async () => {
    answer = { status: 500, body: {} };
    await expect(trustWhatsAppEmulator(url, freshRoot())).rejects.toThrow(/WHATSAPP_EMULATOR_URL: .*status 500/);
    await expect(trustWhatsAppEmulator('http://127.0.0.1:1', freshRoot())).rejects.toThrow(/WHATSAPP_EMULATOR_URL: cannot fetch/);
  });
});
