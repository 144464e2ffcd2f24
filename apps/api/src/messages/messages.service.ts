import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { DomainError, ERROR_STATUS, ErrorBody, isCaptionedMediaType, MessageSendOptions, MessageView, OutboundMessageType, SessionStatus } from '@app/contracts';
import { MessageQueueRepository, MessageRow, MessagesRepository, NewMessage, NewOutbound, newId, Session, SessionsRepository, toMessageView } from '@app/database';
import { REDIS_CLIENT } from '@app/infra';
import { RateDecision, RateLimitName, SendRateLimiter, SendSignal } from '@app/messaging';
import { Redis } from '@app/redis';
import type { Principal } from '../auth/principal';
import type { DeferredRequestLimits } from '../limits/deferred-request-limits';
import { AcceptGroup } from './accept-group';
import { ApiValidationPipe } from '../common/validation.pipe';
import { BATCH_MAX, SendBatchItemDto } from './dto/send-batch.dto';
import { plainTextBody, plainTextItem } from './dto/plain-text-body';
import { IDEMPOTENCY_KEY, SendMediaDto, SendMessageDto } from './dto/send-message.dto';
import { LinkPreviewer } from './link-preview';
import { MediaFetcher, mediaTooLarge } from './media-fetcher';
import { messageKeyOf, pollVoteProblem } from './message-keys';
import { newWaMessageId } from './wa-message-id';

/**
 * A send whose chat is not a `to` of the body: a status post (CONTRACT 13) goes to status@broadcast, and what it needs
 * besides the message (its audience) is recorded, under the message's id, just before the message row.
 */
export interface BroadcastSend {
  chatJid: string;
  record(messageId: string): Promise<void>;
}

/** One message's outcome in a bulk send: a Message (202) or its error. */
export interface BatchResult {
  status: number;
  message: MessageView | null;
  error: ErrorBody['error'] | null;
}

export interface BatchResults {
  results: BatchResult[];
}

/** The 429 of a send refused by the session's rates. */
export function rateLimited(session: Session, retryAfterMs: number, limit: RateLimitName): DomainError {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const count = limit === 'ratePerMin' ? `${session.ratePerMin} per minute` : `${session.ratePerHour} per hour`;
  return new DomainError('rate_limited', `the session's send rate (${count}) is reached; retry in ${retryAfterSeconds} s`, { retryAfterSeconds, limit });
}

/** The messages of a bulk send's body: `{messages: [1..BATCH_MAX]}` and nothing else, or the whole request is 422. */
function batchItems(raw: unknown): unknown[] {
  const invalid = (problem: string, field = 'messages') => new DomainError('validation_error', 'request is invalid', { fields: { [field]: [problem] } });
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new DomainError('validation_error', 'request body must be a JSON object', { fields: { body: ['must be a JSON object'] } });
  }
  const unknown = Object.keys(raw).filter((k) => k !== 'messages');
  if (unknown.length > 0) throw invalid('property should not exist', unknown[0]);
  const messages = (raw as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) throw invalid('messages must be an array of 1..' + BATCH_MAX + ' messages');
  if (messages.length < 1 || messages.length > BATCH_MAX) throw invalid(`messages must hold 1..${BATCH_MAX} messages (it has ${messages.length})`);
  return messages;
}

function unreachable(index: number): never {
  throw new Error(`batch item ${index} has no outcome`);
}

/** A repeated Idempotency-Key returns the first message for this long; after it the key is free again. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
const SENDABLE: SessionStatus[] = ['working', 'reconnecting'];

const notFound = (id: string) => new DomainError('not_found', 'session not found', { id });

/** A send with a `sendAt` still ahead (CONTRACT 17): stored `scheduled`; a time already past is a send now. */
const isScheduled = (body: SendMessageDto): body is SendMessageDto & { sendAt: number } => body.sendAt !== undefined && body.sendAt > Date.now();

/**
 * How many times a plain send is offered to the accept statement while the session reads sendable between tries: a
 * session moving between gateways is `starting` for a moment on its new one, so a send can be refused by the statement
 * and find the session `working` again when it is read to explain why.
 */
const PLAIN_ACCEPT_TRIES = 3;

/** The media bytes one accept statement carries at most (a media send larger than this goes alone). */
const ACCEPT_GROUP_MEDIA_BYTES = 16 * 1024 * 1024;

