import { Readable } from 'node:stream';
import type { MediaRef } from '@app/contracts';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { request } from 'undici';
import { SIM_WA_WEB_TRUST_PATH } from '@app/contracts';
import { BaileysMediaSource, emulatorMediaDispatcher, type DownloadContent } from './baileys-media-source';
import { MediaUnavailableError } from './media-source';

const REF: MediaRef = { engine: 'baileys', mediaType: 'document', directPath: '/v/t62.7119-24/abc?ccb=11', mediaKey: Buffer.from('the media key').toString('base64'), url: 'https://mmg.whatsapp.net/v/abc' };

/** Baileys rejects CDN failures with a Boom error carrying the HTTP status. */
function boom(statusCode: number): Error {
  return Object.assign(new Error(`Failed to fetch stream from https://mmg.whatsapp.net/v/abc`), { isBoom: true, output: { statusCode } });
}

async function text(stream: Readable): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk.toString();
  return out;
}

describe('BaileysMediaSource', () => {
  it("streams what Baileys' downloadContentFromMessage yields, handing it the decoded key, path, url and media type", async () => {
    const calls: Parameters<DownloadContent>[] = [];
    const source = new BaileysMediaSource(async (media, type) => {
      calls.push([media, type]);
      return Readable.from([Buffer.from('decrypted '), Buffer.from('bytes')]);
    });
    await expect(source.open(REF).then(text)).resolves.toBe('decrypted bytes');
    expect(calls).toEqual([[{ mediaKey: Buffer.from('the media key'), directPath: '/v/t62.7119-24/abc?ccb=11', url: 'https://mmg.whatsapp.net/v/abc' }, 'document']]);
  });

  it.each([404, 410])('media the CDN answers %i for is unavailable', async (status) => {
    const source = new BaileysMediaSource(async () => {
      throw boom(status);
    });
    const opening = source.open(REF);
    await expect(opening).rejects.toBeInstanceOf(MediaUnavailableError);
    await expect(opening).rejects.toThrow(`WhatsApp no longer has this document (HTTP ${status})`);
  });

  it('other failures (network, 5xx) are passed on as they are, to be retried', async () => {
    const source = new BaileysMediaSource(async () => {
      throw boom(503);
    });
    await expect(source.open(REF)).rejects.toThrow('Failed to fetch stream');
    await expect(source.open(REF)).rejects.not.toBeInstanceOf(MediaUnavailableError);
  });

  it("refuses the simulator's media", async () => {
    const source = new BaileysMediaSource(async () => Readable.from([]));
    await expect(source.open({ engine: 'sim', mediaId: 'm1' })).rejects.toThrow('BaileysMediaSource cannot open sim media');
  });
});

describe('emulatorMediaDispatcher (the test seam: the emulator\'s media CA beside the system roots)', () => {
  const servers: Server[] = [];
  const listen = async (server: Server) => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  /** an HTTP server answering `GET /sim/whatsapp-web/trust` with `trust` */
  const trustServer = (trust: object) =>
    listen(createHttpServer((req, res) => res.writeHead(req.url === SIM_WA_WEB_TRUST_PATH ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(trust))));
  afterAll(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))));

  it('verifies the media host against the CA the emulator names; without it the host is refused', async () => {
    const ca = await generate([{ name: 'commonName', value: 'test media CA' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, critical: true },
      ],
    });
    const leaf = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      ca: { key: ca.private, cert: ca.cert },
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    });
    const host = await listen(createHttpsServer({ key: leaf.private, cert: leaf.cert }, (_req, res) => res.end('encrypted bytes')));
    const dispatcher = await emulatorMediaDispatcher(`http://${await trustServer({ mediaCa: ca.cert })}`);
    const res = await request(`https://${host}/v/file`, { dispatcher });
    expect(await res.body.text()).toBe('encrypted bytes');
    await expect(request(`https://${host}/v/file`)).rejects.toThrow(/certificate/);
  });

  it('an emulator that names no media CA is an error (the download fails, nothing is trusted)', async () => {
    await expect(emulatorMediaDispatcher(`http://${await trustServer({ rootPublicKey: 'x' })}`)).rejects.toThrow('named no media CA');
  });
});
