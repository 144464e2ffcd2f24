import { Injectable } from '@nestjs/common';
import { Db, type Queryable, type Tx } from '../pg';
import type { OwnedSession } from './sessions.repository';
import type {
  CampaignCounts,
  CampaignPacing,
  CampaignRecipientView,
  CampaignStatus,
  CampaignView,
  CampaignWarmup,
  OptOutView,
  RecipientStatus,
  CampaignMessage,
  CapCounters,
  MessageStatus,
  SendWindow,
} from '@app/contracts';

/** A campaign's row as the apps see it. */
export interface CampaignRow {
  id: string;
  organizationId: string;
  sessionId: string;
  name: string;
  status: CampaignStatus;
  /** the send body; its text (or caption) is the template */
  message: CampaignMessage;
  window: SendWindow | null;
  pacing: CampaignPacing;
  warmup: CampaignWarmup | null;
  skipNotOnWhatsApp: boolean;
  total: number;
  startAt: number;
  nextSendAt: number | null;
  lastMessageId: string | null;
  lastDelayMs: number;
  caps: CapCounters;
  progressAt: number | null;
  createdAt: number;
  completedAt: number | null;
  /** the counts, kept on the row by the database in the statement that changes them (migration 1795879000000) */
  counts: CampaignCounts;
}

export interface NewCampaign {
  id: string;
  organizationId: string;
  sessionId: string;
  name: string;
  message: CampaignMessage;
  window: SendWindow | null;
  pacing: CampaignPacing;
  warmup: CampaignWarmup | null;
  skipNotOnWhatsApp: boolean;
  startAt: number;
}

export interface NewRecipient {
  to: string;
  variables: Record<string, string> | null;
}

export interface RecipientRow {
  campaignId: string;
  position: number;
  to: string;
  variables: Record<string, string> | null;
  status: RecipientStatus;
  messageId: string | null;
}

/** The next pending recipient of a step, and whether its number opted out of the session's campaigns. */
export interface NextRecipient extends RecipientRow {
  optedOut: boolean;
}

/** A campaign's last message as a step reads it: only whether it settled, and when it was recorded sent. */
export interface LastMessageState {
  status: MessageStatus;
  sentAt: number | null;
  updatedAt: number;
}

/** A live campaign the due scan returned: its row and, read in the same statement, its last message (null: none). */
export interface DueCampaign extends CampaignRow {
  last: LastMessageState | null;
}

const COLUMNS = `id, organization_id, session_id, name, status, message, time_window, pacing, warmup, skip_not_on_whatsapp, total,
  start_at, next_send_at, last_message_id, last_delay_ms, day_key, day_count, days_sent, hour_key, hour_count, progress_at,
  created_at, completed_at, count_pending, count_sent, count_delivered, count_read, count_failed, count_skipped, count_opted_out,
  count_replied`;

interface RawCampaign {
  id: string;
  organization_id: string;
  session_id: string;
  name: string;
  status: CampaignStatus;
  message: CampaignMessage;
  time_window: SendWindow | null;
  pacing: CampaignPacing;
  warmup: CampaignWarmup | null;
  skip_not_on_whatsapp: boolean;
  total: number;
  start_at: Date;
  next_send_at: Date | null;
  last_message_id: string | null;
  last_delay_ms: number;
  day_key: string | null;
  day_count: number;
  days_sent: number;
  hour_key: string | null;
  hour_count: number;
  progress_at: Date | null;
  created_at: Date;
  completed_at: Date | null;
  count_pending: number;
  count_sent: number;
  count_delivered: number;
  count_read: number;
  count_failed: number;
  count_skipped: number;
  count_opted_out: number;
  count_replied: number;
}

const ms = (d: Date | null) => (d ? d.getTime() : null);

