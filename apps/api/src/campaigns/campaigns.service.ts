import { findOwnSession } from '../sessions/own-session';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { CampaignRecipientView, CampaignStatus, CampaignView, DomainError, isMediaType, normalizeChatJid, OptOutView, RECIPIENT_STATUSES, RecipientStatus } from '@app/contracts';
import { CampaignsRepository, MessageQueueRepository, newId, OwnedSession, Session, SessionsRepository, toCampaignView } from '@app/database';
import { EventPublisher } from '@app/events';
import { REDIS_CLIENT } from '@app/infra';
import { CampaignSignal } from '@app/messaging';
import { Redis } from '@app/redis';
import { Page } from '../common/pagination';
import { parseCampaignBody } from './campaign-body';
import { CampaignMediaLoader } from './campaign-media';

/** The status changes of `:pause`, `:resume` and `:cancel`: from which statuses, to which. */
const CHANGES: Record<'pause' | 'resume' | 'cancel', { from: CampaignStatus[]; to: CampaignStatus }> = {
  pause: { from: ['scheduled', 'running'], to: 'paused' },
  resume: { from: ['paused'], to: 'running' },
  cancel: { from: ['scheduled', 'running', 'paused'], to: 'cancelled' },
};

const PAGE_MAX = 100;
const limitOf = (raw: unknown) => {
  const n = raw === undefined ? 20 : Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > PAGE_MAX) throw new DomainError('validation_error', 'request is invalid', { fields: { limit: [`limit must be 1..${PAGE_MAX}`] } });
  return n;
};

/**
 * Campaigns (CONTRACT 17). The API stores a campaign and its recipients, answers reads, and changes its status; the
 * gateway that holds the session runs it (apps/gateway/src/campaigns). A change is committed first, then signalled to
 * that gateway (CampaignSignal), which takes it at once; the signal is a nudge only (the row is the truth).
 */
@Injectable()
export class CampaignsService {
  private readonly logger = new Logger('campaigns');
  private readonly signal: CampaignSignal;

  constructor(
    private readonly sessions: SessionsRepository,
    private readonly campaigns: CampaignsRepository,
    private readonly queue: MessageQueueRepository,
    private readonly events: EventPublisher,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    signal: CampaignSignal,
    private readonly mediaLoader: CampaignMediaLoader,
    private readonly config: ApiConfig,
  ) {
    this.signal = signal;
  }

  async create(organizationId: string, sessionId: string, raw: unknown): Promise<CampaignView> {
    const session = await this.session(organizationId, sessionId);
    const body = parseCampaignBody(raw, Date.now(), { mediaMaxBytes: this.config.MEDIA_MAX_BYTES });
    // a media campaign's file is taken once, now (a refused URL or a file too large: 422, nothing stored), and stored
    // once with the campaign, in the same transaction as its row and its recipients
    const file = body.media && isMediaType(body.message.type) ? await this.mediaLoader.load(body.message.type, body.media) : null;
    const row = await this.campaigns.create(
      {
        id: newId('cmp'),
        organizationId,
        sessionId: session.id,
        name: body.name,
        message: file ? { ...body.message, media: file.media } : body.message,
        window: body.window,
        pacing: body.pacing,
        warmup: body.warmup,
        skipNotOnWhatsApp: body.skipNotOnWhatsApp,
        startAt: body.startAt,
      },
      body.recipients,
      file?.bytes ?? null,
    );
    await this.notify(session, row.id);
    // the row as INSERT … RETURNING gave it precedes its recipients (whose insert counts them): read the counts again
    return toCampaignView({ ...row, counts: await this.campaigns.counts(row.id) });
  }

  async list(organizationId: string, sessionId: string, query: { limit?: unknown; cursor?: unknown }): Promise<Page<CampaignView>> {
    const session = await this.session(organizationId, sessionId);
    const limit = limitOf(query.limit);
    const rows = await this.campaigns.listInSession(session, limit + 1, typeof query.cursor === 'string' ? query.cursor : undefined);
    const slice = rows.slice(0, limit);
    const data = slice.map((r) => toCampaignView(r));
    return { data, nextCursor: rows.length > limit ? slice[slice.length - 1].id : null };
  }

  async get(organizationId: string, sessionId: string, campaignId: string): Promise<CampaignView> {
    const row = await this.find(await this.session(organizationId, sessionId), campaignId);
    return toCampaignView(row);
  }

