import { Readable } from 'node:stream';
import type { MediaRef } from '@app/contracts';
import { BaileysMediaSource, type DownloadContent } from './baileys-media-source';
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
