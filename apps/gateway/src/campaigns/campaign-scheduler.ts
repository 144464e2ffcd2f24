import type { Logger } from 'pino';
import { CAMPAIGN_PROGRESS_EVERY_MS, CampaignMessage, CapCounters, isCaptionedMediaType, normalizeChatJid } from '@app/contracts';
import { CampaignRow, CampaignsRepository, DueCampaign, MessageQueueRepository, MessageRow, NewMessage, NextRecipient, newId, SessionsRepository } from '@app/database';
import type { EventPublisher } from '@app/events';
import { capState, newWaMessageId, pacingDelay, renderTemplate, SendRateLimiter, windowState } from '@app/messaging';
import type { CampaignSendHooks } from '../messages/outbound-sender';
import { EndTurn, SendPriority } from './send-priority';

/**
 * Scheduled sends and campaigns on this gateway (CONTRACT 17, docs/campaigns.md). One scheduler per gateway, for the
 * sessions it holds; it never sends anything itself: a due scheduled send or a campaign's next message enters the
 * session's send queue (the accept statement of every send, `MessageQueueRepository.insertOutbound`, or `promoteDue`),
 * and the session's OutboundSender sends it as any other, with its waMessageId fixed before it was queued.
 *
 * A tick reads what is due, through partial indexes: the due scheduled sends of the held sessions
 * (`messages_scheduled_due`), and the live campaigns of those sessions (`campaigns_due`), stepping only those whose
 * `next_send_at` has come (or whose last message just settled, or whose delay after it, kept in memory, passed). A
 * campaign waiting for its delay, its window or its caps is one index entry read per tick: never its recipients. The timer sleeps until the earliest `next_send_at` or
 * `send_at` (at most `maxSleepMs`, which bounds how late a campaign created or resumed while its signal was lost
 * starts); signals (a campaign changed, a message settled) wake it at once.
 */

/** What the scheduler needs of the session host. */
export interface ScheduledSessions {
  activeSessionIds(): string[];
  runnerOf(sessionId: string): ScheduledRunner | undefined;
}

export interface ScheduledRunner {
  /** `ordinary`: what it queued are ordinary sends (scheduled sends that came due), not a campaign's */
  drainQueued(ordinary?: boolean): Promise<void>;
  isWorking(): boolean;
  /** the number check of `contacts:check` on this session's connection */
  onWhatsApp(phoneNumber: string): Promise<boolean>;
}

export interface CampaignSchedulerDeps {
  campaigns: CampaignsRepository;
  queue: MessageQueueRepository;
  sessions: SessionsRepository;
  events: EventPublisher;
  limiter: SendRateLimiter;
  logger: Logger;
  /** inbound texts that opt the sender out (case-insensitive, the whole message trimmed) */
  optOutKeywords: string[];
  maxSleepMs: number;
  clock?: () => number;
  random?: () => number;
  /** ordinary sends before campaign work (send-priority.ts); absent: one of CAMPAIGN_SLOTS and ORDINARY_FIRST_MAX_WAIT_MS */
  priority?: SendPriority;
}

/** Scheduled sends promoted per session per tick at most. */
const PROMOTE_BATCH = 500;
/** Recipients a step passes over (opted out, not on WhatsApp) before it yields to the other campaigns. */
const SKIPS_PER_STEP = 50;
/** How long a step that cannot go on (the session is not working, a message still queued) waits at most. */
const RETRY_MS = 5000;
/** Campaign steps and campaign messages' sends under way at once on a gateway at most (SendPriority). */
export const CAMPAIGN_SLOTS = 2;
/** How long campaign work waits for the gateway's ordinary sends under way before it starts anyway (SendPriority). */
export const ORDINARY_FIRST_MAX_WAIT_MS = 250;

/** What a step knows once its campaign may send: the session's send profile, the caps' counters, its clock. */
interface StepContext {
  profile: { ratePerMin: number; ratePerHour: number; waJid: string | null };
  caps: CapCounters;
  now: number;
}

/** Rolls a step's transaction back: its recipient was no longer pending under the campaign's lock. */
class RecipientTaken extends Error {
  constructor() {
    super('the recipient was taken by another step');
  }
}

