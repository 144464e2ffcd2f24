import { Injectable } from '@nestjs/common';
import { DeliveryDetailView, DeliveryView, DomainError } from '@app/contracts';
import { DeliveryAttemptsRepository, DeliveryLogRepository, DeliveryRecord, DestinationFamily, newId, Webhook } from '@app/database';
import { DeliveryQueue, EventPublisher } from '@app/events';
import { Page, pageLimit } from '../common/pagination';
import { epochMs } from '../common/time';
import { DESTINATION_NOUN, type DestinationCaller, Destinations } from '../destinations/destinations';
import { ListDeliveriesQueryDto } from './dto/delivery.dto';

function toView({ eventType, createdAt, updatedAt, deliveredAt, nextAttemptAt, ...row }: DeliveryRecord): DeliveryView {
  return {
    ...row,
    event: eventType,
    createdAt: createdAt.getTime(),
    updatedAt: updatedAt.getTime(),
    deliveredAt: epochMs(deliveredAt),
    nextAttemptAt: row.status === 'pending' ? epochMs(nextAttemptAt) : null,
  };
}

const deliveryNotFound = () => new DomainError('not_found', 'delivery not found');

/**
 * The delivery log of a webhook, replays and test sends. The dispatcher does the POSTs; this side only
 * reads and resets PostgreSQL rows and adds the job for the next attempt (ids only, as the dispatcher does).
 */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly deliveries: DeliveryLogRepository,
    private readonly attempts: DeliveryAttemptsRepository,
    private readonly queue: DeliveryQueue,
    private readonly destinations: Destinations,
    private readonly events: EventPublisher,
  ) {}

  /**
   * A destination of the caller's organization and sessions, of the family the route names (a webhook under `/webhooks`,
   * a sink under `/event-sinks`); another organization's is reported exactly like a missing one.
   */
  private find(caller: DestinationCaller, id: string, family: DestinationFamily): Promise<Webhook> {
    return this.destinations.find(caller, family, id);
  }

  /** Newest first (delivery ids are ULIDs); `cursor` is the last id of the previous page. */
  async list(caller: DestinationCaller, webhookId: string, query: ListDeliveriesQueryDto, family: DestinationFamily = 'webhook'): Promise<Page<DeliveryView>> {
    await this.find(caller, webhookId, family);
    const limit = pageLimit(query);
    const rows = await this.deliveries.listByWebhook(webhookId, { status: query.status, cursor: query.cursor }, limit + 1);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return { data: page.map(toView), nextCursor: more ? page[page.length - 1].id : null };
  }

  async get(caller: DestinationCaller, webhookId: string, deliveryId: string, family: DestinationFamily = 'webhook'): Promise<DeliveryDetailView> {
    await this.find(caller, webhookId, family);
    const row = await this.deliveries.findOfWebhook(webhookId, deliveryId);
    if (!row) throw deliveryNotFound();
    const attempts = await this.attempts.listOfDelivery(deliveryId);
    return {
      ...toView(row),
      attemptList: attempts.map(({ startedAt, ...a }) => ({ ...a, startedAt: startedAt.getTime() })),
    };
  }

  /**
   * Sends a finished (delivered or dead) delivery again: same event, so the same X-Webhook-Request-Id,
   * with a fresh timestamp and signature and a fresh retry budget. A delivery still in progress → 409.
   */
  async replay(caller: DestinationCaller, webhookId: string, deliveryId: string, family: DestinationFamily = 'webhook'): Promise<DeliveryView> {
    await this.find(caller, webhookId, family);
    const row = await this.deliveries.resetForReplay(webhookId, deliveryId);
    if (!row) {
      const exists = await this.deliveries.findOfWebhook(webhookId, deliveryId);
      if (!exists) throw deliveryNotFound();
      throw new DomainError('conflict', 'delivery is still in progress', { status: exists.status });
    }
    // if this add is lost, the dispatcher's reconciler enqueues the due delivery
    await this.queue.add(row.id, row.attempts + 1);
    return toView(row);
  }

  /**
   * Publishes a webhook.test event naming this webhook (the dispatcher delivers it to that webhook
   * only) and creates its delivery right away, so the caller gets the delivery id to follow.
   */
  async sendTest(caller: DestinationCaller, webhookId: string, family: DestinationFamily = 'webhook'): Promise<{ eventId: string; deliveryId?: string }> {
    const webhook = await this.find(caller, webhookId, family);
    if (!webhook.active) throw new DomainError('conflict', `${DESTINATION_NOUN[family]} is inactive: it receives no deliveries`);
    const organizationId = caller.organizationId;
    const envelope = await this.events.publish({
      event: 'webhook.test',
      organizationId,
      sessionId: null,
      payload: { webhookId, message: 'test delivery requested through the API' },
    });
    // the dispatcher's fan-out may get there first; UNIQUE (webhook_id, event_id) keeps one row either way
    const created = await this.deliveries.insertPending({
      deliveryId: newId('dlv'),
      webhookId,
      eventId: envelope.id,
      organizationId,
      eventType: 'webhook.test',
    });
    if (created) {
      await this.queue.add(created, 1).catch(() => undefined);
      return { eventId: envelope.id, deliveryId: created };
    }
    return { eventId: envelope.id, deliveryId: (await this.deliveries.findIdByPair(webhookId, envelope.id)) ?? undefined };
  }
}
