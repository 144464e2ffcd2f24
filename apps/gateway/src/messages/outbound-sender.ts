import type { Logger } from 'pino';
import {
  AckStatus,
  CatalogEvent,
  DomainError,
  ErrorCode,
  MediaMessageType,
  mediaContent,
  MessageKeyRef,
  MessageType,
  OutboundContent,
  OutboundMessage,
  STATUS_BROADCAST_JID,
  StatusPostOptions,
} from '@app/contracts';
import { toMessageView } from '@app/database';
import type { EngineConnection } from '../engine/engine.interface';
import type { SessionEvent, SessionEventSink } from '../store-ports';
import { isGroupJid, MessageRow, MessageStore, MessagingSettings, QueueHead } from './message-store';
import type { SendPacing } from './send-pacing';
import { SentRecords } from './sent-records';

/** Errors from the network that a resend cannot heal: the message fails at once instead of blocking the queue. */
const PERMANENT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['validation_error', 'not_found', 'payload_too_large', 'forbidden']);
/**
 * Sends that fail on a connection that stays up (anything not known to be permanent) are retried; after this many
 * in a row the message fails, so one poison message cannot hold a session's queue for MESSAGE_TTL_SECONDS.
 */
export const MAX_LIVE_ATTEMPTS = 5;
/** Queued rows read per query; the drain sends them one after another and reads again only when it used them all. */
export const DRAIN_BATCH = 32;

export interface OutboundSenderDeps {
  sessionId: string;
  organizationId: string;
  store: MessageStore;
  events: SessionEventSink;
  settings: MessagingSettings;
  /** the session's connection while it is `working`, else null */
  live: () => EngineConnection | null;
  logger: Logger;
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** fault injection (GATEWAY_FAULT=crash-after-send): runs after the network took a send, before it is recorded */
  afterNetworkAck?: () => void;
  /** spaces the sends of a backlog (send-pacing.ts); without one, rows are sent back to back */
  pacing?: SendPacing;
  /** how a status post goes out (StatusPostsRepository); absent: a status post cannot be sent */
  statusPosts?: StatusPostLookup;
  /** where the records of sends go (the gateway's, grouped across its sessions); absent: records of this sender's own */
  sentRecords?: SentRecords;
  /** campaigns (CONTRACT 17) this gateway was told are paused or cancelled: their messages are not sent (absent: none) */
  campaigns?: CampaignSendHooks;
}

/** How the sender meets the campaign scheduler (apps/gateway/src/campaigns) of its gateway. */
export interface CampaignSendHooks {
  /** true: the campaign was paused or cancelled (a signal): its message is left for the scheduler, not sent */
  halted(campaignId: string): boolean;
  /** a campaign's message was recorded sent or failed: its next step may be due (pacing counts from the send) */
  settled(campaignId: string): void;
  /**
   * Ordinary sends first (docs/campaigns.md): an ordinary message (not a campaign's) is under way from when it was read
   * until the network took it or it failed; the returned function ends it
   */
  ordinaryStarted(): () => void;
  /** resolves when a campaign's message may go to the network; the returned function ends its turn */
  campaignTurn(): Promise<() => void>;
}

/** The audience and background of a status post (a message to status@broadcast), by message id. */
export interface StatusPostLookup {
  optionsOf(messageId: string): Promise<StatusPostOptions | null>;
}

/** A send the network took, not recorded yet. */
interface PendingRecord {
  row: MessageRow;
  sentAt: number;
  raw: Uint8Array | null;
}

/** A queued row that cannot become a network message (its media bytes or its reaction target are gone). */
class UnsendableMessage extends Error {}

const sendMedia = async (row: MessageRow, deps: Pick<OutboundSenderDeps, 'store'>, type: MediaMessageType): Promise<OutboundContent> => {
  const data = await deps.store.mediaOf(row.id);
  if (!data || !row.media) throw new UnsendableMessage('media bytes are missing');
  return mediaContent(type, { data, mimetype: row.media.mimetype, filename: row.media.filename }, row.media.caption ?? row.text);
};

