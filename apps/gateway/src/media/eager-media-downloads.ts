import { UnrecoverableError, type Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { MediaDownloadJobData } from '@app/contracts';
import type { MessageRow, MessagesRepository } from '@app/database';
import { type MediaSource, type MediaStore, type MediaStoreKey, MediaUnavailableError, readCapped } from '@app/media';
import type { MediaDownloadQueue } from './media-download-queue';

export interface EagerMediaSettings {
  /** larger media is not kept (it stays reachable on demand) */
  maxBytes: number;
  concurrency: number;
}

/** What a download came to (logged; tests read it). */
export type DownloadOutcome = 'stored' | 'already-stored' | 'too-large' | 'gone';

/**
 * Eager media downloads (issue 19 item 9; docs/media-store.md). The inbound path calls `received` once a message row is
 * committed; it only adds a job (not awaited, so the network's ack and the live events never wait on it). Every
 * gateway runs a worker of bounded concurrency: it reads the row, streams the bytes from the network that holds them
 * (the engine's MediaSource, the same as the API's on-demand path), caps them at MEDIA_STORE_MAX_BYTES, and puts them
 * in the operator's store. A failure is retried with exponential backoff; the last one is logged, and the API still
 * serves the media from the network on demand.
 */
export class EagerMediaDownloads {
  private worker: Worker<MediaDownloadJobData> | null = null;

  constructor(
    private readonly queue: Pick<MediaDownloadQueue, 'add' | 'worker' | 'close'>,
    private readonly store: MediaStore,
    private readonly source: MediaSource,
    private readonly messages: Pick<MessagesRepository, 'findById'>,
    private readonly settings: EagerMediaSettings,
    private readonly logger: Logger,
  ) {}

  /** An inbound message was stored: its media (if any) is downloaded in the background. Never throws, never waits. */
  received(row: MessageRow): void {
    if (row.direction !== 'in' || !row.media || !row.mediaRef) return;
    this.queue.add(row.id).catch((err: unknown) =>
      this.logger.warn({ messageId: row.id, err: String(err) }, 'eager media download not queued; the media stays reachable on demand'),
    );
  }

  start(connection: Redis): void {
    this.worker = this.queue.worker(
      async (job) => {
        try {
          const outcome = await this.download(job.data.messageId);
          this.logger.debug({ messageId: job.data.messageId, outcome }, 'eager media download');
          return outcome;
        } catch (err) {
          // the network dropped it: retrying cannot help (the on-demand path asks the phone again)
          if (err instanceof MediaUnavailableError) throw new UnrecoverableError(err.message);
          throw err;
        }
      },
      { connection, concurrency: this.settings.concurrency },
    );
    this.worker.on('failed', (job, err) => {
      if (!job) return;
      const last = job.attemptsMade >= (job.opts.attempts ?? 1) || err instanceof UnrecoverableError;
      this.logger[last ? 'warn' : 'debug'](
        { messageId: job.data.messageId, attempt: job.attemptsMade, err: err.message },
        last ? 'eager media download given up; the media stays reachable on demand' : 'eager media download failed; retrying',
      );
    });
    this.worker.on('error', (err) => this.logger.warn({ err: err.message }, 'eager media download worker error'));
  }

  /** Downloads one message's media into the store, unless it is kept already, too large, or gone. */
  async download(messageId: string): Promise<DownloadOutcome> {
    const row = await this.messages.findById(messageId);
    if (!row || row.direction !== 'in' || !row.media || !row.mediaRef) return 'gone';
    const key: MediaStoreKey = { organizationId: row.organizationId, sessionId: row.sessionId, messageId: row.id };
    if (await this.store.has(key)) return 'already-stored';
    const { maxBytes } = this.settings;
    if ((row.media.size ?? 0) > maxBytes) return 'too-large';
    const read = await readCapped(await this.source.open(row.mediaRef), maxBytes);
    if (!read) return 'too-large';
    const refused = await this.store.put(key, { mimetype: row.media.mimetype, size: read.bytes.length, sha256: read.sha256, bytes: read.bytes }).then(
      () => null,
      (err: unknown) => ({ err }),
    );
    // the message (its session) deleted while this ran: PostgreSQL refused the row (its foreign key), and a bucket,
    // which has no foreign key, took an object no message points to: forgotten, so nothing is left behind
    if (!(await this.messages.findById(messageId))) {
      if (!refused) await this.store.forget(key);
      return 'gone';
    }
    if (refused) throw refused.err;
    return 'stored';
  }

  async stop(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
    await this.store.close();
  }
}
