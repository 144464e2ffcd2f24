import { Agent, Dispatcher, interceptors, request } from 'undici';
import { DomainError } from '@app/contracts';
import { guardedConnector, targetRefusalOf } from '@app/net-guard';

export interface MediaFetcherOptions {
  maxBytes: number;
  /** the whole fetch, connect to last byte */
  timeoutMs: number;
  allowPrivateTargets: boolean;
}

const MAX_REDIRECTS = 3;

const unfetchable = (reason: string) =>
  new DomainError('validation_error', `media could not be fetched: ${reason}`, { fields: { 'media.url': [reason] } });

export const mediaTooLarge = (field: string, maxBytes: number) =>
  new DomainError('payload_too_large', `media is larger than ${maxBytes} bytes`, { fields: { [field]: [`must be at most ${maxBytes} bytes`] }, maxBytes });

/**
 * Fetches a send's media URL (a URL the client chose, so the same SSRF guard as webhook deliveries, applied to every
 * address actually dialled, redirects included), bounded in size (the download is aborted the moment it passes
 * MEDIA_MAX_BYTES, so a huge or endless answer costs at most that much memory) and in time.
 */
export class MediaFetcher {
  private readonly dispatcher: Dispatcher;
  private readonly agent: Agent;

  constructor(private readonly options: MediaFetcherOptions) {
    this.agent = new Agent({
      connect: guardedConnector({ timeoutMs: options.timeoutMs, allowPrivateTargets: options.allowPrivateTargets }),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    this.dispatcher = this.agent.compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTS }));
  }

  async fetch(url: string): Promise<Buffer> {
    const { maxBytes, timeoutMs } = this.options;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(url, { method: 'GET', dispatcher: this.dispatcher, signal });
      if (res.statusCode < 200 || res.statusCode >= 300) {
        discard(res.body);
        throw unfetchable(`the media URL answered ${res.statusCode}`);
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        discard(res.body);
        throw mediaTooLarge('media.url', maxBytes);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        // leaving the loop destroys the body: the download stops here
        if (size > maxBytes) {
          throw mediaTooLarge('media.url', maxBytes);
        }
        chunks.push(chunk as Buffer);
      }
      if (size === 0) throw unfetchable('the media URL answered an empty body');
      return Buffer.concat(chunks, size);
    } catch (err) {
      if (err instanceof DomainError) throw err;
      const refusal = targetRefusalOf(err);
      if (refusal) throw unfetchable(`the media URL's target is not allowed: ${refusal.message}`);
      if (signal.aborted) throw unfetchable(`the media URL did not answer within ${timeoutMs} ms`);
      throw unfetchable(describe(err));
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => this.agent.destroy());
  }
}

/** Drops an answer's body without reading it (its abort error has nobody to tell). */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

function describe(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: { message?: string; code?: string } };
  const code = e?.code ?? e?.cause?.code;
  const message = e?.cause?.message ?? e?.message ?? String(err);
  if (code === 'UND_ERR_MAX_REDIRECTIONS' || /redirect/i.test(message)) return `more than ${MAX_REDIRECTS} redirects`;
  return code && !message.includes(code) ? `${code} ${message}` : message;
}
