import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { DomainError, type MediaRef } from '@app/contracts';
import { MessageRow, MessagesRepository } from '@app/database';
import { MediaReferenceRefusedError, MediaSource, MediaUnavailableError } from '@app/media';
import { SessionActions } from '../sessions/session-actions';
import { MEDIA_SOURCE } from '../media/media-tokens';

/**
 * Inbound media whose CDN copy expired (issue 19 item 9): the sender's phone is asked, through the gateway's live socket
 * (session action `media.reupload`, Baileys' `updateMediaMessage`), to upload it again; the new reference is stored on
 * the message (the next download goes straight to it) and the bytes are streamed from it. Only Baileys references
 * expire; the session must be `working` (409 otherwise, as every session action), and a phone that no longer has the
 * file, or does not answer, makes the media gone for good (404).
 */
@Injectable()
export class MediaReupload {
  constructor(
    private readonly actions: SessionActions,
    private readonly messages: MessagesRepository,
    @Inject(MEDIA_SOURCE) private readonly mediaSource: MediaSource,
  ) {}

  async open(organizationId: string, message: MessageRow, expired: MediaUnavailableError): Promise<Readable> {
    const ref = message.mediaRef;
    if (ref?.engine !== 'baileys' || message.direction !== 'in') throw expired;
    // a reference refused for where it points is not expired: the answer is the refusal, not a round trip to the phone
    if (expired instanceof MediaReferenceRefusedError) throw expired;
    let fresh: Extract<MediaRef, { engine: 'baileys' }>;
    try {
      ({ ref: fresh } = await this.actions.perform(organizationId, message.sessionId, 'media.reupload', {
        waMessageId: message.waMessageId,
        chatJid: message.chatJid,
        fromMe: false,
        participant: message.chatJid.endsWith('@g.us') ? message.from : null,
        ref,
      }));
    } catch (err) {
      if (err instanceof DomainError && err.code === 'not_found') throw new MediaUnavailableError(`${expired.message}; ${err.message}`);
      throw err;
    }
    await this.messages.updateMediaRef(message.id, fresh);
    return this.mediaSource.open(fresh);
  }
}
