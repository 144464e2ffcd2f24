import { Injectable } from '@nestjs/common';
import { SESSION_STATUSES, type SessionStatus } from '@app/contracts';
import { DeliveryLogRepository, MessagesRepository, SessionsRepository, WebhooksRepository } from '@app/database';
import type { DeliveryHourResponse, FailingWebhookResponse, MessageHourResponse, OverviewResponse } from './overview.dto';

const HOUR_MS = 3600_000;
export const OVERVIEW_HOURS = 24;

/**
 * The organization at a glance (the dashboard's Overview): sessions by status, messages and webhook deliveries per
 * hour over the last 24 hours, the webhooks failing now. Each figure is one indexed statement of its table's
 * repository; hours without traffic are filled in here, so a chart always has 24 points.
 */
@Injectable()
export class StatsService {
  constructor(
    private readonly sessions: SessionsRepository,
    private readonly messages: MessagesRepository,
    private readonly deliveries: DeliveryLogRepository,
    private readonly webhooks: WebhooksRepository,
    private readonly clock: () => number = Date.now,
  ) {}

  async overview(organizationId: string, withWebhooks: boolean): Promise<OverviewResponse> {
    const now = this.clock();
    const since = Math.floor(now / HOUR_MS) * HOUR_MS - (OVERVIEW_HOURS - 1) * HOUR_MS;
    const [statuses, messageHours, deliveryHours, failing] = await Promise.all([
      this.sessions.countByStatus(organizationId),
      this.messages.hourlyCounts(organizationId, since),
      withWebhooks ? this.deliveries.hourlyOutcomes(organizationId, since) : null,
      withWebhooks ? this.failingWebhooks(organizationId) : null,
    ]);
    const byStatus = Object.fromEntries(SESSION_STATUSES.map((s) => [s, statuses.get(s) ?? 0])) as Record<SessionStatus, number>;
    return {
      generatedAt: now,
      sessions: { total: Object.values(byStatus).reduce((a, b) => a + b, 0), byStatus },
      messages: hours(since, messageHours, (hour): MessageHourResponse => ({ hour, received: 0, sent: 0 })),
      deliveries: deliveryHours && hours(since, deliveryHours, (hour): DeliveryHourResponse => ({ hour, delivered: 0, failed: 0, p95LatencyMs: null })),
      failingWebhooks: failing,
    };
  }

  private async failingWebhooks(organizationId: string): Promise<FailingWebhookResponse[]> {
    const failing = await this.webhooks.failingOf(organizationId);
    const last = await this.deliveries.lastFailures(failing.map((w) => w.id));
    return failing.map((w) => {
      const f = last.get(w.id);
      return {
        id: w.id,
        url: w.url,
        failingSince: w.failingSince,
        disabledAt: w.disabledAt,
        lastError: f?.lastError ?? w.disabledReason,
        lastStatusCode: f?.lastStatusCode ?? null,
        lastFailedAt: f?.at ?? null,
      };
    });
  }
}

/** One entry per hour from `since`, oldest first: the stored ones, the empty hours filled with `empty`. */
function hours<T extends { hour: number }>(since: number, stored: T[], empty: (hour: number) => T): T[] {
  const byHour = new Map(stored.map((h) => [h.hour, h]));
  return Array.from({ length: OVERVIEW_HOURS }, (_, i) => since + i * HOUR_MS).map((hour) => byHour.get(hour) ?? empty(hour));
}
