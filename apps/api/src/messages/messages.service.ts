import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { ApiConfig } from '@app/config';
import { DomainError, MessageSendOptions, MessageView, OutboundMessageType, SessionStatus } from '@app/contracts';
import { MessageRow, MessagesRepository, NewMessage, newId, Session, SessionsRepository, toMessageView } from '@app/database';
import { REDIS_CLIENT } from '@app/infra';
import { MediaSource, MediaUnavailableError } from '@app/media';
import { SendRateLimiter, SendSignal } from '@app/messaging';
import { Redis } from '@app/redis';
import type { Principal } from '../auth/principal';
import { Page, pageLimit } from '../common/pagination';
import { ApiValidationPipe } from '../common/validation.pipe';
import type { MessageQueryDto } from './dto/message.dto';
import { SendMediaDto, SendMessageDto } from './dto/send-message.dto';
import { LinkPreviewer } from './link-preview';
import { MediaFetcher, mediaTooLarge } from './media-fetcher';
import { messageKeyOf, pollVoteProblem } from './message-keys';
import { MEDIA_SOURCE } from './media-source.provider';
import { MediaReupload } from './media-reupload';
import { newWaMessageId } from './wa-message-id';

/**
 * A send whose chat is not a `to` of the body: a status post (CONTRACT 13) goes to status@broadcast, and what it needs
 * besides the message (its audience) is recorded, under the message's id, just before the message row.
 */
export interface BroadcastSend {
  chatJid: string;
  record(messageId: string): Promise<void>;
}

/** A repeated Idempotency-Key returns the first message for this long; after it the key is free again. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
const SENDABLE: SessionStatus[] = ['working', 'reconnecting'];
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;
const CAPTIONED: OutboundMessageType[] = ['image', 'video', 'document'];

export interface MediaDownload {
  body: Buffer | Readable;
  mimetype: string;
  /** bytes, when known */
  length: number | null;
  filename: string | null;
}

/**
 * Sending and the message log. A send is accepted here and only here: checked in the order of CONTRACT 10, counted
 * against the session's rates in Redis, stored `queued` with its waMessageId in PostgreSQL (the queue of record) and
 * then signalled to the session's gateway, which sends it.
 */
@Injectable()
export class MessagesService {
  private readonly logger = new Logger('messages');
  private readonly validation = new ApiValidationPipe();

  constructor(
    private readonly sessions: SessionsRepository,
    private readonly messages: MessagesRepository,
    private readonly limiter: SendRateLimiter,
    private readonly signal: SendSignal,
    private readonly fetcher: MediaFetcher,
    @Inject(MEDIA_SOURCE) private readonly mediaSource: MediaSource,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    private readonly config: ApiConfig,
    private readonly reupload: MediaReupload,
    @Optional() private readonly previews?: LinkPreviewer,
  ) {}