/** A plain send's accept: its row (null: not stored), and its group's signal, which never fails (see `notify`). */
interface PlainAccepted {
  row: MessageRow | null;
  signalled: Promise<void>;
}

/** The accept group's key of a plain send: the session and the caller's organization (one statement checks both). */
export const plainAcceptKey = (organizationId: string, sessionId: string) => `${organizationId}/${sessionId}`;

/** The messages a send names, found in this session. */
interface SendTargets {
  quoted: MessageRow | null;
  reacted: MessageRow | null;
  polled: MessageRow | null;
}
const NO_TARGETS: SendTargets = { quoted: null, reacted: null, polled: null };

/** 409 unless the session accepts sends now (CONTRACT 10: `working` or `reconnecting`). */
export function assertSendable(session: Session): void {
  if (!SENDABLE.includes(session.status)) {
    throw new DomainError('conflict', `the session is ${session.status}: messages are accepted while it is working or reconnecting`, {
      status: session.status,
    });
  }
}

/**
 * Sending (the log's reads are MessageLogService's). A send is accepted here and only here: checked in the order of CONTRACT 10, counted
 * against the session's rates in Redis, stored `queued` with its waMessageId in PostgreSQL (the queue of record) and
 * then signalled to the session's gateway, which sends it.
 */
@Injectable()
export class MessagesService {
  private readonly logger = new Logger('messages');
  private readonly validation = new ApiValidationPipe();
  /** Concurrent plain sends of a session, stored by one statement per group (`acceptGroup`); see AcceptGroup. */
  readonly plainAccepts = new AcceptGroup<NewOutbound, PlainAccepted>((group) => this.acceptGroup(group), {
    // media travels as one bytea[] parameter: a group carries at most this much of it (PostgreSQL caps a value at 1 GB)
    maxWeight: ACCEPT_GROUP_MEDIA_BYTES,
    weightOf: (a) => a.media?.length ?? 0,
  });

  constructor(
    private readonly sessions: SessionsRepository,
    private readonly messages: MessagesRepository,
    private readonly queue: MessageQueueRepository,
    private readonly limiter: SendRateLimiter,
    private readonly signal: SendSignal,
    private readonly fetcher: MediaFetcher,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    private readonly config: ApiConfig,
    @Optional() private readonly previews?: LinkPreviewer,
  ) {}

  /**
   * Order: session of the caller's organization (404) → body and Idempotency-Key (422) → quoted / reacted message of
   * this session (404) → session status (409) → idempotent repeat (the first message, nothing counted) → rates (429)
   * → media → insert → signal. `requestLimits`: the request's API-wide limits when the middleware left them to the
   * send (counted by the plain send's script, or here first on any other path).
   */
  async send(
    principal: Principal,
    sessionId: string,
    rawBody: unknown,
    idempotencyKey: string | undefined,
    broadcast?: BroadcastSend,
    requestLimits?: DeferredRequestLimits | null,
  ): Promise<MessageView> {
    if (idempotencyKey === undefined && !broadcast) return this.sendPlain(principal, sessionId, rawBody, requestLimits ?? null);
    await requestLimits?.count();
    const session = await this.findSession(principal.organizationId, sessionId);
    return this.sendRead(session, await this.validate(rawBody, idempotencyKey), idempotencyKey, broadcast);
  }

  /**
   * `send` for a caller that cannot try again: Chatwoot's webhook (Chatwoot marks its message failed on any answer but a
   * 2xx and never delivers it again, lib/webhooks/trigger.rb). Besides `working` and `reconnecting`, accepted while a
   * paired session is `starting`: a gateway taking it over after a failover, a drain or a restart, until it connects
   * (a 409 there would lose the message). Queued as any send: sent once the session works, or failed after
   * MESSAGE_TTL_SECONDS (`message.failed`). Always with an Idempotency-Key.
   */
  async sendQueued(principal: Principal, sessionId: string, rawBody: unknown, idempotencyKey: string): Promise<MessageView> {
    const session = await this.findSession(principal.organizationId, sessionId);
    return this.sendRead(session, await this.validate(rawBody, idempotencyKey), idempotencyKey, undefined, true);
  }

