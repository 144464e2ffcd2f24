import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { DomainError, ERROR_STATUS, ErrorBody, MessageSendOptions, MessageView, OutboundMessageType, SessionStatus } from '@app/contracts';
import { MessageQueueRepository, MessageRow, MessagesRepository, NewMessage, NewOutbound, newId, OwnedSession, Session, SessionsRepository, toMessageView } from '@app/database';
import { GroupCommit, REDIS_CLIENT } from '@app/infra';
import { RateDecision, RateLimitName, SendRateLimiter, SendSignal } from '@app/messaging';
import { Redis } from '@app/redis';
import type { Principal } from '../common/principal';
import type { DeferredRequestLimits } from '../limits/deferred-request-limits';
import { ApiValidationPipe } from '../common/validation.pipe';
import { BATCH_MAX, SendBatchItemDto } from './dto/send-batch.dto';
import { plainTextBody, plainTextItem } from './dto/plain-text-body';
import { IDEMPOTENCY_KEY, SendMediaDto, SendMessageDto } from './dto/send-message.dto';
import { LinkPreviewer } from './link-preview';
import { MediaFetcher, mediaTooLarge } from './media-fetcher';
import { messageKeyOf, pollVoteProblem } from './message-keys';
import { findOwnSession, sessionNotFound } from '../sessions/own-session';
import { NO_TARGETS, outboundMessage, SendTargets } from './outbound-message';

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

/** A send with a `sendAt` still ahead (CONTRACT 17): stored `scheduled`; a time already past is a send now. */
const isScheduled = (body: SendMessageDto): body is SendMessageDto & { sendAt: number } => body.sendAt !== undefined && body.sendAt > Date.now();

/**
 * How many times a plain send is offered to the accept statement while the session reads sendable between tries: a
 * session moving between gateways is `starting` for a moment on its new one, so a send can be refused by the statement
 * and find the session `working` again when it is read to explain why.
 */
const PLAIN_ACCEPT_TRIES = 3;

/** The plain sends one accept statement takes at most; more waiting go in the statements after it, in their order. */
const ACCEPT_GROUP_MAX = 100;

/** The media bytes one accept statement carries at most (a media send larger than this goes alone). */
const ACCEPT_GROUP_MEDIA_BYTES = 16 * 1024 * 1024;

/** A plain send's accept: its row (null: not stored), and its group's signal, which never fails (see `notify`). */
interface PlainAccepted {
  row: MessageRow | null;
  signalled: Promise<void>;
}

/** The accept group's key of a plain send: the session and the caller's organization (one statement checks both). */
export const plainAcceptKey = (organizationId: string, sessionId: string) => `${organizationId}/${sessionId}`;


/** The session's rates as the limiter takes them. */
const rates = (session: Session) => ({ ratePerMin: session.ratePerMin, ratePerHour: session.ratePerHour });

/** 409 unless the session accepts sends now (CONTRACT 10: `working` or `reconnecting`). */
export function assertSendable(session: Session): void {
  if (!SENDABLE.includes(session.status)) {
    throw new DomainError('conflict', `the session is ${session.status}: messages are accepted while it is working or reconnecting`, {
      status: session.status,
    });
  }
}

/**
 * One message on the accept path once its route has checked it (steps 1–4 of MessagesService): what steps 5–9 need.
 * `build` is step 7 for it: its row and media bytes (media fetched, a link preview made, a status post's audience
 * recorded), given its id.
 */
interface Draft {
  /** its position in the request (a single send: 0) */
  index: number;
  id: string;
  idempotencyKey: string | null;
  /** a `sendAt` still ahead (CONTRACT 17): counted when it is due (the gateway's CampaignScheduler), not now */
  scheduled: boolean;
  build(id: string): Promise<{ message: NewMessage; bytes: Buffer | null }>;
}

/** A message's outcome on the accept path: its row (stored now, or the first of its idempotency key), or its error. */
type Outcome = { row: MessageRow } | { error: DomainError };

/** A built send of step 7, on its way to the statement. */
interface Built {
  index: number;
  id: string;
  idempotencyKey: string | null;
  outbound: NewOutbound;
}