function toRow(r: RawCampaign): CampaignRow {
  return {
    id: r.id,
    organizationId: r.organization_id,
    sessionId: r.session_id,
    name: r.name,
    status: r.status,
    // a campaign stored before media campaigns has no `media` in its message
    message: { ...r.message, media: r.message.media ?? null },
    window: r.time_window,
    pacing: r.pacing,
    warmup: r.warmup,
    skipNotOnWhatsApp: r.skip_not_on_whatsapp,
    total: r.total,
    startAt: r.start_at.getTime(),
    nextSendAt: ms(r.next_send_at),
    lastMessageId: r.last_message_id,
    lastDelayMs: r.last_delay_ms,
    caps: { dayKey: r.day_key, dayCount: r.day_count, daysSent: r.days_sent, hourKey: r.hour_key, hourCount: r.hour_count },
    progressAt: ms(r.progress_at),
    createdAt: r.created_at.getTime(),
    completedAt: ms(r.completed_at),
    counts: {
      total: r.total, pending: r.count_pending, sent: r.count_sent, delivered: r.count_delivered, read: r.count_read,
      failed: r.count_failed, skipped: r.count_skipped, optedOut: r.count_opted_out, replied: r.count_replied,
    },
  };
}

/** The Campaign resource: the row and its counts (kept on it). */
export function toCampaignView(row: CampaignRow): CampaignView {
  return {
    id: row.id,
    sessionId: row.sessionId,
    organizationId: row.organizationId,
    name: row.name,
    status: row.status,
    counts: row.counts,
    window: row.window,
    pacing: row.pacing,
    warmup: row.warmup,
    skipNotOnWhatsApp: row.skipNotOnWhatsApp,
    startAt: row.startAt,
    nextSendAt: row.status === 'running' || row.status === 'scheduled' ? row.nextSendAt : null,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
  };
}

/** A campaign that can still send: the due scan reads these only, through `campaigns_due`. */
const LIVE = `status IN ('scheduled', 'running')`;

/**
 * The recipient's state as the API shows it: `campaign_view_status` (migration 1795879000000), the one definition the
 * counters' triggers also use (an enqueued recipient takes its message's status; played counts as read).
 */
const VIEW_STATUS_SQL = `campaign_view_status(r.status, m.status)`;

/**
 * A media campaign's bytes (`campaign_media`, one row per campaign), for a statement of another repository that reads
 * them with its own rows (`MessagesRepository.mediaOf`: a campaign message's bytes are its campaign's).
 */
export const campaignMediaSql = (campaignIdExpr: string) => `SELECT data FROM campaign_media WHERE campaign_id = ${campaignIdExpr}`;

/** Every query of `campaigns`, `campaign_recipients`, `campaign_media` and `opt_outs`. */
@Injectable()
export class CampaignsRepository {
  constructor(private readonly db: Db) {}

  private q(manager?: Tx): Queryable {
    return manager ?? this.db;
  }

