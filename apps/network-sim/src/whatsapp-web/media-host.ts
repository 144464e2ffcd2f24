/**
 * The media host's IQ: `media_conn` answers where devices upload and download media (media-server.ts) and the auth an
 * upload carries. stanzas.ts gathers it with the other answer tables.
 */
import { mediaHostOf } from './media-server';
import { IqError, type IqAnswer } from './iq';

export const MEDIA_IQ_ANSWERS: Record<string, IqAnswer> = {
  // where to upload and download media, and the auth an upload carries
  'w:m set media_conn': (_iq, { network }) => {
    const host = mediaHostOf(network);
    if (!host) throw new IqError(503, 'service-unavailable');
    return [host.mediaConn()];
  },
};