/**
 * A stored row → what the engine sends, one entry per message type (docs/messages.md, "adding a message type"): a type
 * missing here does not compile. A forward is handled before (contentOf).
 */
const OUTBOUND_CONTENT: Record<MessageType, (row: MessageRow, deps: Pick<OutboundSenderDeps, 'store' | 'sessionId'>) => Promise<OutboundContent>> = {
  text: async (row) => ({ type: 'text', text: row.text ?? '', ...(row.sendOptions?.linkPreview ? { linkPreview: row.sendOptions.linkPreview } : {}) }),
  image: (row, deps) => sendMedia(row, deps, 'image'),
  video: (row, deps) => sendMedia(row, deps, 'video'),
  document: (row, deps) => sendMedia(row, deps, 'document'),
  audio: (row, deps) => sendMedia(row, deps, 'audio'),
  voice: (row, deps) => sendMedia(row, deps, 'voice'),
  sticker: (row, deps) => sendMedia(row, deps, 'sticker'),
  pollVote: async (row) => {
    const vote = row.sendOptions?.pollVote;
    if (!vote) throw new UnsendableMessage('the poll vote is missing');
    return { type: 'pollVote', poll: vote.poll, options: vote.options };
  },
  location: async (row) => {
    if (!row.location) throw new UnsendableMessage('location is missing');
    return { type: 'location', location: row.location };
  },
  contact: async (row) => {
    if (!row.contact) throw new UnsendableMessage('contact is missing');
    return { type: 'contact', contact: row.contact };
  },
  poll: async (row) => {
    if (!row.poll) throw new UnsendableMessage('poll is missing');
    return { type: 'poll', poll: row.poll };
  },
  reaction: async (row, deps) => {
    if (!row.reaction) throw new UnsendableMessage('reaction is missing');
    const target = await deps.store.findByWaId(deps.sessionId, row.reaction.waMessageId);
    if (!target) throw new UnsendableMessage('the message reacted to is not in the log');
    return { type: 'reaction', target: keyOf(target), emoji: row.reaction.emoji };
  },
  // what only arrives is never sent
  unknown: async (row) => {
    throw new UnsendableMessage(`messages of type ${row.type} cannot be sent`);
  },
};

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/** How long "typing…" shows before a text: grows with the text, bounded both ways. */
export function typingMs(text: string, s: Pick<MessagingSettings, 'typingMsPerChar' | 'typingMinMs' | 'typingMaxMs'>): number {
  return Math.min(Math.max(text.length * s.typingMsPerChar, s.typingMinMs), s.typingMaxMs);
}

/**
 * Sends one session's queued messages, one at a time, in acceptance order (PostgreSQL is the queue; see
 * docs/messages.md).
 *
 * Exactly once on the network: the waMessageId was fixed when the API accepted the message, and every attempt sends
 * with it. A crash after the network took a send but before its record (`markSentMany`) leaves the row `queued`; the next drain sends
 * it again with the same id, which the network stores once. The record is conditional (`WHERE status = 'queued'`),
 * so `message.sent` is published once whatever happens around it.
 */
export class OutboundSender {
  private running: Promise<void> | null = null;
  private again = false;
  /** whether the acks a previous holder left kept on sent rows were applied (once, at the first drain) */
  private heldAcksApplied = false;
  /** receipts and the record of a send exclude each other, so an ack is either applied or held, never dropped */
  private recording: Promise<unknown> = Promise.resolve();
  private failedAttempts = { messageId: '', count: 0 };
  /** ends the ordinary send this sender is at (`atRow`), if any */
  private ordinaryMark: (() => void) | null = null;
  /** ends the wait an API signal started (`trigger(true)`): until a read that began after it has read its rows */
  private signalMark: (() => void) | null = null;
  /** sends the network took that wait for the record under way (`record`), in send order */
  private readonly unrecorded: PendingRecord[] = [];
  private recorder: Promise<void> | null = null;
  private recordFailure: unknown = null;
  private readonly clock: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly sentRecords: SentRecords;