  /**
   * Order: session of the caller's organization (404) → body and Idempotency-Key (422) → quoted / reacted message of
   * this session (404) → session status (409) → idempotent repeat (the first message, nothing counted) → rates (429)
   * → media → insert → signal.
   */
  async send(principal: Principal, sessionId: string, rawBody: unknown, idempotencyKey: string | undefined, broadcast?: BroadcastSend): Promise<MessageView> {
    const session = await this.findSession(principal.organizationId, sessionId);
    const body = await this.validate(rawBody, idempotencyKey);
    const type: OutboundMessageType = body.type ?? 'text';
    const quoted = body.quotedMessageId ? await this.findTarget(session, body.quotedMessageId, 'quotedMessageId') : null;
    const reacted = body.reaction ? await this.findTarget(session, body.reaction.messageId, 'reaction.messageId') : null;
    const polled = body.pollVote ? await this.findTarget(session, body.pollVote.pollMessageId, 'pollVote.pollMessageId') : null;
    const voteProblem = polled ? pollVoteProblem(polled, body.to, body.pollVote!.options) : null;
    if (voteProblem) throw new DomainError('validation_error', 'request is invalid', { fields: voteProblem });
    if (reacted && reacted.chatJid !== body.to) {
      throw new DomainError('validation_error', 'request is invalid', {
        fields: { 'reaction.messageId': [`the message is in chat ${reacted.chatJid}, not in ${body.to}`] },
      });
    }
    if (!SENDABLE.includes(session.status)) {
      throw new DomainError('conflict', `the session is ${session.status}: messages are accepted while it is working or reconnecting`, {
        status: session.status,
      });
    }
    if (idempotencyKey !== undefined) {
      const first = await this.messages.findByIdempotencyKey(session.id, idempotencyKey, IDEMPOTENCY_WINDOW_MS);
      if (first) return toMessageView(first);
      await this.messages.releaseIdempotencyKey(session.id, idempotencyKey, IDEMPOTENCY_WINDOW_MS);
    }

    const id = newId('msg');
    // read from the row on every send, so a PATCH of the rates applies to the very next one
    const decision = await this.limiter.tryAccept(session.id, id, { ratePerMin: session.ratePerMin, ratePerHour: session.ratePerHour });
    if (!decision.accepted) {
      const retryAfterSeconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      const limit = decision.limit;
      const count = limit === 'ratePerMin' ? `${session.ratePerMin} per minute` : `${session.ratePerHour} per hour`;
      throw new DomainError('rate_limited', `the session's send rate (${count}) is reached; retry in ${retryAfterSeconds} s`, { retryAfterSeconds, limit });
    }

    let row: MessageRow | null;
    try {
      const bytes = body.media ? await this.mediaBytes(body.media) : null;
      const sendOptions: MessageSendOptions | null = polled
        ? { pollVote: { poll: messageKeyOf(polled), options: body.pollVote!.options } }
        : type === 'text' && body.linkPreview !== false && this.previews
          ? { linkPreview: await this.previews.previewOf(body.text!) }
          : null;
      const message: NewMessage = {
        id,
        organizationId: session.organizationId,
        sessionId: session.id,
        waMessageId: newWaMessageId(),
        direction: 'out',
        chatJid: broadcast?.chatJid ?? body.to,
        from: session.waJid,
        type,
        text: type === 'text' ? body.text! : null,
        media: body.media && bytes
          ? { mimetype: body.media.mimetype, size: bytes.length, filename: body.media.filename ?? null, caption: CAPTIONED.includes(type) ? (body.text ?? null) : null }
          : null,
        location: body.location
          ? { latitude: body.location.latitude, longitude: body.location.longitude, name: body.location.name ?? null, address: body.location.address ?? null }
          : null,
        contact: body.contact ? { fullName: body.contact.fullName, phoneNumber: body.contact.phoneNumber } : null,
        poll: body.poll ? { name: body.poll.name, options: body.poll.options, selectableCount: body.poll.selectableCount ?? 1 } : null,
        reaction: reacted ? { waMessageId: reacted.waMessageId, emoji: body.reaction!.emoji } : null,
        quotedMessageId: quoted?.id ?? null,
        quotedWaMessageId: quoted?.waMessageId ?? null,
        mentions: body.mentions ?? [],
        status: 'queued',
        idempotencyKey: idempotencyKey ?? null,
        sendOptions: sendOptions?.pollVote || sendOptions?.linkPreview ? sendOptions : null,
      };
      if (broadcast) await broadcast.record(id);
      row = await this.messages.insertOutbound(message, bytes);
    } catch (err) {
      // not accepted after all: the slot goes back, so a failed send never counts
      await this.limiter.release(session.id, id).catch(() => undefined);
      throw err;
    }
    if (!row) {
      // a concurrent repeat with the same key was stored first: answer with it, counted once
      await this.limiter.release(session.id, id).catch(() => undefined);
      const first = idempotencyKey === undefined ? null : await this.messages.findByIdempotencyKey(session.id, idempotencyKey, IDEMPOTENCY_WINDOW_MS);
      if (first) return toMessageView(first);
      throw new Error(`message ${id} conflicted with a stored one`);
    }
    if (session.gatewayId) {
      // only a nudge: the gateway also sweeps for queued rows, so a lost signal delays the send, nothing more
      await this.signal.notify(this.redis, session.gatewayId, session.id).catch((err) => this.logger.warn(`send signal lost for ${session.id}: ${String(err)}`));
    }
    return toMessageView(row);
  }