export class CampaignScheduler implements CampaignSendHooks {
  private host: ScheduledSessions | null = null;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  /** campaigns a signal said are paused or cancelled: their message in a sender's hands is not sent */
  private readonly haltedIds = new Set<string>();
  /** campaigns whose last message settled since the last tick: stepped even if not due (their pacing counts from it) */
  private readonly settledIds = new Set<string>();
  /** campaigns waiting for the delay after their last message, and when it passes: stepped then, even if not due */
  private readonly readyAt = new Map<string, number>();
  /**
   * The scheduled sends' reads are redone at the next tick (a wake other than a settled campaign message, a failed
   * read, other sessions held), or once `scheduledDueBy` came: the earliest due time the last read found, at most
   * `maxSleepMs` after it (new scheduled sends come with no signal: that bounds how late they are seen).
   */
  private scheduledStale = true;
  private scheduledDueBy = 0;
  private scheduledOf = '';
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly keywords: Set<string>;
  private readonly priority: SendPriority;

  constructor(private readonly deps: CampaignSchedulerDeps) {
    this.clock = deps.clock ?? Date.now;
    this.random = deps.random ?? Math.random;
    this.priority = deps.priority ?? new SendPriority({ slots: CAMPAIGN_SLOTS, maxWaitMs: ORDINARY_FIRST_MAX_WAIT_MS });
    this.keywords = new Set(deps.optOutKeywords.map((k) => k.trim().toLowerCase()).filter((k) => k.length > 0));
  }

  attach(host: ScheduledSessions): void {
    this.host = host;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
  }

  /** A tick now (or once more after the one under way), which reads the scheduled sends again. */
  wake(): void {
    this.scheduledStale = true;
    this.kick();
  }

  /** A tick now (or once more after the one under way), for the campaigns only: a settled message changes no scheduled send. */
  private kick(): void {
    if (this.stopped) return;
    this.again = true;
    this.ticking ??= this.loop().finally(() => (this.ticking = null));
  }

  // ----- CampaignSendHooks (the session's OutboundSender) -----

  halted(campaignId: string): boolean {
    return this.haltedIds.has(campaignId);
  }

  settled(campaignId: string): void {
    this.settledIds.add(campaignId);
    this.kick();
  }

  ordinaryStarted(): EndTurn {
    return this.priority.ordinaryStarted();
  }

  campaignTurn(): Promise<EndTurn> {
    return this.priority.campaignTurn();
  }

  /** CampaignSignal: a campaign of a session held here changed (created, paused, resumed, cancelled). */
  async changed(campaignId: string): Promise<void> {
    const status = await this.deps.campaigns.statusOf(campaignId);
    if (status === 'paused' || status === 'cancelled' || status === null) this.haltedIds.add(campaignId);
    else this.haltedIds.delete(campaignId);
    if (this.haltedIds.size > 10_000) this.haltedIds.clear();
    this.wake();
  }

  /** An inbound message was stored: an opt-out keyword opts its sender out of every later campaign message. */
  async inbound(row: MessageRow): Promise<void> {
    if (row.direction !== 'in' || row.type !== 'text' || !row.text || row.chatJid.endsWith('@g.us')) return;
    const keyword = row.text.trim().toLowerCase();
    if (!this.keywords.has(keyword)) return;
    if (await this.deps.campaigns.addOptOut(row.sessionId, row.chatJid, keyword)) {
      this.deps.logger.info({ sessionId: row.sessionId, jid: row.chatJid }, 'a contact opted out');
    }
  }

  // ----- the tick -----

  private async loop(): Promise<void> {
    while (this.again && !this.stopped) {
      this.again = false;
      let nextAt = this.clock() + this.deps.maxSleepMs;
      try {
        nextAt = Math.min(nextAt, await this.tick());
      } catch (err) {
        this.deps.logger.warn({ err: String(err) }, 'campaign scheduler tick failed');
        nextAt = Math.min(nextAt, this.clock() + 1000);
      }
      if (this.timer) clearTimeout(this.timer);
      if (!this.stopped) {
        this.timer = setTimeout(() => this.wake(), Math.max(0, nextAt - this.clock()));
        this.timer.unref?.();
      }
    }
  }

  /** One pass over what is due; returns when the next one is due. */
  async tick(): Promise<number> {
    const host = this.host;
    if (!host) return Number.POSITIVE_INFINITY;
    const held = host.activeSessionIds();
    let nextAt = await this.scheduledSends(held);

    const { due, nextAt: campaignsAt } = await this.deps.campaigns.due(held, this.takeReady());
    if (campaignsAt !== null) nextAt = Math.min(nextAt, campaignsAt);
    for (const campaign of due) {
      // each step takes its turn: after the ordinary sends under way, one of the gateway's campaign slots
      const endTurn = await this.priority.campaignTurn();
      try {
        nextAt = Math.min(nextAt, await this.step(campaign));
      } catch (err) {
        this.deps.logger.warn({ campaignId: campaign.id, err: String(err) }, 'campaign step failed');
        nextAt = Math.min(nextAt, this.clock() + 1000);
      } finally {
        endTurn();
      }
    }
    for (const at of this.readyAt.values()) nextAt = Math.min(nextAt, at);
    return nextAt;
  }