  constructor(private readonly deps: OutboundSenderDeps) {
    this.clock = deps.clock ?? Date.now;
    this.sleep = deps.sleep ?? realSleep;
    this.sentRecords = deps.sentRecords ?? new SentRecords(deps.store, deps.events);
  }

  /**
   * Drains the queue now, or once more after the drain under way; resolves when no drain is running. `ordinary`: the
   * API signalled messages it queued (or scheduled sends came due): campaign work on the gateway waits from now until
   * a read has taken them, and then for as long as this sender is at an ordinary row (`atRow`).
   */
  trigger(ordinary = false): Promise<void> {
    if (ordinary) this.signalMark ??= this.deps.campaigns?.ordinaryStarted() ?? null;
    this.again = true;
    this.running ??= this.loop();
    return this.running;
  }

  /** Resolves once no drain is running (shutdown waits for the send in flight to be recorded). */
  async settled(): Promise<void> {
    await this.running;
  }

  /**
   * A receipt from the recipient's phone: moves the message forward and publishes `message.ack`, or, when it overtook
   * the record of the send, is kept on the queued row (PostgreSQL, not memory) and applied once the send is recorded.
   */
  onReceipt(waMessageId: string, status: AckStatus): Promise<void> {
    return this.exclusive(async () => void (await this.ack(waMessageId, status)));
  }

  /**
   * A group member's receipt: kept per member on the row; `message.ack` with the `participant` when that member moved
   * forward, and one without it when the whole message reached a new step (every one of `members` got there).
   */
  onMemberReceipt(waMessageId: string, status: AckStatus, participant: string, members: string[]): Promise<void> {
    return this.exclusive(() =>
      this.deps.events.transact(async (tx, publish) => {
        const outcome = await this.deps.store.applyMemberAck(this.deps.sessionId, waMessageId, participant, status, members, tx);
        if (!outcome) return;
        const { row } = outcome;
        publish(this.event({ event: 'message.ack', payload: { messageId: row.id, waMessageId: row.waMessageId, chatJid: row.chatJid, status, participant } }));
        // the message's own step: only ever an ack step (the row moves forward from sent)
        const step = row.status;
        if (outcome.moved && (step === 'delivered' || step === 'read' || step === 'played')) {
          publish(this.event({ event: 'message.ack', payload: { messageId: row.id, waMessageId: row.waMessageId, chatJid: row.chatJid, status: step } }));
        }
      }),
    );
  }

  private async loop(): Promise<void> {
    while (this.again) {
      this.again = false;
      try {
        await this.drain();
      } catch (err) {
        // PostgreSQL or the event stream failed: the row stays queued and the next trigger resends it
        this.deps.logger.error({ err: String(err) }, 'draining queued messages failed');
      }
    }
    // a drain that stopped before its read (a failure, no connection) ends a signal's wait too; and the loop is let
    // go in the same turn as its last look at `again`, so a trigger after that look starts a new loop (with
    // `.finally`, one in between was lost, and its signal's wait with it)
    this.takeSignal()?.();
    this.running = null;
  }

  /** The wait of the signal that came before this moment, for the read about to start to end. */
  private takeSignal(): (() => void) | null {
    const mark = this.signalMark;
    this.signalMark = null;
    return mark;
  }

  /**
   * Reads the head of the queue DRAIN_BATCH rows at a time and handles them one after another, in order, checking
   * each against the TTL and the connection as it comes to it. A full batch is followed by another read; a shorter
   * one was the whole queue when it was read, and ends the drain without the read that would find it empty: a message
   * committed after that read is signalled after its commit, so its trigger comes during this drain (which then runs
   * once more) or after it (a lost signal: the sweep), exactly as for a message committed after an empty read.
   */
  private async drain(): Promise<void> {
    try {
      await this.drainQueue();
    } finally {
      await this.recorded();
    }
  }