  /** `send` once the session is read and the body valid; `whileStarting`: see `sendQueued`. */
  private async sendRead(session: Session, body: SendMessageDto, idempotencyKey: string | undefined, broadcast?: BroadcastSend, whileStarting = false): Promise<MessageView> {
    const targets = await this.targets(session, body);
    if (!(whileStarting && session.status === 'starting' && session.phoneNumber !== null)) assertSendable(session);
    if (idempotencyKey !== undefined) {
      const first = await this.messages.findByIdempotencyKey(session.id, idempotencyKey, IDEMPOTENCY_WINDOW_MS);
      if (first) return toMessageView(first);
      await this.messages.releaseIdempotencyKey(session.id, idempotencyKey, IDEMPOTENCY_WINDOW_MS);
    }

    const sendAt = isScheduled(body) ? body.sendAt : undefined;
    return this.accept(session, idempotencyKey ?? null, async (id) => {
      const bytes = body.media ? await this.mediaBytes(body.media) : null;
      const sendOptions = await this.sendOptionsOf(body, targets.polled);
      const message = this.newMessage(session, id, body, targets, bytes, idempotencyKey ?? null, { chatJid: broadcast?.chatJid, sendOptions, sendAt });
      if (broadcast) await broadcast.record(id);
      return { message, bytes };
    }, sendAt !== undefined);
  }

  /**
   * A send without an Idempotency-Key that names no other message (the common one), accepted without reading the
   * session first: one Redis round trip counts it against the session's rates as the limiter keeps them
   * (`tryAcceptKept`: the organization and the rates, dropped by a change of the rates), one PostgreSQL statement
   * stores it only if the session is the caller's and sendable now, with the session's other plain sends that arrived
   * while its previous statement was in flight (`plainAccepts`, `insertAcceptedMany`), then one signal for the group.
   * The answers and their order are `send`'s: an error is explained by reading the session then (404 before 422 before
   * 409 before 429), and a refused or failed accept gives its slot back. A send that names a message, or whose rates
   * are not kept, reads the session first as before. The request's deferred API-wide limits are counted by the same
   * script, before the send (refused: the middleware's 429); a path that does not reach it counts them first.
   */
  private async sendPlain(principal: Principal, sessionId: string, rawBody: unknown, requestLimits: DeferredRequestLimits | null): Promise<MessageView> {
    const organizationId = principal.organizationId;
    let body: SendMessageDto;
    try {
      body = await this.validate(rawBody, undefined);
    } catch (err) {
      await requestLimits?.count();
      await this.findSession(organizationId, sessionId);
      throw err;
    }
    if (body.quotedMessageId || body.reaction || body.pollVote || isScheduled(body)) {
      await requestLimits?.count();
      return this.sendRead(await this.findSession(organizationId, sessionId), body, undefined);
    }

    const id = newId('msg');
    const kept = await this.limiter.tryAcceptKept(sessionId, organizationId, id, requestLimits?.take() ?? undefined);
    if ('requestLimited' in kept) throw requestLimits!.refused(kept.requestLimited);
    if ('stranger' in kept) throw notFound(sessionId);
    let decision: RateDecision;
    if ('unknown' in kept) {
      const session = await this.findSession(organizationId, sessionId);
      assertSendable(session);
      decision = await this.limiter.tryAcceptFilling(session.id, organizationId, id, { ratePerMin: session.ratePerMin, ratePerHour: session.ratePerHour }, kept.gen);
    } else decision = kept;
    if (!decision.accepted) {
      const session = await this.findSession(organizationId, sessionId);
      assertSendable(session);
      throw rateLimited(session, decision.retryAfterMs, decision.limit);
    }

    let row: MessageRow;
    let signalled: Promise<void>;
    try {
      const bytes = body.media ? await this.mediaBytes(body.media) : null;
      const sendOptions = await this.sendOptionsOf(body, null);
      // the sender is the session's own wa_jid, set by the statement
      const sender = { id: sessionId, organizationId, waJid: null };
      const message = this.newMessage(sender, id, body, NO_TARGETS, bytes, null, { sendOptions });
      ({ row, signalled } = await this.acceptPlain(organizationId, sessionId, { message, media: bytes }));
    } catch (err) {
      await this.limiter.release(sessionId, id).catch(() => undefined);
      throw err;
    }
    await signalled;
    return toMessageView(row);
  }

