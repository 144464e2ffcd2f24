import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import {
  DELIVER_JOB,
  DELIVERY_JOB_OPTIONS,
  DELIVERY_QUEUE,
  DeliverJobData,
  DeliveryDetailView,
  DeliveryStatus,
  deliveryJobId,
  DeliveryView,
  DomainError,
} from '@app/contracts';
import { newId } from '@app/database';
import { EventPublisher } from '@app/events';
import { Redis, RedisKeys } from '@app/redis';
import { Page, pageLimit } from '../common/pagination';
import { epochMs } from '../common/time';
import { REDIS_CLIENT } from '@app/infra';
import { WebhooksService } from '../webhooks/webhooks.service';
import { ListDeliveriesQueryDto } from './dto/delivery.dto';

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  delivered_at: Date | null;
  next_attempt_at: Date | null;
}

const COLUMNS = `id, webhook_id, event_id, event_type, status, attempts, last_status_code, last_error, created_at, updated_at, delivered_at, next_attempt_at`;

function toView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    event: row.event_type,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    deliveredAt: epochMs(row.delivered_at),
    nextAttemptAt: row.status === 'pending' ? epochMs(row.next_attempt_at) : null,
  };
}

const deliveryNotFound = () => new DomainError('not_found', 'delivery not found');

/**
 * The delivery log of a webhook, replays and test sends. The dispatcher does the POSTs; this side only
 * reads and resets PostgreSQL rows and adds the job for the next attempt (ids only, as the dispatcher does).
 */
@Injectable()
export class DeliveriesService implements OnModuleDestroy {
  private readonly queue: Queue<DeliverJobData>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(REDIS_CLIENT) redis: Redis,
    keys: RedisKeys,
    private readonly webhooks: WebhooksService,
    private readonly events: EventPublisher,
  ) {
    this.queue = new Queue<DeliverJobData>(DELIVERY_QUEUE, { connection: redis, prefix: keys.bullPrefix, defaultJobOptions: DELIVERY_JOB_OPTIONS });
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue.close();
  }

  /** Newest first (delivery ids are ULIDs); `cursor` is the last id of the previous page. */
  async list(organizationId: string, webhookId: string, query: ListDeliveriesQueryDto): Promise<Page<DeliveryView>> {
    await this.webhooks.find(organizationId, webhookId);
    const limit = pageLimit(query);
    const rows: DeliveryRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM deliveries
        WHERE webhook_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id < $3)
        ORDER BY id DESC LIMIT $4`,
      [webhookId, query.status ?? null, query.cursor ?? null, limit + 1],
    );
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return { data: page.map(toView), nextCursor: more ? page[page.length - 1].id : null };
  }

  async get(organizationId: string, webhookId: string, deliveryId: string): Promise<DeliveryDetailView> {
    await this.webhooks.find(organizationId, webhookId);
    const [row]: DeliveryRow[] = await this.db.query(`SELECT ${COLUMNS} FROM deliveries WHERE id = $1 AND webhook_id = $2`, [deliveryId, webhookId]);
    if (!row) throw deliveryNotFound();
    const attempts: { attempt_no: number; status_code: number | null; duration_ms: number; error: string | null; response_snippet: string | null; started_at: Date }[] =
      await this.db.query(
        `SELECT attempt_no, status_code, duration_ms, error, response_snippet, started_at FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt_no, started_at`,
        [deliveryId],
      );
    return {
      ...toView(row),
      attemptList: attempts.map((a) => ({
        attemptNo: a.attempt_no,
        statusCode: a.status_code,
        durationMs: a.duration_ms,
        error: a.error,
        responseSnippet: a.response_snippet,
        startedAt: a.started_at.getTime(),
      })),
    };
  }

  /**
   * Sends a finished (delivered or dead) delivery again: same event, so the same X-Webhook-Request-Id,
   * with a fresh timestamp and signature and a fresh retry budget. A delivery still in progress → 409.
   */
  async replay(organizationId: string, webhookId: string, deliveryId: string): Promise<DeliveryView> {
    await this.webhooks.find(organizationId, webhookId);
    // TypeORM answers an UPDATE with [rows, affected]
    const [[row]]: [DeliveryRow[], number] = await this.db.query(
      `UPDATE deliveries
          SET status = 'pending', attempt_base = attempts, next_attempt_at = now(), leased_until = NULL, updated_at = now()
        WHERE id = $1 AND webhook_id = $2 AND status IN ('delivered', 'dead')
        RETURNING ${COLUMNS}`,
      [deliveryId, webhookId],
    );
    if (!row) {
      const [exists] = await this.db.query(`SELECT status FROM deliveries WHERE id = $1 AND webhook_id = $2`, [deliveryId, webhookId]);
      if (!exists) throw deliveryNotFound();
      throw new DomainError('conflict', 'delivery is still in progress', { status: exists.status });
    }
    // if this add is lost, the dispatcher's reconciler enqueues the due delivery
    await this.enqueue(row.id, row.attempts + 1);
    return toView(row);
  }

  /**
   * Publishes a webhook.test event naming this webhook (the dispatcher delivers it to that webhook
   * only) and creates its delivery right away, so the caller gets the delivery id to follow.
   */
  async sendTest(organizationId: string, webhookId: string): Promise<{ eventId: string; deliveryId?: string }> {
    const webhook = await this.webhooks.find(organizationId, webhookId);
    if (!webhook.active) throw new DomainError('conflict', 'webhook is inactive: it receives no deliveries');
    const envelope = await this.events.publish({
      event: 'webhook.test',
      organizationId,
      sessionId: null,
      payload: { webhookId, message: 'test delivery requested through the API' },
    });
    // the dispatcher's fan-out may get there first; UNIQUE (webhook_id, event_id) keeps one row either way
    const created: { id: string }[] = await this.db.query(
      `INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, next_attempt_at)
       VALUES ($1, $2, $3, $4, 'webhook.test', 'pending', 0, now())
       ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING id`,
      [newId('dlv'), webhookId, envelope.id, organizationId],
    );
    if (created.length) {
      await this.enqueue(created[0].id, 1).catch(() => undefined);
      return { eventId: envelope.id, deliveryId: created[0].id };
    }
    const [existing] = await this.db.query(`SELECT id FROM deliveries WHERE webhook_id = $1 AND event_id = $2`, [webhookId, envelope.id]);
    return { eventId: envelope.id, deliveryId: existing?.id };
  }

  private async enqueue(deliveryId: string, attemptNo: number): Promise<void> {
    await this.queue.add(DELIVER_JOB, { deliveryId, attemptNo }, { jobId: deliveryJobId(deliveryId, attemptNo) });
  }
}