  private async drainQueue(): Promise<void> {
    const { store, sessionId, settings } = this.deps;
    if (!this.heldAcksApplied) {
      // a previous holder recorded sends but stopped before applying the acks kept on them
      await this.exclusive(async () => {
        for (const held of await store.heldAcksOf(sessionId)) await this.ack(held.waMessageId, held.status);
      });
      this.heldAcksApplied = true;
    }
    for (;;) {
      // a row sent but not recorded yet is still queued: read again only once every send so far is recorded
      await this.recorded();
      // the signalled rows committed before their signal, so this read takes them: its end ends the signal's wait,
      // and an ordinary first row holds campaign work from there on without a gap
      const signal = this.takeSignal();
      let head: QueueHead;
      try {
        // the session's presenceTyping comes with the batch, so a PATCH applies to the messages read after it
        head = await store.nextQueued(sessionId, DRAIN_BATCH);
        if (head.messages.length > 0) this.atRow(head.messages[0]);
      } finally {
        signal?.();
      }
      const { messages: batch, presenceTyping } = head;
      if (!(await this.sendBatch(batch, presenceTyping, settings.ttlMs))) return;
      if (batch.length < DRAIN_BATCH) return;
    }
  }

  /** The rows of one read, in order; false: stop the drain here (the rest stays queued for the next trigger). */
  private async sendBatch(batch: MessageRow[], presenceTyping: boolean, ttlMs: number): Promise<boolean> {
    try {
      for (const row of batch) {
        this.atRow(row);
        if (!(await this.handle(row, presenceTyping, ttlMs))) return false;
      }
      return true;
    } finally {
      this.atRow(null);
    }
  }

  /**
   * Ordinary sends first (docs/campaigns.md): while this sender is at an ordinary row (not a campaign's), campaign work
   * on the gateway waits for it (`ordinaryStarted`). A campaign's row ends that (the ordinary rows after it in this queue
   * cannot go before it anyway), and so do a pacing wait and the end of the batch (`row` null).
   */
  private atRow(row: MessageRow | null): void {
    if (row !== null && row.campaignId === null) {
      this.ordinaryMark ??= this.deps.campaigns?.ordinaryStarted() ?? null;
      return;
    }
    this.ordinaryMark?.();
    this.ordinaryMark = null;
  }

  /** One row: failed when it expired, else paced and sent; false: stop the drain here. */
  private async handle(row: MessageRow, presenceTyping: boolean, ttlMs: number): Promise<boolean> {
    // a scheduled send waits for a connection from when it was due, not from when it was accepted
    if (this.clock() - (row.sendAt ?? row.createdAt) > ttlMs) {
      await this.fail(row, `expired: waited more than ${Math.round(ttlMs / 1000)} s for a connection`);
      return true;
    }
    // a record failed: stop here, the rows stay queued for the next trigger
    if (this.recordFailure) return false;
    const conn = this.deps.live();
    // resumes when the session is `working` again
    if (!conn) return false;
    if (!(await this.pace(conn, row))) return false;
    return this.sendOne(conn, row, presenceTyping);
  }

  /** false: leave it queued and stop until the next trigger. */
  private async sendOne(conn: EngineConnection, row: MessageRow, presenceTyping: boolean): Promise<boolean> {
    let message: OutboundMessage;
    try {
      message = await this.build(row);
    } catch (err) {
      if (!(err instanceof UnsendableMessage)) throw err;
      await this.fail(row, err.message);
      return true;
    }
    // a paused or cancelled campaign's message: the pause withdrew it from the queue (withdrawCampaignQueued), this
    // sender read it before; skipped here, before "typing…" and again after it, so nothing is sent past the signal
    const halted = () => row.campaignId !== null && this.deps.campaigns?.halted(row.campaignId) === true;
    if (halted()) return true;
    const typing = presenceTyping || row.sendOptions?.typing === true;
    if (typing && message.content.type === 'text' && !message.statusPost) await this.showTyping(conn, row.chatJid, message.content.text);
    // a campaign's message waits for the ordinary sends under way on the gateway (its turn), then looks at the pause
    const endTurn = row.campaignId === null ? undefined : await this.deps.campaigns?.campaignTurn();
    try {
      if (halted()) return true;
      return await this.transmit(conn, row, message);
    } finally {
      endTurn?.();
    }
  }

