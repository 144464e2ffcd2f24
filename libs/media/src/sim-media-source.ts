import type { Readable } from 'node:stream';
import { SIM_MEDIA_PATH, type MediaRef } from '@app/contracts';
import { request } from 'undici';
import { MediaSource, MediaUnavailableError } from './media-source';

/** Media of the `sim` engine: the network simulator serves the bytes it holds at `GET /sim/media/{mediaId}`. */
export class SimMediaSource implements MediaSource {
  constructor(private readonly simUrl: string) {}

  async open(ref: MediaRef): Promise<Readable> {
    if (ref.engine !== 'sim') throw new Error(`SimMediaSource cannot open ${ref.engine} media`);
    const url = new URL(`${SIM_MEDIA_PATH.slice(1)}/${encodeURIComponent(ref.mediaId)}`, this.simUrl.replace(/\/?$/, '/'));
    const { statusCode, body } = await request(url);
    if (statusCode === 200) return body;
    // the body is not what the caller wants; read it off so the connection goes back to the pool
    await body.dump();
    if (statusCode === 404) throw new MediaUnavailableError(`the network simulator has no media ${ref.mediaId}`);
    throw new Error(`the network simulator answered ${statusCode} for media ${ref.mediaId}`);
  }
}
