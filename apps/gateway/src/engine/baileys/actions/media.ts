import type { proto, WAMessage } from '@whiskeysockets/baileys';
import { DomainError, type MediaRef, type SessionActionArgs, type SessionActionHandlers, type MediaActionMap } from '@app/contracts';
import { isMediaDirectPath, trustedMediaUrl } from '@app/media';
import type { BaileysActionContext } from './context';

type BaileysRef = Extract<MediaRef, { engine: 'baileys' }>;

/** How long the sender's phone has to upload the media again (it must be online). */
export const REUPLOAD_TIMEOUT_MS = 20_000;

/** The Baileys content key of each media type (what `assertMediaContent` looks for). */
const CONTENT_KEY: Record<BaileysRef['mediaType'], 'imageMessage' | 'videoMessage' | 'audioMessage' | 'documentMessage' | 'stickerMessage'> = {
  image: 'imageMessage',
  video: 'videoMessage',
  audio: 'audioMessage',
  document: 'documentMessage',
  sticker: 'stickerMessage',
};

/**
 * The stored message as Baileys' `updateMediaMessage` takes it: the key and a media content with key and path. No `url`:
 * the sender wrote it, and Baileys builds the new one from the host WhatsApp's `media_conn` names.
 */
export function mediaMessageFor(args: SessionActionArgs<'media.reupload'>): WAMessage {
  const { ref } = args;
  const media: proto.Message.IImageMessage = { mediaKey: Buffer.from(ref.mediaKey, 'base64'), directPath: ref.directPath };
  return {
    key: { remoteJid: args.chatJid, id: args.waMessageId, fromMe: args.fromMe, ...(args.participant ? { participant: args.participant } : {}) },
    message: { [CONTENT_KEY[ref.mediaType]]: media },
  };
}

/**
 * `media.reupload` (issue 19 item 9): asks the sender's phone, through the live socket, to upload the media again
 * (Baileys' `updateMediaMessage`, which waits for the `messages.media-update` answer and decrypts the new path). The
 * phone's refusal (it no longer has the file, or is away) is a `not_found`: the media is gone for good.
 */
export const MEDIA_BAILEYS_ACTIONS: Pick<SessionActionHandlers<BaileysActionContext>, keyof MediaActionMap> = {
  'media.reupload': async (ctx, args) => {
    let updated: WAMessage;
    let timer: NodeJS.Timeout | undefined;
    try {
      // Baileys waits for the phone's answer without a bound; a phone that is away never answers
      const away = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DomainError('not_found', `the sender's phone did not answer the media re-upload request within ${REUPLOAD_TIMEOUT_MS / 1000} s`, { waMessageId: args.waMessageId })), REUPLOAD_TIMEOUT_MS);
      });
      updated = await Promise.race([ctx.sock.updateMediaMessage(mediaMessageFor(args)), away]);
    } catch (err) {
      if (err instanceof DomainError) throw err;
      const status = (err as { output?: { statusCode?: number } }).output?.statusCode;
      if (status === 404 || status === 410 || status === 412) {
        throw new DomainError('not_found', `the sender's phone could not upload the media again: ${err instanceof Error ? err.message : String(err)}`, { waMessageId: args.waMessageId });
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
    const content = updated.message?.[CONTENT_KEY[args.ref.mediaType]];
    if (!content?.directPath) throw new Error('the re-uploaded media came back without a direct path');
    // the sender's phone writes the new path (issue 37): one that is not a path could pick the download's host
    if (!isMediaDirectPath(content.directPath)) {
      throw new DomainError('not_found', "the sender's phone answered the media re-upload with a direct path that is not a path; the media cannot be fetched", { waMessageId: args.waMessageId });
    }
    return { ref: { ...args.ref, directPath: content.directPath, url: trustedMediaUrl(content.url) } };
  },
};
