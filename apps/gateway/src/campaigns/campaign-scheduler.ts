import type { Logger } from 'pino';
import { CAMPAIGN_PROGRESS_EVERY_MS, CampaignMessage, isCaptionedMediaType, normalizeChatJid } from '@app/contracts';
import { CampaignRow, CampaignsRepository, RecipientRow, MessageQueueRepository, MessageRow, NewMessage, newId, SessionsRepository } from '@app/database';
import type { EventPublisher } from '@app/events';
import { capState, newWaMessageId, pacingDelay, renderTemplate, SendRateLimiter, windowState } from '@app/messaging';
import type { CampaignSendHooks } from '../messages/outbound-sender';

/**
 * Scheduled sends and campaigns on this gateway (CONTRACT 17, docs/campaigns.md). One scheduler per gateway, for the
 * sessions it holds; it never sends anything itself: a due scheduled send or a campaign's next message enters the
 * session's send queue (the accept statement of every send, `MessageQueueRepository.insertOutbound`, or `promoteDue`),
 * and the session's OutboundSender sends it as any other, with its waMessageId fixed before it was queued.
 *
 * A tick reads what is due, through partial indexes: the due scheduled sends of the held sessions
 * (`messages_scheduled_due`), and the live campaigns of those sessions (`campaigns_due`), stepping only those whose
 * `next_send_at` has come (or whose last message just settled). A campaign waiting for its delay, its window or its
 * caps is one index entry read per tick: never its recipients. The timer sleeps until the earliest `next_send_at` or
 * `send_at` (at most `maxSleepMs`, which bounds how late a campaign created or resumed while its signal was lost
 * starts); signals (a campaign changed, a message settled) wake it at once.
 */

/** What the scheduler needs of the session host. */
export interface ScheduledSessions {
  activeSessionIds(): string[];
  runnerOf(sessionId: string): ScheduledRunner | undefined;
}

export interface ScheduledRunner {
  drainQueued(): Promise<void>;
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
}

