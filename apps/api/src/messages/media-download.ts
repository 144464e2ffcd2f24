import { Logger, StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError, ERROR_STATUS } from '@app/contracts';
import type { MediaDownload } from './message-log.service';

const logger = new Logger('media-download');

/**
 * The answer of GET …/media. A stream that fails after the answer was chosen but before its first byte went out (the
 * CDN's body breaks, the bytes do not decrypt) is answered as a download that fails to open: 503 `gateway_unavailable`
 * in the spec's envelope (Nest's default would be a bare `400 Bad Request` in text, under the file's own headers).
 * Once bytes went out the status is spent: the response is cut, so a truncated file never looks complete.
 */
export function mediaFile(media: MediaDownload, messageId: string): StreamableFile {
  const options = {
    type: media.mimetype,
    ...(media.length !== null ? { length: media.length } : {}),
    ...(media.filename ? { disposition: `inline; filename*=UTF-8''${encodeURIComponent(media.filename)}` } : {}),
  };
  // (one overload per body kind)
  const file = Buffer.isBuffer(media.body) ? new StreamableFile(media.body, options) : new StreamableFile(media.body, options);
  return file.setErrorHandler((err, response) => {
    // the API runs on Express (platform-express), whose response this is
    const res = response as unknown as Response;
    const reason = err instanceof Error ? err.message : String(err);
    logger.warn(`media of ${messageId} failed while streaming: ${reason}`);
    if (res.destroyed) return;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // the file's headers were applied already: the envelope is not the file
    for (const header of ['Content-Length', 'Content-Disposition', 'Content-Type']) res.removeHeader(header);
    const error = new DomainError('gateway_unavailable', 'the network that holds this media failed while sending it; retry later', { messageId, reason });
    res.status(ERROR_STATUS[error.code]).json(error.toBody());
  });
}
