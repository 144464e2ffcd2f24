import type { Logger } from 'pino';
import type { DisabledWebhook, WebhooksRepository } from '@app/database';
import type { EventPublisher, WebhookChanges } from '@app/events';

/** The `webhooks` statements the health record needs. */
export type FailingRecord = Pick<WebhooksRepository, 'markFailing' | 'clearFailing'>;

/** Switches a webhook off (if still failing long enough) and announces it; null when it was not. */
export interface Disabler {
  disable(webhookId: string, failingForMs: number, reason: string): Promise<DisabledWebhook | null>;
}

/** How often one webhook's "failing long enough?" is asked of PostgreSQL at most. */
const DISABLE_CHECK_MS = 1000;

/**
 * A webhook's continuous failure, across dispatcher replicas and restarts: `webhooks.failing_since` is set by the
 * first failure after a success and cleared by a success (one statement per transition, not per attempt). Once it
 * is older than `disableAfterMs`, the webhook is disabled (Disabler). The stored value decides, so a replica's stale
 * view (another replica saw a success, a user re-enabled the webhook) can delay a disable but never cause one.
 */
export class WebhookHealth {
  /** what this dispatcher knows of each webhook's failing_since (null: not failing); absent: ask the directory's copy */
  private readonly known = new Map<string, number | null>();
  private readonly checkedAt = new Map<string, number>();
  private readonly busy = new Set<string>();

  constructor(
    private readonly record: FailingRecord,
    private readonly disabler: Disabler,
    /** 0: never disable (and keep no record) */
    private readonly disableAfterMs: number,
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /** An attempt's outcome; `storedFailingSince` is the directory's copy of failing_since. */
  observe(webhookId: string, storedFailingSince: number | null, ok: boolean, error: string | null): void {
    if (this.disableAfterMs === 0 || this.busy.has(webhookId)) return;
    const since = this.known.has(webhookId) ? this.known.get(webhookId)! : storedFailingSince;
    const now = this.clock();
    if (ok) {
      if (since === null) return;
      this.run(webhookId, async () => {
        await this.record.clearFailing(webhookId);
        this.known.set(webhookId, null);
      });
    } else if (since === null) {
      this.run(webhookId, async () => {
        const stored = await this.record.markFailing(webhookId, now);
        this.known.set(webhookId, stored ? stored.getTime() : null);
      });
    } else if (now - since >= this.disableAfterMs && now - (this.checkedAt.get(webhookId) ?? 0) >= DISABLE_CHECK_MS) {
      this.checkedAt.set(webhookId, now);
      const reason = `failing continuously since ${new Date(since).toISOString()}${error ? ` (last: ${error})` : ''}`;
      this.run(webhookId, async () => {
        const disabled = await this.disabler.disable(webhookId, this.disableAfterMs, reason);
        if (disabled) {
          // every dispatcher's directory reloads it (announced): its waiting attempts are parked from then on
          this.log.warn({ webhookId, failingSince: disabled.failingSince, reason }, 'webhook disabled after failing continuously');
        } else {
          // a success elsewhere cleared it (or someone switched it off): learn the stored state again
          this.known.delete(webhookId);
        }
      });
    }
  }

  private run(webhookId: string, work: () => Promise<void>): void {
    this.busy.add(webhookId);
    work()
      .catch((err) => this.log.warn({ webhookId, reason: (err as Error).message }, 'webhook health not recorded'))
      .finally(() => this.busy.delete(webhookId));
  }
}

/** Disables in one transaction with its `webhook.disabled` outbox row, then tells every dispatcher. */
export class WebhookDisabler implements Disabler {
  constructor(
    private readonly webhooks: Pick<WebhooksRepository, 'disableIfFailing'>,
    private readonly publisher: Pick<EventPublisher, 'transact'>,
    private readonly changes: Pick<WebhookChanges, 'announce'>,
  ) {}

  async disable(webhookId: string, failingForMs: number, reason: string): Promise<DisabledWebhook | null> {
    const disabled = await this.publisher.transact(async (tx, publish) => {
      const d = await this.webhooks.disableIfFailing(webhookId, failingForMs, reason, tx);
      if (d) {
        publish({
          event: 'webhook.disabled',
          organizationId: d.organizationId,
          sessionId: null,
          payload: { webhookId: d.id, url: d.url, reason, failingSince: d.failingSince.getTime(), disabledAt: d.disabledAt.getTime() },
        });
      }
      return d;
    });
    if (disabled) await this.changes.announce(webhookId).catch(() => undefined);
    return disabled;
  }
}