/** Scheduled sends promoted per session per tick at most. */
const PROMOTE_BATCH = 500;
/** Recipients a step passes over (opted out, not on WhatsApp) before it yields to the other campaigns. */
const SKIPS_PER_STEP = 50;
/** How long a step that cannot go on (the session is not working, a message still queued) waits at most. */
const RETRY_MS = 5000;

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
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly keywords: Set<string>;

  constructor(private readonly deps: CampaignSchedulerDeps) {
    this.clock = deps.clock ?? Date.now;
    this.random = deps.random ?? Math.random;
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

  /** A tick now (or once more after the one under way). */
  wake(): void {
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
    this.wake();
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
    let nextAt = Number.POSITIVE_INFINITY;
    for (const sessionId of await this.deps.queue.sessionsWithDueScheduled(held)) {
      nextAt = Math.min(nextAt, await this.promote(sessionId));
    }
    const scheduledAt = await this.deps.queue.nextScheduledAt(held);
    if (scheduledAt !== null) nextAt = Math.min(nextAt, scheduledAt);

    const settled = new Set(this.settledIds);
    this.settledIds.clear();
    const { due, nextAt: campaignsAt } = await this.deps.campaigns.due(held, [...settled]);
    if (campaignsAt !== null) nextAt = Math.min(nextAt, campaignsAt);
    for (const campaign of due) {
      try {
        nextAt = Math.min(nextAt, await this.step(campaign));
      } catch (err) {
        this.deps.logger.warn({ campaignId: campaign.id, err: String(err) }, 'campaign step failed');
        nextAt = Math.min(nextAt, this.clock() + 1000);
      }
    }
    return nextAt;
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
      if (moved.length > 0) void this.host?.runnerOf(sessionId)?.drainQueued();
    }
    if (decision.accepted < dueIds.length) return this.clock() + Math.max(250, decision.retryAfterMs);
    return dueIds.length === PROMOTE_BATCH ? this.clock() : Number.POSITIVE_INFINITY;
  }

  /**
   * One step of a campaign: at most one message enqueued. In order: the previous message must have settled (sent or
   * failed) and its delay passed since it was sent → the window → the caps → the next pending recipient (opted out:
   * `optedOut`; not on WhatsApp: `skipped`) → the session's rates → one transaction that locks the campaign (a pause
   * committed before it stops it; one after it withdraws what it queued), stores the message with its waMessageId
   * (`insertOutbound`, the accept statement of every send), marks the recipient `queued` with it and moves the
   * counters. A crash before the commit leaves the recipient pending; after it, the message is queued and its
   * waMessageId fixed: sent once by whichever gateway holds the session. Returns when the campaign is due next.
   */
  private async step(campaign: CampaignRow): Promise<number> {
    const now = this.clock();
    let c = campaign;
    if (c.status === 'scheduled') {
      // its startAt came: it runs from now on
      const started = await this.deps.events.transact(async (tx) => {
        const live = await this.deps.campaigns.lockLive(tx, c.id);
        if (live?.status === 'scheduled') await this.deps.campaigns.afterStep(tx, c.id, { nextSendAt: now, status: 'running' });
        return live !== null;
      });
      if (!started) return Number.POSITIVE_INFINITY;
      c = { ...c, status: 'running' };
    }
    const host = this.host!;
    const runner = host.runnerOf(c.sessionId);
    if (c.lastMessageId) {
      const last = await this.deps.queue.stateOf(c.lastMessageId);
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
      if (now < earliest) return this.postpone(c, earliest);
    }
    const window = windowState(now, c.window);
    if (!window.open) return this.postpone(c, window.opensAt);
    const caps = capState(now, c.window?.timeZone ?? 'UTC', c.pacing, c.warmup, c.caps);
    if (!caps.open) return this.postpone(c, caps.opensAt);
    if (!runner?.isWorking()) return this.postpone(c, now + RETRY_MS);
    const profile = await this.deps.sessions.sendProfile(c.sessionId);
    if (!profile) return Number.POSITIVE_INFINITY;

    for (let skips = 0; skips <= SKIPS_PER_STEP; skips++) {
      type Picked = { done: number } | { skipped: true } | { recipient: RecipientRow };
      const outcome = await this.deps.events.transact(async (tx, publish): Promise<Picked> => {
        const live = await this.deps.campaigns.lockLive(tx, c.id);
        if (!live) return { done: Number.POSITIVE_INFINITY };
        const recipient = await this.deps.campaigns.nextPending(tx, c.id);
        if (!recipient) {
          if (await this.deps.campaigns.hasUnsent(tx, c.id)) {
            await this.deps.campaigns.afterStep(tx, c.id, { nextSendAt: now + RETRY_MS });
            return { done: now + RETRY_MS };
          }
          await this.deps.campaigns.afterStep(tx, c.id, { nextSendAt: null, status: 'completed' });
          const counts = await this.deps.campaigns.counts(c.id, tx);
          publish({ event: 'campaign.completed', organizationId: c.organizationId, sessionId: c.sessionId, payload: { campaignId: c.id, status: 'completed', counts } });
          return { done: Number.POSITIVE_INFINITY };
        }
        if (await this.deps.campaigns.isOptedOut(c.sessionId, recipient.to, tx)) {
          await this.deps.campaigns.markRecipient(tx, c.id, recipient.position, 'optedOut', null, null);
          return { skipped: true };
        }
        return { recipient };
      });
      if ('done' in outcome) return outcome.done;
      if ('skipped' in outcome) continue;
      const { recipient } = outcome;

      if (c.skipNotOnWhatsApp && recipient.to.endsWith('@s.whatsapp.net')) {
        let exists: boolean;
        try {
          exists = await runner.onWhatsApp(recipient.to.split('@')[0]);
        } catch (err) {
          this.deps.logger.debug({ campaignId: c.id, err: String(err) }, 'number check failed; the step waits');
          return this.postpone(c, now + RETRY_MS);
        }
        if (!exists) {
          await this.deps.events.transact(async (tx) => {
            if (await this.deps.campaigns.lockLive(tx, c.id)) await this.deps.campaigns.markRecipient(tx, c.id, recipient.position, 'skipped', null, 'not on WhatsApp');
          });
          continue;
        }
      }

      const messageId = newId('msg');
      const rate = await this.deps.limiter.tryAccept(c.sessionId, messageId, profile);
      if (!rate.accepted) return this.postpone(c, now + Math.max(250, rate.retryAfterMs));
      const delay = pacingDelay(c.pacing, this.random);
      let enqueued: boolean;
      try {
        enqueued = await this.deps.events.transact(async (tx, publish) => {
          const live = await this.deps.campaigns.lockLive(tx, c.id);
          if (!live || live.status !== 'running') return false;
          const row = await this.deps.queue.insertOutbound(this.messageOf(c, recipient.to, recipient.variables ?? {}, messageId, profile.waJid), null, tx);
          if (!row) throw new Error(`campaign message ${messageId} conflicted with a stored one`);
          await this.deps.campaigns.markRecipient(tx, c.id, recipient.position, 'queued', messageId, null);
          const progress = live.progressAt === null || now - live.progressAt >= CAMPAIGN_PROGRESS_EVERY_MS;
          await this.deps.campaigns.afterStep(tx, c.id, {
            nextSendAt: now + RETRY_MS,
            caps: caps.counters,
            lastMessageId: messageId,
            lastDelayMs: delay,
            progressAt: progress ? now : undefined,
          });
          if (progress) {
            const counts = await this.deps.campaigns.counts(c.id, tx);
            publish({ event: 'campaign.progress', organizationId: c.organizationId, sessionId: c.sessionId, payload: { campaignId: c.id, status: live.status, counts } });
          }
          return true;
        });
      } catch (err) {
        await this.deps.limiter.release(c.sessionId, messageId).catch(() => undefined);
        throw err;
      }
      if (!enqueued) {
        await this.deps.limiter.release(c.sessionId, messageId).catch(() => undefined);
        return Number.POSITIVE_INFINITY;
      }
      void runner.drainQueued();
      return now + RETRY_MS;
    }
    // many skips in a row: the next step goes on at once, after the other campaigns had theirs
    return this.postpone(c, now);
  }

  private async postpone(c: CampaignRow, at: number): Promise<number> {
    await this.deps.events.transact(async (tx) => {
      if (await this.deps.campaigns.lockLive(tx, c.id)) await this.deps.campaigns.afterStep(tx, c.id, { nextSendAt: at });
    });
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