  /**
   * The due scheduled sends of the held sessions join their queues; returns when they must be looked at again. Not read
   * again before then unless something other than a settled campaign message woke the scheduler (see `scheduledStale`).
   */
  private async scheduledSends(held: string[]): Promise<number> {
    const now = this.clock();
    const of = held.join(',');
    if (!this.scheduledStale && of === this.scheduledOf && now < this.scheduledDueBy) return this.scheduledDueBy;
    // a wake during the reads marks them stale again, for the tick after this one
    this.scheduledStale = false;
    try {
      let dueBy = now + this.deps.maxSleepMs;
      for (const sessionId of await this.deps.queue.sessionsWithDueScheduled(held)) {
        dueBy = Math.min(dueBy, await this.promote(sessionId));
      }
      const scheduledAt = await this.deps.queue.nextScheduledAt(held);
      if (scheduledAt !== null) dueBy = Math.min(dueBy, scheduledAt);
      this.scheduledOf = of;
      this.scheduledDueBy = dueBy;
      return dueBy;
    } catch (err) {
      this.scheduledStale = true;
      throw err;
    }
  }

  /** The campaigns to step whatever their `next_send_at`: their last message settled, or their delay after it passed. */
  private takeReady(): string[] {
    const now = this.clock();
    const ids = new Set(this.settledIds);
    this.settledIds.clear();
    for (const [id, at] of this.readyAt) {
      if (at > now) continue;
      ids.add(id);
      this.readyAt.delete(id);
    }
    return [...ids];
  }

  /**
   * The due scheduled sends of a session join its queue, oldest first, each counted against the session's rates as it
   * becomes due (CONTRACT 17): those the rates refuse now stay scheduled until the limiter's retry time.
   */
  private async promote(sessionId: string): Promise<number> {
    const profile = await this.deps.sessions.sendProfile(sessionId);
    if (!profile) return Number.POSITIVE_INFINITY;
    const dueIds = await this.deps.queue.dueScheduledIds(sessionId, PROMOTE_BATCH);
    if (dueIds.length === 0) return Number.POSITIVE_INFINITY;
    const decision = await this.deps.limiter.tryAcceptMany(sessionId, dueIds, profile);
    const accepted = dueIds.slice(0, decision.accepted);
    if (accepted.length > 0) {
      const moved = await this.deps.queue.promoteDue(sessionId, accepted.length, accepted);
      const unmoved = accepted.filter((id) => !moved.some((m) => m.id === id));
      // cancelled (or promoted elsewhere) between the read and the move: their slots go back
      if (unmoved.length > 0) await this.deps.limiter.releaseMany(sessionId, unmoved).catch(() => undefined);
      if (moved.length > 0) void this.host?.runnerOf(sessionId)?.drainQueued(true);
    }
    if (decision.accepted < dueIds.length) return this.clock() + Math.max(250, decision.retryAfterMs);
    return dueIds.length === PROMOTE_BATCH ? this.clock() : Number.POSITIVE_INFINITY;
  }

  /**
   * One step of a campaign: at most one message enqueued. In order: the previous message must have settled (sent or
   * failed) and its delay passed since it was sent → the window → the caps → the next pending recipient (opted out:
   * `optedOut`; not on WhatsApp: `skipped`) → the session's rates → one transaction that locks the campaign (a pause
   * committed before it stops it; one after it withdraws what it queued), stores the message with its waMessageId
   * (`insertOutbound`, the accept statement of every send), marks the recipient `queued` with it (only if it is still
   * pending) and moves the counters. A crash before the commit leaves the recipient pending; after it, the message is
   * queued and its waMessageId fixed: sent once by whichever gateway holds the session. Returns when it is due next.
   */
  private async step(due: DueCampaign): Promise<number> {
    const now = this.clock();
    const c = due.status === 'scheduled' ? await this.startRunning(due, now) : due;
    if (!c) return Number.POSITIVE_INFINITY;
    const runner = this.host!.runnerOf(c.sessionId);
    const afterLast = await this.afterLastMessage(c, runner, now);
    if (afterLast !== null) return afterLast;
    const window = windowState(now, c.window);
    if (!window.open) return this.postpone(c, window.opensAt);
    const caps = capState(now, c.window?.timeZone ?? 'UTC', c.pacing, c.warmup, c.caps);
    if (!caps.open) return this.postpone(c, caps.opensAt);
    if (!runner?.isWorking()) return this.postpone(c, now + RETRY_MS);
    const profile = await this.deps.sessions.sendProfile(c.sessionId);
    if (!profile) return Number.POSITIVE_INFINITY;
    return this.enqueueNext(c, runner, { profile, caps: caps.counters, now });
  }

