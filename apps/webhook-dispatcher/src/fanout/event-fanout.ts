import type { DataSource } from 'typeorm';
import type { Queue } from 'bullmq';
import { DELIVER_JOB, DeliverJobData, deliveryJobId, EventEnvelope } from '@app/contracts';
import { newId } from '@app/database';
import type { WebhookDirectory } from '../webhooks/webhook-directory';

interface PlannedDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  organizationId: string;
  eventType: string;
}

/**
 * Turns events into deliveries: one `deliveries` row per (matching webhook, event), then one job per
 * new row, then the event is marked fanned out. Idempotent: a re-read event hits the UNIQUE
 * (webhook_id, event_id) and creates nothing; a row whose job was lost is re-enqueued by the reconciler.
 */
export class EventFanout {
  constructor(
    private readonly db: DataSource,
    private readonly queue: Queue<DeliverJobData>,
    private readonly directory: WebhookDirectory,
    private readonly onCreated: (n: number) => void = () => undefined,
  ) {}

  async fanOut(envelopes: EventEnvelope[]): Promise<number> {
    if (envelopes.length === 0) return 0;
    await this.directory.settled();
    const planned: PlannedDelivery[] = [];
    for (const envelope of envelopes) {
      for (const webhook of this.directory.match(envelope)) {
        planned.push({
          id: newId('dlv'),
          webhookId: webhook.id,
          eventId: envelope.id,
          organizationId: envelope.organizationId,
          eventType: envelope.event,
        });
      }
    }
    // one lock order for every replica, so two fan-outs of the same batch cannot deadlock
    planned.sort((a, b) => (a.webhookId === b.webhookId ? (a.eventId < b.eventId ? -1 : 1) : a.webhookId < b.webhookId ? -1 : 1));
    const created = planned.length ? await this.insert(planned) : [];
    if (created.length) {
      await this.queue.addBulk(
        created.map((id) => ({ name: DELIVER_JOB, data: { deliveryId: id, attemptNo: 1 }, opts: { jobId: deliveryJobId(id, 1) } })),
      );
      this.onCreated(created.length);
    }
    await this.db.query(`UPDATE events SET fanned_out_at = now() WHERE id = ANY($1::text[]) AND fanned_out_at IS NULL`, [
      envelopes.map((e) => e.id),
    ]);
    return created.length;
  }

  private async insert(planned: PlannedDelivery[]): Promise<string[]> {
    // rows whose webhook was deleted (or whose event never reached the outbox) are skipped, not fatal
    const sql = `INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, next_attempt_at)
      SELECT u.id, u.webhook_id, u.event_id, u.organization_id, u.event_type, 'pending', 0, now()
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, webhook_id, event_id, organization_id, event_type)
       WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = u.webhook_id)
         AND EXISTS (SELECT 1 FROM events e WHERE e.id = u.event_id)
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING id`;
    const params = [
      planned.map((p) => p.id),
      planned.map((p) => p.webhookId),
      planned.map((p) => p.eventId),
      planned.map((p) => p.organizationId),
      planned.map((p) => p.eventType),
    ];
    for (let attempt = 1; ; attempt++) {
      try {
        const rows: { id: string }[] = await this.db.query(sql, params);
        return rows.map((r) => r.id);
      } catch (err) {
        // a webhook deleted between the check and the insert, or a deadlock with another replica
        const code = (err as { code?: string }).code;
        if (attempt < 3 && (code === '23503' || code === '40P01')) continue;
        throw err;
      }
    }
  }
}
