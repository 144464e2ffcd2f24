import type { Readable } from 'node:stream';
import type { MediaRef } from '@app/contracts';
import { MediaSource, MediaUnavailableError } from '@app/media';

/** DI token of the MediaSource the API streams inbound media through. */
export const MEDIA_SOURCE = Symbol('MEDIA_SOURCE');

/** Picks the engine's own MediaSource by `ref.engine`; an engine without one has no media to give. */
export class MediaSourceByEngine implements MediaSource {
  constructor(private readonly sources: Partial<Record<MediaRef['engine'], MediaSource>>) {}

  async open(ref: MediaRef): Promise<Readable> {
    const source = this.sources[ref.engine];
    if (!source) throw new MediaUnavailableError(`no media source for engine ${ref.engine}`);
    return source.open(ref);
  }
}