  /** Its startAt came: the campaign runs from now on (null: it is no longer live). */
  private async startRunning(c: DueCampaign, now: number): Promise<DueCampaign | null> {
    const started = await this.deps.events.transact(async (tx) => {
      const live = await this.deps.campaigns.lockLive(tx, c.id);
      if (live?.status === 'scheduled') await this.deps.campaigns.afterStep(tx, c.id, { nextSendAt: now, status: 'running' });
      return live !== null;
    });
    return started ? { ...c, status: 'running' } : null;
  }

  /**
   * The previous message must be settled (sent or failed) and its delay passed since it was sent: when not, when to
   * look again; null when the step goes on. The wait for the delay is kept in memory (`readyAt`), not written: the row
   * keeps the retry time its enqueue wrote, which a gateway taking the session over steps at, and which is written
   * only once it has passed (so a long delay does not make the campaign due at every tick).
   */
  private async afterLastMessage(c: DueCampaign, runner: ScheduledRunner | undefined, now: number): Promise<number | null> {
    if (!c.lastMessageId) return null;
    const last = c.last;
    if (last?.status === 'queued') return this.postpone(c, now + RETRY_MS);
    if (last?.status === 'scheduled') {
      // withdrawn by a pause, and the campaign resumed: the same row (same waMessageId) goes back into the queue
      await this.deps.queue.promoteDue(c.sessionId, 1, [c.lastMessageId]);
      void runner?.drainQueued();
      return this.postpone(c, now + RETRY_MS);
    }
    // paced from when the send was recorded (after the relay), not from the engine's timestamp: on Baileys that is
    // WhatsApp's, in whole seconds taken before the relay, up to a second early (arrivals 34 ms apart at 150 ms pacing)
    const earliest = (last?.sentAt == null ? 0 : Math.max(last.sentAt, last.updatedAt)) + c.lastDelayMs;
    if (now >= earliest) return null;
    if (c.nextSendAt === null || c.nextSendAt <= now) return this.postpone(c, earliest);
    this.readyAt.set(c.id, earliest);
    return earliest;
  }

  /**
   * The next pending recipient gets the campaign's message, passing over those opted out or not on WhatsApp (at most
   * SKIPS_PER_STEP, then the other campaigns have their step first). No pending recipient: the campaign completes.
   */
  private async enqueueNext(c: DueCampaign, runner: ScheduledRunner, at: StepContext): Promise<number> {
    for (let skips = 0; skips <= SKIPS_PER_STEP; skips++) {
      const recipient = await this.deps.campaigns.nextRecipient(c.id, c.sessionId);
      if (!recipient) return this.finish(c, at.now);
      if (recipient.optedOut) {
        await this.deps.campaigns.passOver(c.id, recipient.position, 'optedOut', null);
        continue;
      }
      const onWhatsApp = await this.numberCheck(c, runner, recipient.to);
      if (onWhatsApp === null) return this.postpone(c, at.now + RETRY_MS);
      if (!onWhatsApp) {
        await this.deps.campaigns.passOver(c.id, recipient.position, 'skipped', 'not on WhatsApp');
        continue;
      }
      return this.enqueue(c, runner, recipient, at);
    }
    // many skips in a row: the next step goes on at once, after the other campaigns had theirs
    return this.postpone(c, at.now);
  }

  /** `skipNotOnWhatsApp`: the session's number check of a phone recipient (null: it failed, the step waits). */
  private async numberCheck(c: DueCampaign, runner: ScheduledRunner, to: string): Promise<boolean | null> {
    if (!c.skipNotOnWhatsApp || !to.endsWith('@s.whatsapp.net')) return true;
    try {
      return await runner.onWhatsApp(to.split('@')[0]);
    } catch (err) {
      this.deps.logger.debug({ campaignId: c.id, err: String(err) }, 'number check failed; the step waits');
      return null;
    }
  }

  /** No pending recipient: completed once no message of the campaign is still unsent, else looked at again later. */
  private async finish(c: DueCampaign, now: number): Promise<number> {
    return this.deps.events.transact(async (tx, publish) => {
      if (!(await this.deps.campaigns.lockLive(tx, c.id))) return Number.POSITIVE_INFINITY;
      if (await this.deps.campaigns.hasUnsent(tx, c.id)) {
        await this.deps.campaigns.afterStep(tx, c.id, { nextSendAt: now + RETRY_MS });
        return now + RETRY_MS;
      }
      await this.deps.campaigns.afterStep(tx, c.id, { nextSendAt: null, status: 'completed' });
      const counts = await this.deps.campaigns.counts(c.id, tx);
      publish({ event: 'campaign.completed', organizationId: c.organizationId, sessionId: c.sessionId, payload: { campaignId: c.id, status: 'completed', counts } });
      return Number.POSITIVE_INFINITY;
    });
  }