  /** The network takes the message (recorded in the background) or refuses it; false: leave it queued and stop. */
  private async transmit(conn: EngineConnection, row: MessageRow, message: OutboundMessage): Promise<boolean> {
    let sent;
    try {
      sent = await conn.send(message);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (err instanceof DomainError && PERMANENT_CODES.has(err.code)) {
        await this.fail(row, reason);
        return true;
      }
      if (this.deps.live() !== conn) return false;
      const attempts = this.failedAttempts.messageId === row.id ? this.failedAttempts.count + 1 : 1;
      this.failedAttempts = { messageId: row.id, count: attempts };
      if (attempts >= MAX_LIVE_ATTEMPTS) {
        await this.fail(row, `send failed ${attempts} times: ${reason}`);
        return true;
      }
      this.deps.logger.warn({ messageId: row.id, err: reason, attempts }, 'send failed; left queued for the next attempt');
      return false;
    }
    this.deps.afterNetworkAck?.();
    this.deps.pacing?.sent(conn, this.clock());
    this.record({ row, sentAt: sent.timestamp, raw: sent.raw });
    return true;
  }

  /**
   * Records a send the network took (group commit): at once when no record is under way, so a lone send waits for
   * nothing; else with every send the network took while the one under way was written, all in one statement
   * (`markSentMany`, with the sends other sessions of the gateway record meanwhile: SentRecords) when it is done.
   * Meanwhile the drain goes on to the next row, so at most the sends of one record's round trip are unrecorded at a time: a crash then leaves them `queued`, and the next drain sends them again with
   * their waMessageIds, which the network stores once (as for a crash between a send and its record before).
   */
  private record(send: PendingRecord): void {
    this.unrecorded.push(send);
    this.recorder ??= this.recordAll();
  }

  /** Records until nothing waits; `recorder` is cleared in the same step that finds nothing left (no send is missed). */
  private async recordAll(): Promise<void> {
    // after the caller has set `recorder`
    await Promise.resolve();
    try {
      while (this.unrecorded.length > 0) {
        const batch = this.unrecorded.splice(0);
        try {
          await this.exclusive(() => this.recordSent(batch));
        } catch (err) {
          // PostgreSQL failed: the rows stay queued and are sent again (same waMessageIds) by the next drain
          this.recordFailure ??= err;
          this.unrecorded.length = 0;
        }
      }
    } finally {
      this.recorder = null;
    }
  }

  /**
   * One statement records the batch's sends and their message.sent: each Message is its queued row as the update leaves
   * it (nothing else changes a queued row's Message fields), with the updatedAt the statement writes; a receipt that
   * overtook a record is applied right after it, after its message.sent.
   */
  private async recordSent(batch: PendingRecord[]): Promise<void> {
    const records = batch.map(({ row, sentAt, raw }) => ({ id: row.id, sentAt, raw, updatedAt: Math.max(this.clock(), row.createdAt), media: row.media !== null }));
    const events = batch.map(({ row }, i) =>
      this.event({ event: 'message.sent', payload: { message: toMessageView({ ...row, status: 'sent', error: null, sentAt: records[i].sentAt, updatedAt: records[i].updatedAt }) } }),
    );
    const moved = await this.sentRecords.record(this.deps.sessionId, records, events);
    for (const { row } of batch) {
      const heldAck = moved.get(row.id)?.heldAck;
      if (heldAck) await this.ack(row.waMessageId, heldAck);
      if (row.campaignId) this.deps.campaigns?.settled(row.campaignId);
    }
  }

  /** Resolves once every send the network took so far is recorded; throws when a record failed (the drain stops). */
  private async recorded(): Promise<void> {
    await this.recorder;
    const failure = this.recordFailure;
    this.recordFailure = null;
    if (failure) throw failure;
  }

