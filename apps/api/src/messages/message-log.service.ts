import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { DomainError, MessageView } from '@app/contracts';
import { MessageRow, MessagesRepository, SessionsRepository, toMessageView } from '@app/database';
import { MediaSource, type MediaStore, MediaUnavailableError } from '@app/media';
import { Page, pageLimit } from '../common/pagination';
import type { MessageQueryDto } from './dto/message.dto';
import { MEDIA_SOURCE, MEDIA_STORE } from '../media/media-tokens';
import { MediaReupload } from './media-reupload';
import { findOwnSession } from '../sessions/own-session';

export interface MediaDownload {
  body: Buffer | Readable;
  mimetype: string;
  /** bytes, when known */
  length: number | null;
  filename: string | null;
}

/** The message log's reads: a session's messages, one message, and a message's media bytes. Sends are MessagesService's. */
@Injectable()
export class MessageLogService {
  private readonly logger = new Logger('messages');

  constructor(
    private readonly sessions: SessionsRepository,
    private readonly messages: MessagesRepository,
    @Inject(MEDIA_SOURCE) private readonly mediaSource: MediaSource,
    private readonly reupload: MediaReupload,
    @Inject(MEDIA_STORE) private readonly mediaStore: MediaStore | null,
  ) {}

  async list(organizationId: string, sessionId: string, query: MessageQueryDto): Promise<Page<MessageView>> {
    const session = await findOwnSession(this.sessions, organizationId, sessionId);
    const limit = pageLimit(query);
    const rows = await this.messages.page(session, { direction: query.direction, chatJid: query.chatJid, status: query.status }, limit + 1, query.cursor);
    const more = rows.length > limit;
    const slice = more ? rows.slice(0, limit) : rows;
    return { data: slice.map(toMessageView), nextCursor: more ? slice[slice.length - 1].id : null };
  }

  async get(organizationId: string, sessionId: string, messageId: string): Promise<MessageView> {
    return toMessageView(await this.findMessage(organizationId, sessionId, messageId));
  }

  /**
   * Outbound media is served from our copy until the message is sent (then deleted: 404); inbound media from the
   * operator's store when a gateway kept it (MEDIA_STORE), otherwise streamed from the network, which may have dropped
   * it (404 too).
   */
  async media(organizationId: string, sessionId: string, messageId: string): Promise<MediaDownload> {
    const message = await this.findMessage(organizationId, sessionId, messageId);
    if (!message.media) throw new DomainError('not_found', 'the message has no media', { messageId });
    const gone = (why: string) => new DomainError('not_found', `the media is no longer available: ${why}`, { messageId });
    const { mimetype, filename } = message.media;
    if (message.direction === 'out') {
      const bytes = await this.messages.mediaOf(message.id);
      if (!bytes) throw gone('outbound media is deleted once the message is sent');
      return { body: bytes, mimetype, length: bytes.length, filename };
    }
    const kept = await this.keptMedia(organizationId, message);
    if (kept) return { body: kept, mimetype, length: kept.length, filename };
    if (!message.mediaRef) throw gone('the network gave no reference to it');
    try {
      return { body: await this.openInbound(organizationId, message), mimetype, length: message.media.size, filename };
    } catch (err) {
      if (err instanceof MediaUnavailableError) throw gone(err.message);
      // the re-upload's answers: 409 (the session is not working), 503 (no live gateway)
      if (err instanceof DomainError) throw err;
      // the network (WhatsApp's CDN, the simulator) did not answer: a retry may work, so not a 404 and not our bug
      throw new DomainError('gateway_unavailable', 'the network that holds this media cannot be reached right now; retry later', {
        messageId,
        reason: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** The bytes a gateway kept in the operator's store (MEDIA_STORE), or null: not kept, or the store failed (logged). */
  private async keptMedia(organizationId: string, message: MessageRow): Promise<Buffer | null> {
    if (!this.mediaStore) return null;
    try {
      return (await this.mediaStore.get({ organizationId, sessionId: message.sessionId, messageId: message.id }))?.bytes ?? null;
    } catch (err) {
      this.logger.warn(`media store (${this.mediaStore.kind}) failed for ${message.id}, asking the network: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    }
  }

  /** From the network; media the CDN dropped is asked of the sender's phone again (media-reupload.ts). */
  private async openInbound(organizationId: string, message: MessageRow): Promise<Readable> {
    try {
      return await this.mediaSource.open(message.mediaRef!);
    } catch (err) {
      if (err instanceof MediaUnavailableError) return this.reupload.open(organizationId, message, err);
      throw err;
    }
  }

  private async findMessage(organizationId: string, sessionId: string, messageId: string): Promise<MessageRow> {
    const session = await findOwnSession(this.sessions, organizationId, sessionId);
    const message = await this.messages.findInSession(session, messageId);
    if (!message) throw new DomainError('not_found', 'message not found', { id: messageId });
    return message;
  }
}