  async list(organizationId: string, sessionId: string, query: MessageQueryDto): Promise<Page<MessageView>> {
    const session = await this.findSession(organizationId, sessionId);
    const limit = pageLimit(query);
    const rows = await this.messages.page(session.id, { direction: query.direction, chatJid: query.chatJid, status: query.status }, limit + 1, query.cursor);
    const more = rows.length > limit;
    const slice = more ? rows.slice(0, limit) : rows;
    return { data: slice.map(toMessageView), nextCursor: more ? slice[slice.length - 1].id : null };
  }

  async get(organizationId: string, sessionId: string, messageId: string): Promise<MessageView> {
    return toMessageView(await this.findMessage(organizationId, sessionId, messageId));
  }

  /**
   * Outbound media is served from our copy until the message is sent (then deleted: 404); inbound media is streamed
   * from the network, which may have dropped it (404 too).
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

  /** From the network; media the CDN dropped is asked of the sender's phone again (media-reupload.ts). */
  private async openInbound(organizationId: string, message: MessageRow): Promise<Readable> {
    try {
      return await this.mediaSource.open(message.mediaRef!);
    } catch (err) {
      if (err instanceof MediaUnavailableError) return this.reupload.open(organizationId, message, err);
      throw err;
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** The one read of `sessions` here. */
  private async findSession(organizationId: string, id: string): Promise<Session> {
    const session = await this.sessions.findInOrganization(organizationId, id);
    if (!session) throw new DomainError('not_found', 'session not found', { id });
    return session;
  }

  private async findMessage(organizationId: string, sessionId: string, messageId: string): Promise<MessageRow> {
    const session = await this.findSession(organizationId, sessionId);
    const message = await this.messages.findInOrganization(organizationId, session.id, messageId);
    if (!message) throw new DomainError('not_found', 'message not found', { id: messageId });
    return message;
  }

  private async findTarget(session: Session, messageId: string, field: string): Promise<MessageRow> {
    const message = await this.messages.findInOrganization(session.organizationId, session.id, messageId);
    if (!message) throw new DomainError('not_found', `${field} is not a message of this session`, { [field]: messageId });
    return message;
  }

  /** The body through the global pipe's rules (validated here, after the session lookup, so a stranger's id is 404 first). */
  private async validate(raw: unknown, idempotencyKey: string | undefined): Promise<SendMessageDto> {
    const keyProblem =
      idempotencyKey === undefined || IDEMPOTENCY_KEY.test(idempotencyKey) ? null : 'Idempotency-Key must be 1..255 printable ASCII characters';
    try {
      const body = (await this.validation.transform(raw, { type: 'body', metatype: SendMessageDto, data: '' })) as SendMessageDto;
      if (keyProblem) throw new DomainError('validation_error', 'request is invalid', { fields: { 'Idempotency-Key': [keyProblem] } });
      return body;
    } catch (err) {
      if (keyProblem && err instanceof DomainError && err.code === 'validation_error' && typeof err.details.fields === 'object') {
        (err.details.fields as Record<string, string[]>)['Idempotency-Key'] = [keyProblem];
      }
      throw err;
    }
  }

  private async mediaBytes(media: SendMediaDto): Promise<Buffer> {
    const max = this.config.MEDIA_MAX_BYTES;
    if (media.url !== undefined) return this.fetcher.fetch(media.url);
    const b64 = media.base64!;
    const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
    if ((b64.length / 4) * 3 - padding > max) throw mediaTooLarge('media.base64', max);
    return Buffer.from(b64, 'base64');
  }
}