  /** Waits what the pacing policy asks before this row; false when the connection changed meanwhile. */
  private async pace(conn: EngineConnection, row: MessageRow): Promise<boolean> {
    const wait = this.deps.pacing ? await this.deps.pacing.delayBefore(row, conn, this.clock()) : 0;
    if (wait <= 0) return true;
    this.atRow(null);
    await this.sleep(wait);
    this.atRow(row);
    return this.deps.live() === conn;
  }

  private async showTyping(conn: EngineConnection, chatJid: string, text: string): Promise<void> {
    try {
      await conn.sendPresence(chatJid, 'composing');
      await this.sleep(typingMs(text, this.deps.settings));
      await conn.sendPresence(chatJid, 'paused');
    } catch (err) {
      // "typing…" is decoration: the send itself decides whether the connection is usable
      this.deps.logger.debug({ err: String(err) }, 'typing presence failed');
    }
  }

  private async build(row: MessageRow): Promise<OutboundMessage> {
    const { store, sessionId } = this.deps;
    let quoted: OutboundMessage['quoted'] = null;
    if (row.quotedWaMessageId) {
      const target = await store.findByWaId(sessionId, row.quotedWaMessageId);
      if (target) quoted = { ...keyOf(target), raw: await store.rawOf(sessionId, target.waMessageId) };
    }
    const statusPost = row.chatJid === STATUS_BROADCAST_JID ? await this.statusPostOf(row) : null;
    return { waMessageId: row.waMessageId, to: row.chatJid, content: await this.contentOf(row), quoted, mentions: row.mentions, ...(statusPost ? { statusPost } : {}) };
  }

  /** A status post goes to its audience only: without it (never recorded) it is not sent at all. */
  private async statusPostOf(row: MessageRow): Promise<StatusPostOptions> {
    const options = await this.deps.statusPosts?.optionsOf(row.id);
    if (!options) throw new UnsendableMessage('the status post has no audience');
    return options;
  }

  private async contentOf(row: MessageRow): Promise<OutboundContent> {
    // a forward is the original's content, whatever its type: the engine copies it from the network's own record
    if (row.sendOptions?.forwardOf) return { type: 'forward', original: row.sendOptions.forwardOf };
    return OUTBOUND_CONTENT[row.type](row, this.deps);
  }

  private async fail(row: MessageRow, error: string): Promise<void> {
    // the sends before it are announced before it fails
    await this.recorded();
    await this.deps.events.transact(async (tx, publish) => {
      const failed = await this.deps.store.markFailed(row.id, error, tx);
      if (failed) publish(this.event({ event: 'message.failed', payload: { message: toMessageView(failed) } }));
    });
    if (row.campaignId) this.deps.campaigns?.settled(row.campaignId);
  }

  /** Moves a sent message forward and announces it in one transaction, or keeps the ack on a queued one. */
  private async ack(waMessageId: string, status: AckStatus): Promise<void> {
    await this.deps.events.transact(async (tx, publish) => {
      const outcome = await this.deps.store.applyAck(this.deps.sessionId, waMessageId, status, tx);
      if (outcome && 'moved' in outcome) {
        const { moved } = outcome;
        publish(this.event({ event: 'message.ack', payload: { messageId: moved.id, waMessageId: moved.waMessageId, chatJid: moved.chatJid, status } }));
      }
    });
  }

  private event(named: CatalogEvent<'message.sent' | 'message.failed' | 'message.ack'>): SessionEvent {
    return { ...named, organizationId: this.deps.organizationId, sessionId: this.deps.sessionId };
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.recording.then(task, task);
    this.recording = run.catch(() => undefined);
    return run;
  }
}

/** How the network addresses a stored message (quotes, reactions, read receipts). */
export function keyOf(row: MessageRow): MessageKeyRef {
  const fromMe = row.direction === 'out';
  return { waMessageId: row.waMessageId, chatJid: row.chatJid, fromMe, participant: !fromMe && isGroupJid(row.chatJid) ? row.from : null };
}