  /**
   * The campaign, its media's bytes (once, whatever the number of recipients) and every recipient, in one transaction
   * (the recipients in 2,000-row statements).
   */
  async create(c: NewCampaign, recipients: NewRecipient[], media: Buffer | null = null): Promise<CampaignRow> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<RawCampaign>(
        `INSERT INTO campaigns (id, organization_id, session_id, name, status, message, time_window, pacing, warmup,
           skip_not_on_whatsapp, total, start_at, next_send_at)
         VALUES ($1, $2, $3, $4, 'scheduled', $5, $6, $7, $8, $9, $10, $11, $11) RETURNING ${COLUMNS}`,
        [c.id, c.organizationId, c.sessionId, c.name, JSON.stringify(c.message), c.window ? JSON.stringify(c.window) : null,
          JSON.stringify(c.pacing), c.warmup ? JSON.stringify(c.warmup) : null, c.skipNotOnWhatsApp, recipients.length, new Date(c.startAt)],
      );
      if (media) await tx.query(`INSERT INTO campaign_media (campaign_id, data) VALUES ($1, $2)`, [c.id, media]);
      for (let from = 0; from < recipients.length; from += 2000) {
        const chunk = recipients.slice(from, from + 2000);
        await tx.query(
          `INSERT INTO campaign_recipients (campaign_id, position, to_jid, variables, status)
           SELECT $1, $2::int + n - 1, t, v::jsonb, 'pending' FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS x(t, v, n)`,
          [c.id, from, chunk.map((r) => r.to), chunk.map((r) => (r.variables ? JSON.stringify(r.variables) : null))],
        );
      }
      return toRow(rows[0]);
    });
  }

  async findInSession(session: OwnedSession, id: string, manager?: Tx): Promise<CampaignRow | null> {
    const rows = await this.q(manager).query<RawCampaign>(
      `SELECT ${COLUMNS} FROM campaigns WHERE id = $1 AND session_id = $2 AND organization_id = $3`,
      [id, session.id, session.organizationId],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  async listInSession(session: OwnedSession, limit: number, cursor?: string): Promise<CampaignRow[]> {
    const rows = await this.db.query<RawCampaign>(
      `SELECT ${COLUMNS} FROM campaigns WHERE session_id = $1 AND organization_id = $2 AND ($3::text IS NULL OR id < $3)
        ORDER BY id DESC LIMIT $4`,
      [session.id, session.organizationId, cursor ?? null, limit],
    );
    return rows.map(toRow);
  }

  /**
   * The counts of a campaign (the progress events): its row's counters, which the database keeps in the statement that
   * changes a recipient's or its message's state, so reading them costs one row, never the recipients. `replied`: an
   * enqueued recipient whose chat has a message from them after theirs was sent (`campaign_recipients.replied`).
   */
  async counts(campaignId: string, manager?: Tx): Promise<CampaignCounts> {
    const rows = await this.q(manager).query<RawCampaign>(`SELECT ${COLUMNS} FROM campaigns WHERE id = $1`, [campaignId]);
    if (!rows[0]) throw new Error(`campaign ${campaignId} does not exist`);
    return toRow(rows[0]).counts;
  }

  /** Recipients in order (keyset by position), with the state the API shows (`VIEW_STATUS_SQL`), optionally one state. */
  async recipients(campaignId: string, status: RecipientStatus | undefined, limit: number, after?: number): Promise<CampaignRecipientView[]> {
    const rows = await this.db.query<{ position: number; to_jid: string; s: RecipientStatus; message_id: string | null; error: string | null; updated_at: Date }>(
        `SELECT * FROM (
           SELECT r.position, r.to_jid, ${VIEW_STATUS_SQL} AS s, r.message_id, COALESCE(r.error, m.error) AS error,
                  GREATEST(r.updated_at, m.updated_at) AS updated_at
             FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
            WHERE r.campaign_id = $1 AND r.position > $2
         ) v WHERE ($3::text IS NULL OR v.s = $3) ORDER BY position LIMIT $4`,
        [campaignId, after ?? -1, status ?? null, limit],
      );
    return rows.map((r) => ({ position: r.position, to: r.to_jid, status: r.s, messageId: r.message_id, error: r.error, updatedAt: r.updated_at.getTime() }));
  }

  /**
   * A status change asked through the API (pause, resume, cancel), from one of `from`, in the caller's transaction:
   * the row is locked, so a scheduler step enqueuing under the same lock is wholly before or wholly after it. Null when
   * the campaign is not in one of `from`. A cancel also ends every pending recipient (`cancelled`).
   */
  async changeStatus(tx: Tx, id: string, from: CampaignStatus[], to: CampaignStatus): Promise<CampaignRow | null> {
    const rows = await tx.query<RawCampaign>(
      `UPDATE campaigns SET status = $3, updated_at = now(),
              next_send_at = CASE WHEN $3 = 'running' THEN now() ELSE next_send_at END,
              completed_at = CASE WHEN $3 = 'cancelled' THEN now() ELSE completed_at END
        WHERE id = $1 AND status = ANY($2::text[]) RETURNING ${COLUMNS}`,
      [id, from, to],
    );
    if (rows[0] && to === 'cancelled') {
      await tx.query(`UPDATE campaign_recipients SET status = 'cancelled', updated_at = now() WHERE campaign_id = $1 AND status = 'pending'`, [id]);
      await this.forgetMedia(tx, id);
    }
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** The status of a campaign (404 vs 409 of a refused change). */
  async statusOf(id: string): Promise<CampaignStatus | null> {
    const rows = await this.db.query<{ status: CampaignStatus }>(`SELECT status FROM campaigns WHERE id = $1`, [id]);
    return rows[0]?.status ?? null;
  }

  /**
   * The live campaigns of these sessions whose step is due (`next_send_at <= now()`), and the earliest `next_send_at`
   * of the others (`alsoIds`: stepped whenever they are live: their last message just settled, or the delay after it
   * the scheduler keeps in memory passed). Both read `campaigns_due (session_id, next_send_at) WHERE status IN
   * ('scheduled','running')`: a paused, completed or cancelled campaign is not in it, and a live one costs one index
   * entry, never its recipients. A due campaign comes with its last message's state (one primary-key read in the same
   * statement: the step's first question is whether that message settled and its delay passed).
   */
  async due(sessionIds: string[], alsoIds: string[] = []): Promise<{ due: DueCampaign[]; nextAt: number | null }> {
    if (sessionIds.length === 0) return { due: [], nextAt: null };
    const rows = await this.db.query<RawCampaign & { is_due: boolean; last_status: MessageStatus | null; last_sent_at: Date | null; last_updated_at: Date | null }>(
      `SELECT ${COLUMNS}, d.is_due, m.last_status, m.last_sent_at, m.last_updated_at
         FROM campaigns
        CROSS JOIN LATERAL (SELECT next_send_at <= now() OR id = ANY($2::text[]) AS is_due) d
         LEFT JOIN LATERAL (SELECT status AS last_status, sent_at AS last_sent_at, updated_at AS last_updated_at
                              FROM messages WHERE messages.id = campaigns.last_message_id AND d.is_due) m ON true
        WHERE session_id = ANY($1::text[]) AND ${LIVE}`,
      [sessionIds, alsoIds],
    );
    const due = rows.filter((r) => r.is_due).map((r) => ({
      ...toRow(r),
      last: r.last_status === null ? null : { status: r.last_status, sentAt: ms(r.last_sent_at), updatedAt: r.last_updated_at!.getTime() },
    }));
    const later = rows.filter((r) => !r.is_due && r.next_send_at).map((r) => r.next_send_at!.getTime());
    return { due, nextAt: later.length ? Math.min(...later) : null };
  }

  /** The campaign locked for a step (the caller's transaction); null when it is no longer live. */
  async lockLive(tx: Tx, id: string): Promise<CampaignRow | null> {
    const rows = await tx.query<RawCampaign>(`SELECT ${COLUMNS} FROM campaigns WHERE id = $1 AND ${LIVE} FOR UPDATE`, [id]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /**
   * The next pending recipient in order (`campaign_recipients_pending`) and whether it opted out (`opt_outs`), in one
   * statement and without a lock: whatever the step then writes of it is conditional on it still being pending
   * (`passOver`, `queueRecipient`), so a recipient taken meanwhile is never taken twice.
   */
  async nextRecipient(campaignId: string, sessionId: string): Promise<NextRecipient | null> {
    const rows = await this.db.query<{ position: number; to_jid: string; variables: Record<string, string> | null; status: RecipientStatus; message_id: string | null; opted_out: boolean }>(
        `SELECT position, to_jid, variables, status, message_id,
                EXISTS (SELECT 1 FROM opt_outs o WHERE o.session_id = $2 AND o.jid = r.to_jid) AS opted_out
           FROM campaign_recipients r WHERE campaign_id = $1 AND status = 'pending' ORDER BY position LIMIT 1`,
        [campaignId, sessionId],
      );
    const r = rows[0];
    return r ? { campaignId, position: r.position, to: r.to_jid, variables: r.variables, status: r.status, messageId: r.message_id, optedOut: r.opted_out } : null;
  }

  /**
   * A pending recipient the step passes over (`optedOut`, or `skipped` with the reason), while its campaign is live;
   * one statement. False when it is no longer pending or the campaign no longer live.
   */
  async passOver(campaignId: string, position: number, status: 'optedOut' | 'skipped', error: string | null): Promise<boolean> {
    const changed = await this.db.affected(
      `UPDATE campaign_recipients SET status = $3, error = $4, updated_at = now()
        WHERE campaign_id = $1 AND position = $2 AND status = 'pending'
          AND EXISTS (SELECT 1 FROM campaigns WHERE id = $1 AND ${LIVE})`,
      [campaignId, position, status, error],
    );
    return changed > 0;
  }

  /**
   * The recipient `queued` with its message, in the step's transaction (campaign locked); false when it is no longer
   * pending (taken by another step, or ended), and then nothing changed.
   */
  async queueRecipient(tx: Tx, campaignId: string, position: number, messageId: string): Promise<boolean> {
    const changed = await tx.affected(
      `UPDATE campaign_recipients SET status = 'queued', message_id = $3, error = NULL, updated_at = now()
        WHERE campaign_id = $1 AND position = $2 AND status = 'pending'`,
      [campaignId, position, messageId],
    );
    return changed > 0;
  }

  /** A step that cannot go on yet: the campaign's next step at `at`, while it is live (one statement). */
  async postpone(id: string, at: number): Promise<void> {
    await this.db.query(`UPDATE campaigns SET next_send_at = $2, updated_at = now() WHERE id = $1 AND ${LIVE}`, [id, new Date(at)]);
  }

  /** Whether a campaign has a recipient whose message is still to be sent (queued, or withdrawn by a pause). */
  async hasUnsent(tx: Tx, campaignId: string): Promise<boolean> {
    const rows = await tx.query<unknown>(
      `SELECT 1 FROM campaign_recipients r JOIN messages m ON m.id = r.message_id
        WHERE r.campaign_id = $1 AND r.status = 'queued' AND m.status IN ('queued', 'scheduled') LIMIT 1`,
      [campaignId],
    );
    return rows.length > 0;
  }

  /** What a step decided: the next step's time, the counters, the message it enqueued and its delay, the status. */
  async afterStep(
    tx: Tx,
    id: string,
    change: { nextSendAt: number | null; status?: CampaignStatus; caps?: CapCounters; lastMessageId?: string; lastDelayMs?: number; progressAt?: number },
  ): Promise<void> {
    const c = change.caps;
    await tx.query(
      `UPDATE campaigns SET next_send_at = $2, status = COALESCE($3, status), updated_at = now(),
              completed_at = CASE WHEN $3 = 'completed' THEN now() ELSE completed_at END,
              day_key = COALESCE($4, day_key), day_count = COALESCE($5, day_count), days_sent = COALESCE($6, days_sent),
              hour_key = COALESCE($7, hour_key), hour_count = COALESCE($8, hour_count),
              last_message_id = COALESCE($9, last_message_id), last_delay_ms = COALESCE($10, last_delay_ms),
              progress_at = COALESCE($11, progress_at)
        WHERE id = $1`,
      [id, change.nextSendAt === null ? null : new Date(change.nextSendAt), change.status ?? null, c?.dayKey ?? null, c?.dayCount ?? null,
        c?.daysSent ?? null, c?.hourKey ?? null, c?.hourCount ?? null, change.lastMessageId ?? null, change.lastDelayMs ?? null,
        change.progressAt === undefined ? null : new Date(change.progressAt)],
    );
    if (change.status === 'completed') await this.forgetMedia(tx, id);
  }

  /** A campaign that will send nothing more (completed, cancelled) no longer needs its media's bytes. */
  private async forgetMedia(tx: Tx, id: string): Promise<void> {
    await tx.query(`DELETE FROM campaign_media WHERE campaign_id = $1`, [id]);
  }

  // ----- opt-outs -----

  /** Records an opt-out (an inbound message that was an opt-out keyword); true when it is new. */
  async addOptOut(sessionId: string, jid: string, keyword: string): Promise<boolean> {
    const rows = await this.db.query<unknown>(
      `INSERT INTO opt_outs (session_id, jid, keyword) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING jid`,
      [sessionId, jid, keyword],
    );
    return rows.length > 0;
  }

  async optOuts(session: OwnedSession, limit: number, after?: string): Promise<OptOutView[]> {
    const rows = await this.db.query<{ jid: string; keyword: string; created_at: Date }>(
      `SELECT jid, keyword, created_at FROM opt_outs WHERE session_id = $1 AND ($2::text IS NULL OR jid > $2) ORDER BY jid LIMIT $3`,
      [session.id, after ?? null, limit],
    );
    return rows.map((r) => ({ jid: r.jid, keyword: r.keyword, createdAt: r.created_at.getTime() }));
  }

  async removeOptOut(session: OwnedSession, jid: string): Promise<boolean> {
    return (await this.db.affected(`DELETE FROM opt_outs WHERE session_id = $1 AND jid = $2`, [session.id, jid])) > 0;
  }
}