/** An outcome as a bulk send answers it at its position: a Message (202) or its error. */
function resultOf(outcome: Outcome): BatchResult {
  if ('row' in outcome) return { status: 202, message: toMessageView(outcome.row), error: null };
  return { status: ERROR_STATUS[outcome.error.code], message: null, error: outcome.error.toBody().error };
}

/** A step's failure as its message's outcome; anything but a DomainError fails the whole request. */
function failed(err: unknown): Outcome {
  if (!(err instanceof DomainError)) throw err;
  return { error: err };
}

/**
 * Sending (the log's reads are MessageLogService's). A send is accepted here and only here, by one ordered list of
 * steps (CONTRACT 10; docs/messages.md, "The accept path") that every route runs: a send (`send`), a queued send
 * (`sendQueued`, Chatwoot), a bulk send (`sendBatch`), a forward and a status post (`accept`, after their own checks):
 *
 * 1. session: the caller's organization's (404);
 * 2. body: the body and its Idempotency-Key (422); a bulk send's envelope, then each message (its own 422);
 * 3. targets: the quoted, reacted or voted message of this session (404; 422 when the reaction or vote does not fit);
 * 4. state: the session accepts sends now (409: `working` or `reconnecting`; a queued send also a paired `starting`);
 *    a bulk send checks it before 2–3's per-message checks, which can only fail their own message;
 * 5. repeats: a key stored within IDEMPOTENCY_WINDOW_MS answers its first message, counting nothing; a key repeated
 *    inside a bulk send answers its first item's outcome;
 * 6. rates: counted against the session's windows (429; a bulk send's longest prefix they allow), a scheduled send not;
 * 7. build: media bytes (413, 422), the link preview, the row; a failure gives its count back;
 * 8. insert: one statement of all, in order (`insertOutboundMany`); a concurrent repeat stored first answers it;
 * 9. notify: one signal to the session's gateway, which sends them.
 *
 * The fast path is a branch of it (`sendPlain`): a send without an Idempotency-Key that names no other message skips
 * step 1's read; steps 1, 4 and 6 are one Redis script (the rates this service keeps there) and one statement of the
 * session's concurrent plain sends (`plainAccepts`, a group commit), and an error is explained by reading the session
 * then, in the list's order.
 */
