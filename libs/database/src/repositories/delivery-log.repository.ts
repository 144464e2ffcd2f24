import { Injectable } from '@nestjs/common';
import type { DeliveryStatus } from '@app/contracts';
import { DELIVERY_COLUMNS, DeliveryRecord, DeliveryRow, NewDelivery, toDeliveryRecord } from './deliveries.repository';
import { Db } from '../pg';

/** How many of a webhook's newest deliveries `lastFailures` looks through for the newest failure. */
const RECENT_FOR_LAST_FAILURE = 50;

/**
 * The delivery log as the API reads it (`GET …/deliveries`, the Overview's figures) and the API's own writes to it: a
 * replay and a test send's row. The dispatcher's side (fan-out rows, claims, attempts, hand-backs, parking) is
 * `DeliveriesRepository`'s.
 */
@Injectable()
export class DeliveryLogRepository {
  constructor(private readonly db: Db) {}

  /**
   * The organization's webhook deliveries per hour of their creation since `since` (epoch ms, an hour's start):
   * delivered; failed (`dead`, or waiting for a retry after a failed attempt); the 95th percentile of the delivered
   * ones' latency (event stored → receiver's 2xx), null without any. Hours without any are absent. One range scan of
   * `deliveries_org_created` (organization_id, created_at).
   */
  async hourlyOutcomes(organizationId: string, since: number): Promise<Array<{ hour: number; delivered: number; failed: number; p95LatencyMs: number | null }>> {
    const rows = await this.db.query<{ hour: Date; delivered: number; failed: number; p95: number | null }>(
      `SELECT date_trunc('hour', created_at) AS hour,
              count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
              count(*) FILTER (WHERE status = 'dead' OR (status IN ('pending', 'delivering') AND last_error IS NOT NULL))::int AS failed,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at) * 1000)
                FILTER (WHERE status = 'delivered' AND delivered_at IS NOT NULL) AS p95
         FROM deliveries
        WHERE organization_id = $1 AND created_at >= $2
        GROUP BY 1`,
      [organizationId, new Date(since)],
    );
    return rows.map((r) => ({ hour: r.hour.getTime(), delivered: r.delivered, failed: r.failed, p95LatencyMs: r.p95 === null ? null : Math.round(Number(r.p95)) }));
  }

  /**
   * The newest failure among each webhook's latest deliveries (at most `RECENT_FOR_LAST_FAILURE` looked at per
   * webhook, newest first through `deliveries_webhook`): its error, HTTP status and when it was last tried.
   */
  async lastFailures(webhookIds: string[]): Promise<Map<string, { lastError: string; lastStatusCode: number | null; at: number }>> {
    if (!webhookIds.length) return new Map();
    const rows = await this.db.query<{ webhook_id: string; last_error: string; last_status_code: number | null; updated_at: Date }>(
      `SELECT w.id AS webhook_id, f.last_error, f.last_status_code, f.updated_at
         FROM unnest($1::text[]) AS w(id)
         JOIN LATERAL (
           SELECT r.last_error, r.last_status_code, r.updated_at
             FROM (SELECT last_error, last_status_code, updated_at, created_at FROM deliveries
                    WHERE webhook_id = w.id ORDER BY created_at DESC LIMIT ${RECENT_FOR_LAST_FAILURE}) r
            WHERE r.last_error IS NOT NULL ORDER BY r.created_at DESC LIMIT 1
         ) f ON true`,
      [webhookIds],
    );
    return new Map(rows.map((r) => [r.webhook_id, { lastError: r.last_error, lastStatusCode: r.last_status_code, at: r.updated_at.getTime() }]));
  }


  /** A webhook's deliveries, newest first (ids are ULIDs), after `cursor` (an id) when given. */
  async listByWebhook(webhookId: string, filter: { status?: DeliveryStatus; cursor?: string }, limit: number): Promise<DeliveryRecord[]> {
    const rows = await this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries
        WHERE webhook_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id < $3)
        ORDER BY id DESC LIMIT $4`,
      [webhookId, filter.status ?? null, filter.cursor ?? null, limit],
    );
    return rows.map(toDeliveryRecord);
  }

  async findOfWebhook(webhookId: string, deliveryId: string): Promise<DeliveryRecord | null> {
    const [row]: DeliveryRow[] = await this.db.query(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = $1 AND webhook_id = $2`, [deliveryId, webhookId]);
    return row ? toDeliveryRecord(row) : null;
  }

  /** The delivery of an event to a webhook, if there is one. */
  async findIdByPair(webhookId: string, eventId: string): Promise<string | null> {
    const [row]: { id: string }[] = await this.db.query(`SELECT id FROM deliveries WHERE webhook_id = $1 AND event_id = $2`, [webhookId, eventId]);
    return row?.id ?? null;
  }

  /**
   * Puts a finished (delivered or dead) delivery back to `pending`, due now, with a fresh retry budget;
   * null when it is not finished (or not there).
   */
  async resetForReplay(webhookId: string, deliveryId: string): Promise<DeliveryRecord | null> {
    const [row] = await this.db.query<DeliveryRow>(
      `UPDATE deliveries
          SET status = 'pending', attempt_base = attempts, next_attempt_at = now(), leased_until = NULL, updated_at = now()
        WHERE id = $1 AND webhook_id = $2 AND status IN ('delivered', 'dead')
        RETURNING ${DELIVERY_COLUMNS}`,
      [deliveryId, webhookId],
    );
    return row ? toDeliveryRecord(row) : null;
  }

  /** A `pending` row due now with no attempt made; null when the (webhook, event) pair already has one. */
  async insertPending(delivery: NewDelivery): Promise<string | null> {
    const created = await this.db.query<{ id: string }>(
      `INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, 'pending', 0, now())
       ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING id`,
      [delivery.deliveryId, delivery.webhookId, delivery.eventId, delivery.organizationId, delivery.eventType],
    );
    return created[0]?.id ?? null;
  }
}
