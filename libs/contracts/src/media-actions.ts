import type { MediaRef } from './messages';

/**
 * Media operations on a connected session (issue 19 item 9), through the session-action seam
 * (session-actions.ts). `media.reupload`: WhatsApp's CDN drops media after a while (404/410); the sender's phone still
 * has it and uploads it again when the device asks (Baileys' `updateMediaMessage`: an encrypted media-retry request,
 * answered by a `messages.media-update` with the new direct path). The answer is the message's media reference with
 * that new path, which the API stores and downloads from.
 */
export type MediaActionMap = {
  'media.reupload': {
    args: {
      /** the message whose media expired, keyed as the network keys it */
      waMessageId: string;
      chatJid: string;
      fromMe: boolean;
      /** the sender in a group chat */
      participant: string | null;
      /** the stored (expired) reference: its media key decrypts the phone's answer */
      ref: Extract<MediaRef, { engine: 'baileys' }>;
    };
    result: { ref: Extract<MediaRef, { engine: 'baileys' }> };
  };
};