@Injectable()
export class MessagesService {
  private readonly logger = new Logger('messages');
  private readonly validation = new ApiValidationPipe();
  /** Concurrent plain sends of a session (a lane), stored by one statement per group (`acceptGroup`). */
  readonly plainAccepts = new GroupCommit<NewOutbound, PlainAccepted>((group) => this.acceptGroup(group), {
    maxSize: ACCEPT_GROUP_MAX,
    // one statement in flight per session, which the session row's lock would impose anyway; the next takes what
    // arrived meanwhile, and a lone send waits for nothing
    maxInFlight: 1,
    linger: 'none',
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
   * `POST …/messages` and a status post (`broadcast`): the accept path's steps in order. `requestLimits`: the request's
   * API-wide limits when the middleware left them to the send (counted by the fast path's script, or here first).
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
    return this.acceptOne(session, await this.validate(rawBody, idempotencyKey), idempotencyKey ?? null, { broadcast });
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
    return this.acceptOne(session, await this.validate(rawBody, idempotencyKey), idempotencyKey, { whileStarting: true });
  }

  /**
   * A bulk send (`POST …/messages:batch`): 1..BATCH_MAX messages of one session, each run through the steps as a send
   * of its own and answered at its position (a Message, or that message's error: 422, 404, 413, 429), never failing
   * the others; the request itself fails only at steps 1, 2 (its envelope) and 4. Steps 5–9 take all its messages at
   * once: one read of their keys, one count of the rates, one insert in the batch's order, one signal.
   */
  async sendBatch(principal: Principal, sessionId: string, rawBody: unknown): Promise<BatchResults> {
    const session = await this.findSession(principal.organizationId, sessionId);
    const items = batchItems(rawBody);
    assertSendable(session);
    const outcomes = new Map<number, Outcome>();
    const drafts: Draft[] = [];
    for (const [index, raw] of items.entries()) {
      try {
        const body = await this.validateItem(raw);
        drafts.push(this.draftOf(session, body, await this.targets(session, body), body.idempotencyKey ?? null, index));
      } catch (err) {
        outcomes.set(index, failed(err));
      }
    }
    for (const [index, outcome] of await this.acceptDrafts(session, drafts)) outcomes.set(index, outcome);
    return { results: items.map((_, i) => resultOf(outcomes.get(i) ?? unreachable(i))) };
  }

  /**
   * Steps 5–9 for one send checked by its caller (steps 1–4: a forward, a send): its Message, or its error thrown.
   * `scheduled`: counted when due, not now.
   */
  async accept(session: OwnedSession, idempotencyKey: string | null, build: Draft['build'], scheduled = false): Promise<MessageView> {
    return this.acceptDraft(session, { index: 0, id: newId('msg'), idempotencyKey, scheduled, build });
  }

  private async acceptDraft(session: OwnedSession, draft: Draft): Promise<MessageView> {
    const outcome = (await this.acceptDrafts(session, [draft])).get(draft.index) ?? unreachable(draft.index);
    if ('error' in outcome) throw outcome.error;
    return toMessageView(outcome.row);
  }

  /** Steps 3–9 of one send whose session is read (1) and body valid (2); `whileStarting`: see `sendQueued`. */
  private async acceptOne(
    session: OwnedSession,
    body: SendMessageDto,
    idempotencyKey: string | null,
    { broadcast, whileStarting = false }: { broadcast?: BroadcastSend; whileStarting?: boolean },
  ): Promise<MessageView> {
    const targets = await this.targets(session, body);
    if (!(whileStarting && session.status === 'starting' && session.phoneNumber !== null)) assertSendable(session);
    return this.acceptDraft(session, this.draftOf(session, body, targets, idempotencyKey, 0, broadcast));
  }

  /**
   * The fast path (see the class): a send without an Idempotency-Key that names no other message, accepted without
   * reading the session first. One Redis round trip counts it against the session's rates as the limiter keeps them
   * (`tryAcceptKept`: the organization and the rates, dropped by a change of the rates), one statement stores it only
   * if the session is the caller's and sendable now, with the session's other plain sends that arrived while its
   * previous statement was in flight (`plainAccepts`, `insertAcceptedMany`), then one signal for the group. An error is
   * explained by reading the session then (404 before 422 before 409 before 429), and a refused or failed accept gives
   * its slot back. A send that names a message, or whose rates are not kept, reads the session first. The request's
   * deferred API-wide limits are counted by the same script, before the send (refused: the middleware's 429); a path
   * that does not reach it counts them first.
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
      return this.acceptOne(await this.findSession(organizationId, sessionId), body, null, {});
    }

    // the sender is the session's own wa_jid, set by the statement
    const draft = this.draftOf({ id: sessionId, organizationId, waJid: null }, body, NO_TARGETS, null);
    await this.countPlain(organizationId, sessionId, draft.id, requestLimits);
    let accepted: PlainAccepted & { row: MessageRow };
    try {
      const { message, bytes } = await draft.build(draft.id);
      accepted = await this.acceptPlain(organizationId, sessionId, { message, media: bytes });
    } catch (err) {
      await this.limiter.release(sessionId, draft.id).catch(() => undefined);
      throw err;
    }
    await accepted.signalled;
    return toMessageView(accepted.row);
  }

  /** The fast path's steps 1, 4 and 6 in Redis: counted, or the answer a read of the session explains (404, 409, 429). */
  private async countPlain(organizationId: string, sessionId: string, id: string, requestLimits: DeferredRequestLimits | null): Promise<void> {
    const kept = await this.limiter.tryAcceptKept(sessionId, organizationId, id, requestLimits?.take() ?? undefined);
    if ('requestLimited' in kept) throw requestLimits!.refused(kept.requestLimited);
    if ('stranger' in kept) throw sessionNotFound(sessionId);
    let decision: RateDecision;
    if ('unknown' in kept) {
      const session = await this.findSession(organizationId, sessionId);
      assertSendable(session);
      decision = await this.limiter.tryAcceptFilling(session.id, organizationId, id, rates(session), kept.gen);
    } else decision = kept;
    if (!decision.accepted) {
      const session = await this.findSession(organizationId, sessionId);
      assertSendable(session);
      throw rateLimited(session, decision.retryAfterMs, decision.limit);
    }
  }

  /**
   * A plain send through the accept statement. Refused (nothing stored), the session is read to say why: gone or not
   * the caller's (404), not sendable (409). Sendable when read means its status changed between the statement and the
   * read (a move between gateways: `starting` on the new one, then `working`), so the send is offered again, for the
   * new holder; a session still changing state after PLAIN_ACCEPT_TRIES answers 409 with its status, never a 500.
   */
  private async acceptPlain(organizationId: string, sessionId: string, send: NewOutbound): Promise<PlainAccepted & { row: MessageRow }> {
    for (let tries = 1; ; tries++) {
      const accepted = await this.plainAccepts.submit(send, plainAcceptKey(organizationId, sessionId));
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

  /** Step 9. Only a nudge: the gateway also sweeps for queued rows, so a lost signal delays the send, nothing more. */
  private async notify(gatewayId: string, sessionId: string): Promise<void> {
    await this.signal.notify(this.redis, gatewayId, sessionId).catch((err) => this.logger.warn(`send signal lost for ${sessionId}: ${String(err)}`));
  }

  // ------------------------------------------------------------------------------------- steps 5–9, for every route

  /** Steps 5–9 for the drafts of one session, in order; each draft's outcome by its index. */
  private async acceptDrafts(session: OwnedSession, drafts: Draft[]): Promise<Map<number, Outcome>> {
    const outcomes = new Map<number, Outcome>();
    const { fresh, repeats } = await this.repeats(session, drafts, outcomes);
    const counted = await this.count(session, fresh, outcomes);
    await this.store(session, counted, outcomes);
    for (const [index, of] of repeats) outcomes.set(index, outcomes.get(of) ?? unreachable(of));
    return outcomes;
  }

  /**
   * Step 5: a key stored within the window answers its first message, nothing counted (a key past it is freed for
   * reuse); a key repeated among the drafts is answered with its first draft's outcome (`repeats`: [index, of]).
   */
  private async repeats(session: OwnedSession, drafts: Draft[], outcomes: Map<number, Outcome>): Promise<{ fresh: Draft[]; repeats: Array<[number, number]> }> {
    const keys = [...new Set(drafts.flatMap((d) => (d.idempotencyKey === null ? [] : [d.idempotencyKey])))];
    const firsts = await this.messages.findByIdempotencyKeys(session, keys, IDEMPOTENCY_WINDOW_MS);
    await this.messages.releaseIdempotencyKeys(session, keys.filter((k) => !firsts.has(k)), IDEMPOTENCY_WINDOW_MS);
    const firstDraftOfKey = new Map<string, number>();
    const repeats: Array<[number, number]> = [];
    const fresh: Draft[] = [];
    for (const d of drafts) {
      const key = d.idempotencyKey;
      const first = key === null ? undefined : firsts.get(key);
      if (first) outcomes.set(d.index, { row: first });
      else if (key !== null && firstDraftOfKey.has(key)) repeats.push([d.index, firstDraftOfKey.get(key)!]);
      else {
        if (key !== null) firstDraftOfKey.set(key, d.index);
        fresh.push(d);
      }
    }
    return { fresh, repeats };
  }

  /**
   * Step 6: the rates, read from the row on every send (a PATCH applies to the very next one): the longest prefix of
   * the sends due now that both windows allow is counted, the rest answer 429. Returns what goes on to step 7.
   */
  private async count(session: OwnedSession, fresh: Draft[], outcomes: Map<number, Outcome>): Promise<Draft[]> {
    const now = fresh.filter((d) => !d.scheduled);
    const decision = await this.limiter.tryAcceptMany(session.id, now.map((d) => d.id), rates(session));
    const refused = now.slice(decision.accepted);
    for (const d of refused) outcomes.set(d.index, { error: rateLimited(session, decision.retryAfterMs, decision.limit ?? 'ratePerMin') });
    const refusedIds = new Set(refused.map((d) => d.id));
    return fresh.filter((d) => !refusedIds.has(d.id));
  }

  /**
   * Steps 7–9: each send built (its failure is its own outcome, its count given back), all stored by one statement in
   * order, then one signal. Anything else failing stores nothing and gives every count back.
   */
  private async store(session: OwnedSession, counted: Draft[], outcomes: Map<number, Outcome>): Promise<void> {
    const uncount: string[] = [];
    try {
      const built: Built[] = [];
      for (const d of counted) {
        try {
          const { message, bytes } = await d.build(d.id);
          built.push({ index: d.index, id: d.id, idempotencyKey: d.idempotencyKey, outbound: { message, media: bytes } });
        } catch (err) {
          uncount.push(d.id);
          outcomes.set(d.index, failed(err));
        }
      }
      const rows = await this.queue.insertOutboundMany(session, built.map((b) => b.outbound));
      await this.conflicts(session, built, rows, outcomes, uncount);
      if (rows.size > 0 && session.gatewayId) await this.notify(session.gatewayId, session.id);
    } catch (err) {
      await this.limiter.releaseMany(session.id, counted.map((d) => d.id)).catch(() => undefined);
      throw err;
    }
    if (uncount.length > 0) await this.limiter.releaseMany(session.id, uncount).catch(() => undefined);
  }

  /**
   * Step 8's answers: a stored send's row; one missing from the rows lost to a concurrent repeat of its key stored
   * first, answered with that one (and counted once). Nothing else refuses a row: without such a repeat the session
   * was deleted meanwhile (404).
   */
  private async conflicts(session: OwnedSession, built: Built[], rows: Map<string, MessageRow>, outcomes: Map<number, Outcome>, uncount: string[]): Promise<void> {
    const lost = built.filter((b) => !rows.has(b.id));
    for (const b of built) if (rows.has(b.id)) outcomes.set(b.index, { row: rows.get(b.id)! });
    if (lost.length === 0) return;
    uncount.push(...lost.map((b) => b.id));
    const keys = lost.flatMap((b) => (b.idempotencyKey === null ? [] : [b.idempotencyKey]));
    const firsts = await this.messages.findByIdempotencyKeys(session, keys, IDEMPOTENCY_WINDOW_MS);
    for (const b of lost) {
      const first = b.idempotencyKey === null ? undefined : firsts.get(b.idempotencyKey);
      if (!first) {
        await this.findSession(session.organizationId, session.id);
        throw new Error(`message ${b.id} conflicted with a stored one`);
      }
      outcomes.set(b.index, { row: first });
    }
  }

  // ------------------------------------------------------------------------------------- steps 1–4 and 7, per send

  /** A checked send as steps 5–9 take it; its `build` (step 7) makes the row of `body` for `session`. */
  private draftOf(
    session: Pick<Session, 'id' | 'organizationId' | 'waJid'>,
    body: SendMessageDto,
    targets: SendTargets,
    idempotencyKey: string | null,
    index = 0,
    broadcast?: BroadcastSend,
  ): Draft {
    const sendAt = isScheduled(body) ? body.sendAt : undefined;
    const build = async (id: string) => {
      const bytes = body.media ? await this.mediaBytes(body.media) : null;
      const sendOptions = await this.sendOptionsOf(body, targets.polled);
      const message = outboundMessage(session, id, body, targets, bytes, idempotencyKey, { chatJid: broadcast?.chatJid, sendOptions, sendAt });
      if (broadcast) await broadcast.record(id);
      return { message, bytes };
    };
    return { index, id: newId('msg'), idempotencyKey, scheduled: sendAt !== undefined, build };
  }

  /**
   * The messages a send names: quoted, reacted, voted (404 when not of this session; 422 when the reaction is in another
   * chat or the vote does not fit its poll).
   */
  private async targets(session: OwnedSession, body: SendMessageDto): Promise<SendTargets> {
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

  /** Step 1: the one read of `sessions` here. */
  private findSession(organizationId: string, id: string): Promise<OwnedSession> {
    return findOwnSession(this.sessions, organizationId, id);
  }

  private async findTarget(session: OwnedSession, messageId: string, field: string): Promise<MessageRow> {
    const message = await this.messages.findInSession(session, messageId);
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

  /** Step 2 for one message of a bulk send, by the global pipe's rules. */
  private async validateItem(raw: unknown): Promise<SendBatchItemDto> {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new DomainError('validation_error', 'the message is invalid', { fields: { message: ['must be a JSON object'] } });
    }
    return plainTextItem(raw) ?? ((await this.validation.transform(raw, { type: 'body', metatype: SendBatchItemDto, data: '' })) as SendBatchItemDto);
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