  /** The recipient's message counted against the session's rates, stored and queued (`store`), then drained. */
  private async enqueue(c: DueCampaign, runner: ScheduledRunner, recipient: NextRecipient, at: StepContext): Promise<number> {
    const messageId = newId('msg');
    const rate = await this.deps.limiter.tryAccept(c.sessionId, messageId, at.profile);
    if (!rate.accepted) return this.postpone(c, at.now + Math.max(250, rate.retryAfterMs));
    const release = () => this.deps.limiter.release(c.sessionId, messageId).catch(() => undefined);
    let queued: boolean;
    try {
      queued = await this.store(c, recipient, messageId, at);
    } catch (err) {
      await release();
      if (!(err instanceof RecipientTaken)) throw err;
      // another step took the recipient between the read and the lock: this one looks again at the next tick
      this.readyAt.set(c.id, at.now);
      return at.now;
    }
    if (!queued) {
      await release();
      return Number.POSITIVE_INFINITY;
    }
    void runner.drainQueued();
    return at.now + RETRY_MS;
  }

  /**
   * One transaction (false: the campaign is no longer running): the campaign locked, the message inserted with its waMessageId, the recipient
   * `queued` with it (a recipient no longer pending rolls it all back: `RecipientTaken`), the campaign's next step, caps,
   * last message and delay, and `campaign.progress` at most every CAMPAIGN_PROGRESS_EVERY_MS.
   */
  private async store(c: DueCampaign, recipient: NextRecipient, messageId: string, at: StepContext): Promise<boolean> {
    const delay = pacingDelay(c.pacing, this.random);
    return this.deps.events.transact(async (tx, publish) => {
      const live = await this.deps.campaigns.lockLive(tx, c.id);
      if (!live || live.status !== 'running') return false;
      const row = await this.deps.queue.insertOutbound(this.messageOf(c, recipient.to, recipient.variables ?? {}, messageId, at.profile.waJid), null, tx);
      if (!row) throw new Error(`campaign message ${messageId} conflicted with a stored one`);
      if (!(await this.deps.campaigns.queueRecipient(tx, c.id, recipient.position, messageId))) throw new RecipientTaken();
      const progress = live.progressAt === null || at.now - live.progressAt >= CAMPAIGN_PROGRESS_EVERY_MS;
      await this.deps.campaigns.afterStep(tx, c.id, {
        nextSendAt: at.now + RETRY_MS,
        caps: at.caps,
        lastMessageId: messageId,
        lastDelayMs: delay,
        progressAt: progress ? at.now : undefined,
      });
      if (progress) {
        const counts = await this.deps.campaigns.counts(c.id, tx);
        publish({ event: 'campaign.progress', organizationId: c.organizationId, sessionId: c.sessionId, payload: { campaignId: c.id, status: live.status, counts } });
      }
      return true;
    });
  }

  /** A step that cannot go on yet: its next one at `at`, written on the campaign's row (while it is live). */
  private async postpone(c: CampaignRow, at: number): Promise<number> {
    await this.deps.campaigns.postpone(c.id, at);
    return at;
  }

  /**
   * The recipient's message: the template rendered with its variables (a text's text, a media's caption), "typing…"
   * before it when the pacing asks. A media message carries the campaign's file description and no bytes of its own:
   * its send reads the campaign's, stored once (`MessagesRepository.mediaOf`).
   */
  private messageOf(c: CampaignRow, to: string, variables: Record<string, string>, id: string, waJid: string | null): NewMessage {
    const m: CampaignMessage = c.message;
    const rendered = m.text === null ? null : renderTemplate(m.text, variables);
    return {
      id,
      organizationId: c.organizationId,
      sessionId: c.sessionId,
      waMessageId: newWaMessageId(),
      direction: 'out',
      chatJid: normalizeChatJid(to) ?? to,
      from: waJid,
      type: m.type,
      text: m.media ? null : rendered,
      media: m.media ? { mimetype: m.media.mimetype, size: m.media.size, filename: m.media.filename, caption: isCaptionedMediaType(m.type) ? rendered : null } : null,
      location: m.location,
      contact: m.contact,
      poll: m.poll,
      status: 'queued',
      sendOptions: c.pacing.typing ? { typing: true } : null,
      campaignId: c.id,
    };
  }
}