  /**
   * A plain send through the accept statement. Refused (nothing stored), the session is read to say why: gone or not
   * the caller's (404), not sendable (409). Sendable when read means its status changed between the statement and the
   * read (a move between gateways: `starting` on the new one, then `working`), so the send is offered again, for the
   * new holder; a session still changing state after PLAIN_ACCEPT_TRIES answers 409 with its status, never a 500.
   */
  private async acceptPlain(organizationId: string, sessionId: string, send: NewOutbound): Promise<PlainAccepted & { row: MessageRow }> {
    for (let tries = 1; ; tries++) {
      const accepted = await this.plainAccepts.submit(plainAcceptKey(organizationId, sessionId), send);
      if (accepted.row) return { row: accepted.row, signalled: accepted.signalled };
      const session = await this.findSession(organizationId, sessionId);
      assertSendable(session);
      if (tries >= PLAIN_ACCEPT_TRIES) {
        throw new DomainError('conflict', 'the session changed state while the message was accepted (moving between gateways): try again', {
          status: session.status,
        });
      }
    }
  }

  /**
   * One statement for a group of plain sends of one session (`plainAccepts`), then one signal for all it stored, after
   * its commit. Each send's outcome is its own: its row, or null when it was not stored (the whole group, when the
   * session is gone, not the caller's or not sendable; that send alone, on a conflict). The group is done at the
   * commit: the next one's statement does not wait for this one's signal, which each send of it awaits (`signalled`).
   */
  private async acceptGroup(group: NewOutbound[]): Promise<PlainAccepted[]> {
    const { organizationId, sessionId } = group[0].message;
    const { rows, gatewayId } = await this.queue.insertAcceptedMany(organizationId, sessionId, group, SENDABLE);
    const signalled = gatewayId ? this.notify(gatewayId, sessionId) : Promise.resolve();
    return group.map((a) => ({ row: rows.get(a.message.id) ?? null, signalled }));
  }

  /** Only a nudge: the gateway also sweeps for queued rows, so a lost signal delays the send, nothing more. */
  private async notify(gatewayId: string, sessionId: string): Promise<void> {
    await this.signal.notify(this.redis, gatewayId, sessionId).catch((err) => this.logger.warn(`send signal lost for ${sessionId}: ${String(err)}`));
  }

  /**
   * The tail every single send shares (a send, a forward, a status post): counted against the session's rates (429),
   * built and stored `queued` (a failure gives the slot back, so a failed send never counts), then signalled to the
   * session's gateway. A concurrent repeat with the same idempotency key stored first is answered with that message.
   */
  async accept(
    session: Session,
    idempotencyKey: string | null,
    build: (id: string) => Promise<{ message: NewMessage; bytes: Buffer | null }>,
    scheduled = false,
  ): Promise<MessageView> {
    const id = newId('msg');
    // read from the row on every send, so a PATCH of the rates applies to the very next one; a scheduled send is
    // counted when it is due (the gateway's CampaignScheduler), not now
    if (!scheduled) {
      const decision = await this.limiter.tryAccept(session.id, id, { ratePerMin: session.ratePerMin, ratePerHour: session.ratePerHour });
      if (!decision.accepted) throw rateLimited(session, decision.retryAfterMs, decision.limit);
    }

    let row: MessageRow | null;
    try {
      const { message, bytes } = await build(id);
      row = await this.queue.insertOutbound(message, bytes);
    } catch (err) {
      await this.limiter.release(session.id, id).catch(() => undefined);
      throw err;
    }
    if (!row) {
      await this.limiter.release(session.id, id).catch(() => undefined);
      const first = idempotencyKey === null ? null : await this.messages.findByIdempotencyKey(session.id, idempotencyKey, IDEMPOTENCY_WINDOW_MS);
      if (first) return toMessageView(first);
      // no repeat stored first: the session was deleted meanwhile (404)
      await this.findSession(session.organizationId, session.id);
      throw new Error(`message ${id} conflicted with a stored one`);
    }
    if (session.gatewayId) await this.notify(session.gatewayId, session.id);
    return toMessageView(row);
  }