  async recipients(organizationId: string, sessionId: string, campaignId: string, query: { status?: unknown; limit?: unknown; cursor?: unknown }): Promise<Page<CampaignRecipientView>> {
    const row = await this.find(await this.session(organizationId, sessionId), campaignId);
    const limit = limitOf(query.limit);
    const status = query.status as RecipientStatus | undefined;
    if (status !== undefined && !(RECIPIENT_STATUSES as readonly unknown[]).includes(status)) {
      throw new DomainError('validation_error', 'request is invalid', { fields: { status: [`status must be one of ${RECIPIENT_STATUSES.join(', ')}`] } });
    }
    const after = query.cursor === undefined ? undefined : Number(query.cursor);
    if (after !== undefined && !Number.isInteger(after)) throw new DomainError('validation_error', 'request is invalid', { fields: { cursor: ['cursor must be a position'] } });
    const data = await this.campaigns.recipients(row.id, status, limit + 1, after);
    const slice = data.slice(0, limit);
    return { data: slice, nextCursor: data.length > limit ? String(slice[slice.length - 1].position) : null };
  }

  /**
   * Pause, resume or cancel: one transaction changes the status (the campaign row locked, so the gateway's step that
   * enqueues is wholly before or after it); the next takes the campaign's message still in the queue back out of it
   * (pause: kept, to go back in on resume with its waMessageId; cancel: cancelled). Then the gateway is signalled, and
   * its sender skips a message it had already read. 409 from a status the change does not apply to.
   */
  async change(organizationId: string, sessionId: string, campaignId: string, what: keyof typeof CHANGES): Promise<CampaignView> {
    const session = await this.session(organizationId, sessionId);
    await this.find(session, campaignId);
    const { from, to } = CHANGES[what];
    const changed = await this.events.transact((tx) => this.campaigns.changeStatus(tx, campaignId, from, to));
    if (!changed) {
      const status = await this.campaigns.statusOf(campaignId);
      throw new DomainError('conflict', `the campaign is ${status}: it cannot be ${what === 'pause' ? 'paused' : what === 'resume' ? 'resumed' : 'cancelled'}`, { status });
    }
    // the withdrawal after the status's commit, in a transaction of its own that holds no campaign row: the record of a
    // send (markSentMany) locks its message, then the campaign row (the counters' trigger); a withdrawal under the
    // campaign row's lock waited for that message the other way round, and PostgreSQL ended one of them as a deadlock
    // after deadlock_timeout (1 s): a 500 to the pause, or a lost record (issue 43, the fleet test). Once the status is
    // committed no step enqueues any more (it locks the row and requires `running`), so nothing is queued behind this.
    if (to !== 'running') await this.queue.withdrawCampaignQueued(campaignId, to === 'cancelled' ? 'cancelled' : 'scheduled');
    await this.notify(session, campaignId);
    // the row as the UPDATE … RETURNING gave it precedes a cancel's recipients (whose update counts them)
    return toCampaignView({ ...changed, counts: await this.campaigns.counts(campaignId) });
  }

  async optOuts(organizationId: string, sessionId: string, query: { limit?: unknown; cursor?: unknown }): Promise<Page<OptOutView>> {
    const session = await this.session(organizationId, sessionId);
    const limit = limitOf(query.limit);
    const rows = await this.campaigns.optOuts(session, limit + 1, typeof query.cursor === 'string' ? query.cursor : undefined);
    const slice = rows.slice(0, limit);
    return { data: slice, nextCursor: rows.length > limit ? slice[slice.length - 1].jid : null };
  }

  async removeOptOut(organizationId: string, sessionId: string, jid: string): Promise<void> {
    const session = await this.session(organizationId, sessionId);
    const normalized = normalizeChatJid(jid) ?? jid;
    if (!(await this.campaigns.removeOptOut(session, normalized))) throw new DomainError('not_found', 'no opt-out for this number', { jid: normalized });
  }

  private async notify(session: Session, campaignId: string): Promise<void> {
    if (!session.gatewayId) return;
    await this.signal.notify(this.redis, session.gatewayId, session.id, campaignId).catch((err) => this.logger.warn(`campaign signal lost for ${campaignId}: ${String(err)}`));
  }

  private async session(organizationId: string, sessionId: string): Promise<OwnedSession> {
    return findOwnSession(this.sessions, organizationId, sessionId);
  }

  private async find(session: OwnedSession, campaignId: string) {
    const row = await this.campaigns.findInSession(session, campaignId);
    if (!row) throw new DomainError('not_found', 'campaign not found', { id: campaignId });
    return row;
  }
}
