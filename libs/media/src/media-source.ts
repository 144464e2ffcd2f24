import type { Readable } from 'node:stream';
import type { MediaRef } from '@app/contracts';

/**
 * Streams the bytes of an inbound message's media from the network, decrypted, never held whole in memory.
 * One implementation per engine (the MediaRef says which); the API pipes the stream to the client.
 */
export interface MediaSource {
  open(ref: MediaRef): Promise<Readable>;
}

/** Thrown when the network no longer has the media (expired, deleted): the API answers 404 / 410-like conflict. */
export class MediaUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MediaUnavailableError';
  }
}

/** Picks the engine's own MediaSource by `ref.engine`; an engine without one has no media to give. */
export class MediaSourceByEngine implements MediaSource {
  constructor(private readonly sources: Partial<Record<MediaRef['engine'], MediaSource>>) {}

  async open(ref: MediaRef): Promise<Readable> {
    const source = this.sources[ref.engine];
    if (!source) throw new MediaUnavailableError(`no media source for engine ${ref.engine}`);
    return source.open(ref);
  }
}