  /**
   * A bulk send (`POST …/messages:batch`): 1..BATCH_MAX messages of one session, each checked as a send of its own and
   * answered at its position (a Message, or that message's error: 422, 404, 413, 429), never failing the others.
   * Session (404) → envelope (422) → session status (409) → each message (422, 404) → idempotent repeats (the first
   * message; a key repeated inside the batch answers the first item's outcome) → rates (the longest prefix of the new
   * messages both windows allow, each counted; the rest 429) → media → one insert of all, in order → one signal.
   */
  async sendBatch(principal: Principal, sessionId: string, rawBody: unknown): Promise<BatchResults> {
    const session = await this.findSession(principal.organizationId, sessionId);
    const items = batchItems(rawBody);
    assertSendable(session);
    const results: Array<BatchResult | undefined> = new Array(items.length);
    const fail = (index: number, err: unknown) => {
      if (!(err instanceof DomainError)) throw err;
      results[index] = { status: ERROR_STATUS[err.code], message: null, error: err.toBody().error };
    };

    interface Item {
      index: number;
      body: SendBatchItemDto;
      targets: SendTargets;
    }
    const valid: Item[] = [];
    for (const [index, raw] of items.entries()) {
      try {
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
          throw new DomainError('validation_error', 'the message is invalid', { fields: { message: ['must be a JSON object'] } });
        }
        const body = plainTextItem(raw) ?? ((await this.validation.transform(raw, { type: 'body', metatype: SendBatchItemDto, data: '' })) as SendBatchItemDto);
        valid.push({ index, body, targets: await this.targets(session, body) });
      } catch (err) {
        fail(index, err);
      }
    }

    // repeats: of an earlier send (the first message, nothing counted), or of an earlier item of this batch
    const keys = [...new Set(valid.flatMap((v) => (v.body.idempotencyKey === undefined ? [] : [v.body.idempotencyKey])))];
    const firsts = await this.messages.findByIdempotencyKeys(session.id, keys, IDEMPOTENCY_WINDOW_MS);
    await this.messages.releaseIdempotencyKeys(session.id, keys.filter((k) => !firsts.has(k)), IDEMPOTENCY_WINDOW_MS);
    const firstItemOfKey = new Map<string, number>();
    const repeats: Array<[index: number, of: number]> = [];
    const fresh: Array<Item & { id: string; sendAt?: number }> = [];
    for (const v of valid) {
      const key = v.body.idempotencyKey;
      const first = key === undefined ? undefined : firsts.get(key);
      if (first) results[v.index] = { status: 202, message: toMessageView(first), error: null };
      else if (key !== undefined && firstItemOfKey.has(key)) repeats.push([v.index, firstItemOfKey.get(key)!]);
      else {
        if (key !== undefined) firstItemOfKey.set(key, v.index);
        fresh.push({ ...v, id: newId('msg'), sendAt: isScheduled(v.body) ? v.body.sendAt : undefined });
      }
    }

    // the rates: read from the row on every send, so a PATCH applies to the very next batch
    // a scheduled item is counted when it is due, not now
    const now = fresh.filter((f) => f.sendAt === undefined);
    const decision = await this.limiter.tryAcceptMany(session.id, now.map((f) => f.id), { ratePerMin: session.ratePerMin, ratePerHour: session.ratePerHour });
    const refused = new Set(now.slice(decision.accepted).map((f) => f.id));
    const counted = fresh.filter((f) => !refused.has(f.id));
    for (const f of now.slice(decision.accepted)) fail(f.index, rateLimited(session, decision.retryAfterMs, decision.limit ?? 'ratePerMin'));

