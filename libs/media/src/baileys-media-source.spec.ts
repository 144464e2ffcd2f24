import { Readable } from 'node:stream';
import type { MediaRef } from '@app/contracts';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { request } from 'undici';
import { SIM_WA_WEB_TRUST_PATH } from '@app/contracts';
import { createServer as createTcpServer } from 'node:net';
import { BaileysMediaSource, emulatorMediaHost, mediaDispatcher, type DownloadContent } from './baileys-media-source';
import { MediaUnavailableError } from './media-source';
import { MediaReferenceRefusedError } from './whatsapp-media-host';

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

/** What Baileys does with the host it is handed: `https://<host><directPath>`, through the dispatcher. */
const fetchLikeBaileys: DownloadContent = async (media, _type, { host, dispatcher }) => {
  const res = await request(`https://${host}${media.directPath}`, { dispatcher });
  return Readable.from([Buffer.from(await res.body.arrayBuffer())]);
};

describe('BaileysMediaSource', () => {
  it("streams what Baileys' downloadContentFromMessage yields, handing it the decoded key, the path, the host and the guarded client", async () => {
    const calls: Array<[unknown, string, string]> = [];
    const source = new BaileysMediaSource(async (media, type, via) => {
      calls.push([media, type, via.host]);
      expect(via.dispatcher).toBeDefined();
      return Readable.from([Buffer.from('decrypted '), Buffer.from('bytes')]);
    });
    await expect(source.open(REF).then(text)).resolves.toBe('decrypted bytes');
    // a url on another WhatsApp edge picks that edge; none: the default host
    await source.open({ ...REF, url: 'https://media-fra3-1.cdn.whatsapp.net/v/abc?x=1' });
    await source.open({ ...REF, url: null });
    expect(calls).toEqual([
      [{ mediaKey: Buffer.from('the media key'), directPath: '/v/t62.7119-24/abc?ccb=11' }, 'document', 'mmg.whatsapp.net'],
      [expect.anything(), 'document', 'media-fra3-1.cdn.whatsapp.net'],
      [expect.anything(), 'document', 'mmg.whatsapp.net'],
    ]);
  });

  describe('a reference a contact crafted (issue 37)', () => {
    let port = 0;
    let connections = 0;
    const listener = createTcpServer((socket) => ((connections += 1), socket.destroy()));
    beforeAll(() => new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => ((port = (listener.address() as AddressInfo).port), resolve()))));
    afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

    it('is refused with a clear error before any connection, whatever part of it aims inward', async () => {
      const crafted: Array<[Partial<MediaRef>, RegExp]> = [
        [{ url: `https://127.0.0.1:${port}/v/abc` }, /url names https:\/\/127\.0\.0\.1:\d+, which is not a WhatsApp media host/],
        [{ url: `https://mmg.whatsapp.net:${port}/v/abc` }, /not a WhatsApp media host/],
        [{ url: 'https://mmg.whatsapp.net.evil.example/v/abc' }, /not a WhatsApp media host/],
        [{ url: `https://mmg.whatsapp.net@127.0.0.1:${port}/v/abc` }, /not a WhatsApp media host/],
        [{ url: 'http://mmg.whatsapp.net/v/abc' }, /not a WhatsApp media host/],
        [{ url: 'not a url' }, /url is not a URL/],
        [{ directPath: `@127.0.0.1:${port}/v/abc`, url: null }, /directPath "@127\.0\.0\.1:\d+\/v\/abc" is not a path/],
        [{ directPath: `.evil.example/v/abc`, url: null }, /is not a path/],
        [{ directPath: '/v/abc\r\nHost: x', url: null }, /is not a path/],
      ];
      let downloads = 0;
      const source = new BaileysMediaSource(async (...args) => ((downloads += 1), fetchLikeBaileys(...args)));
      for (const [change, message] of crafted) {
        const opening = source.open({ ...REF, ...change } as MediaRef);
        await expect(opening).rejects.toBeInstanceOf(MediaReferenceRefusedError);
        await expect(opening).rejects.toThrow(message);
      }
      expect(downloads).toBe(0);
      expect(connections).toBe(0);
    });

    it('the download client itself refuses loopback, private and metadata addresses (a WhatsApp name rebound inward)', async () => {
      const dispatcher = mediaDispatcher(null);
      for (const host of [`127.0.0.1:${port}`, `[::ffff:7f00:1]:${port}`, `localhost:${port}`, '169.254.169.254']) {
        await expect(request(`https://${host}/v/abc`, { dispatcher })).rejects.toThrow(/target (address|host) .* is (loopback|metadata|a loopback name)/);
      }
      expect(connections).toBe(0);
    });
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

describe("the test seam: the emulator's media host, verified against its CA, is the only host", () => {
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

  it('downloads from the host the emulator names, trusting its CA; another host is refused', async () => {
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
    const paths: string[] = [];
    const host = await listen(createHttpsServer({ key: leaf.private, cert: leaf.cert }, (req, res) => (paths.push(req.url!), res.end('encrypted bytes'))));
    const emulatorUrl = `http://${await trustServer({ mediaCa: ca.cert, mediaHost: host })}`;
    expect(await emulatorMediaHost(emulatorUrl)).toEqual({ host, ca: ca.cert });
    const source = new BaileysMediaSource(fetchLikeBaileys, { emulatorUrl });
    await expect(source.open({ ...REF, url: null }).then(text)).resolves.toBe('encrypted bytes');
    await expect(source.open({ ...REF, url: `https://${host}/v/abc` }).then(text)).resolves.toBe('encrypted bytes');
    expect(paths).toEqual(['/v/t62.7119-24/abc?ccb=11', '/v/t62.7119-24/abc?ccb=11']);
    await expect(source.open(REF)).rejects.toThrow('its url names https://mmg.whatsapp.net, which is not a WhatsApp media host');
    // the CA is trusted by the media client only
    await expect(request(`https://${host}/v/file`)).rejects.toThrow(/certificate/);
  });

  it('an emulator that names no media CA or no media host is an error (the download fails, nothing is trusted)', async () => {
    await expect(emulatorMediaHost(`http://${await trustServer({ rootPublicKey: 'x' })}`)).rejects.toThrow('named no media CA');
    await expect(emulatorMediaHost(`http://${await trustServer({ mediaCa: '-----BEGIN CERTIFICATE-----' })}`)).rejects.toThrow('named no media host');
  });
});