    const uncount: string[] = [];
    const batch: Array<{ index: number; message: NewMessage; media: Buffer | null }> = [];
    try {
      for (const c of counted) {
        try {
          const bytes = c.body.media ? await this.mediaBytes(c.body.media) : null;
          const sendOptions = await this.sendOptionsOf(c.body, c.targets.polled);
          batch.push({ index: c.index, message: this.newMessage(session, c.id, c.body, c.targets, bytes, c.body.idempotencyKey ?? null, { sendOptions, sendAt: c.sendAt }), media: bytes });
        } catch (err) {
          uncount.push(c.id);
          fail(c.index, err);
        }
      }
      const rows = await this.queue.insertOutboundMany(session.organizationId, session.id, batch);
      const raced: Array<{ index: number; key: string }> = [];
      for (const b of batch) {
        const row = rows.get(b.message.id);
        if (row) results[b.index] = { status: 202, message: toMessageView(row), error: null };
        else {
          // a concurrent repeat with the same key was stored first: answered with it, counted once
          uncount.push(b.message.id);
          if (b.message.idempotencyKey === null || b.message.idempotencyKey === undefined) {
            // nothing else refuses a row without a key: the session was deleted meanwhile (404)
            await this.findSession(session.organizationId, session.id);
            throw new Error(`message ${b.message.id} conflicted with a stored one`);
          }
          raced.push({ index: b.index, key: b.message.idempotencyKey });
        }
      }
      if (raced.length > 0) {
        const stored = await this.messages.findByIdempotencyKeys(session.id, raced.map((r) => r.key), IDEMPOTENCY_WINDOW_MS);
        for (const r of raced) {
          const first = stored.get(r.key);
          if (!first) throw new Error(`a message with idempotency key ${r.key} conflicted with a stored one that is gone`);
          results[r.index] = { status: 202, message: toMessageView(first), error: null };
        }
      }
      if (rows.size > 0 && session.gatewayId) await this.notify(session.gatewayId, session.id);
    } catch (err) {
      // nothing of the batch was stored: every counted send goes back
      await this.limiter.releaseMany(session.id, counted.map((c) => c.id)).catch(() => undefined);
      throw err;
    }
    if (uncount.length > 0) await this.limiter.releaseMany(session.id, uncount).catch(() => undefined);
    for (const [index, of] of repeats) results[index] = results[of];
    return { results: results.map((r, i) => r ?? unreachable(i)) };
  }

  // ---------------------------------------------------------------------------------------------


  /**
   * The messages a send names: quoted, reacted, voted (404 when not of this session; 422 when the reaction is in another
   * chat or the vote does not fit its poll).
   */
  private async targets(session: Session, body: SendMessageDto): Promise<SendTargets> {
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
    return { quoted, reacted, polled };
  }

  /** What the gateway needs besides the Message to send it: a poll vote's poll, a text's link preview (made here). */
  private async sendOptionsOf(body: SendMessageDto, polled: MessageRow | null): Promise<MessageSendOptions | null> {
    if (polled) return { pollVote: { poll: messageKeyOf(polled), options: body.pollVote!.options } };
    const type: OutboundMessageType = body.type ?? 'text';
    if (type !== 'text' || body.linkPreview === false || !this.previews) return null;
    const linkPreview = await this.previews.previewOf(body.text!);
    return linkPreview ? { linkPreview } : null;
  }

  /** The row of an accepted send; `chatJid` overrides `to` (a status post goes to status@broadcast). */
  private newMessage(
    session: Pick<Session, 'id' | 'organizationId' | 'waJid'>,
    id: string,
    body: SendMessageDto,
    { quoted, reacted }: SendTargets,
    bytes: Buffer | null,
    idempotencyKey: string | null,
    extra: { chatJid?: string; sendOptions: MessageSendOptions | null; sendAt?: number },
  ): NewMessage {
    const type: OutboundMessageType = body.type ?? 'text';
    return {
      id,
      organizationId: session.organizationId,
      sessionId: session.id,
      waMessageId: newWaMessageId(),
      direction: 'out',
      chatJid: extra.chatJid ?? body.to,
      from: session.waJid,
      type,
      text: type === 'text' ? body.text! : null,
      media: body.media && bytes
        ? { mimetype: body.media.mimetype, size: bytes.length, filename: body.media.filename ?? null, caption: isCaptionedMediaType(type) ? (body.text ?? null) : null }
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
      status: extra.sendAt ? 'scheduled' : 'queued',
      sendAt: extra.sendAt ?? null,
      idempotencyKey,
      sendOptions: extra.sendOptions,
    };
  }


  /** The one read of `sessions` here. */
  private async findSession(organizationId: string, id: string): Promise<Session> {
    const session = await this.sessions.findInOrganization(organizationId, id);
    if (!session) throw notFound(id);
    return session;
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
      const body = plainTextBody(raw) ?? ((await this.validation.transform(raw, { type: 'body', metatype: SendMessageDto, data: '' })) as SendMessageDto);
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
