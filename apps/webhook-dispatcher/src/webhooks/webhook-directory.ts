import type { Logger } from 'pino';
import { DestinationKind, EventEnvelope, eventSelected, RETRY_POLICY_DEFAULTS, SinkTarget, WebhookView } from '@app/contracts';
import type { SecretBox } from '@app/crypto';
import type { WebhookRoutingRow, WebhooksRepository } from '@app/database';
import type { WebhookChanges } from '@app/events';

/**
 * What the dispatcher needs of a destination (a webhook or an event sink); the secret is decrypted here and lives only
 * in memory: a webhook's HMAC key in `secret`, a sink's password put back into its `url`.
 */
export interface WebhookTarget extends Omit<WebhookView, 'createdAt' | 'updatedAt' | 'disabledReason'> {
  kind: DestinationKind;
  /** a sink's exchange and routing key, or subject */
  target: SinkTarget;
  secret: string | null;
  /** epoch ms of the first failure after the last success, as stored (any replica's) */
  failingSince: number | null;
}

/**
 * In-memory view of every webhook, so matching an event costs no query. Kept fresh by the API's
 * change announcements (WebhookChanges) and a periodic full reload as a safety net for a missed one.
 */
export class WebhookDirectory {
  private byId = new Map<string, WebhookTarget>();
  private byOrg = new Map<string, WebhookTarget[]>();
  private timer: NodeJS.Timeout | null = null;
  private inflight = new Set<Promise<unknown>>();
  private readonly reenabled: ((id: string) => void)[] = [];

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly changes: WebhookChanges,
    private readonly secrets: SecretBox,
    private readonly log: Logger,
    private readonly refreshMs: number,
  ) {}

  async start(): Promise<void> {
    await this.changes.subscribe({
      changed: (id) => this.track(this.reloadOne(id)),
      missed: () => this.track(this.reloadAll()),
    });
    await this.reloadAll();
    // the periodic reload is a safety net for a missed announcement, not a change to wait for: fan-out does not wait
    // for it (under a loaded PostgreSQL a full reload held the stream reader)
    this.timer = setInterval(() => void this.reloadAll().catch((err) => this.log.error({ err }, 'webhook cache reload failed')), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Resolves once the reloads triggered so far have landed, so fan-out matches against them. */
  async settled(): Promise<void> {
    if (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  /**
   * The webhooks an event goes to: selecting its type and scoped to its session if scoped. Switched-off ones
   * (`active: false`, by a user or by the dispatchers) are included: their deliveries are recorded parked and sent
   * once the webhook is re-enabled. A test event goes to its (active) webhook only.
   */
  match(envelope: EventEnvelope): WebhookTarget[] {
    const candidates = this.byOrg.get(envelope.organizationId) ?? [];
    if (envelope.event === 'webhook.test') {
      // a test event names its webhook and goes to it alone, whatever its events list says
      const target = (envelope.payload as { webhookId?: unknown })?.webhookId;
      return candidates.filter((w) => w.id === target && w.active);
    }
    return candidates.filter((w) => eventSelected(w.events, envelope.event) && (w.sessionId === null || w.sessionId === envelope.sessionId));
  }

  /** Called with the id of a webhook that was switched off and is active again (its breaker starts afresh, its parked deliveries go). */
  onReenabled(listener: (id: string) => void): void {
    this.reenabled.push(listener);
  }

  /** Is the webhook switched off (by a user, or by the dispatchers after failing continuously)? Its attempts are parked. */
  isDisabled(id: string): boolean {
    const w = this.byId.get(id);
    return !!w && !w.active;
  }

  /** The stored failing_since of a webhook as last loaded (null: not failing, or not known). */
  failingSince(id: string): number | null {
    return this.byId.get(id)?.failingSince ?? null;
  }

  /** A webhook by id, from memory or (when not seen yet) from PostgreSQL; null when it no longer exists. */
  async get(id: string): Promise<WebhookTarget | null> {
    return this.byId.get(id) ?? (await this.reloadOne(id));
  }

  private track(p: Promise<unknown>): void {
    const guarded = p.catch((err) => this.log.error({ err }, 'webhook cache reload failed'));
    this.inflight.add(guarded);
    void guarded.finally(() => this.inflight.delete(guarded));
  }

  private async reloadAll(): Promise<void> {
    const rows = await this.webhooks.allRouting();
    const byId = new Map<string, WebhookTarget>();
    for (const row of rows) {
      const target = this.toTarget(row);
      if (target) byId.set(target.id, target);
    }
    const before = this.byId;
    this.byId = byId;
    this.rebuildIndex();
    for (const target of byId.values()) this.noticeReenabled(before.get(target.id), target);
  }

  private noticeReenabled(before: WebhookTarget | undefined, after: WebhookTarget | null): void {
    if (before && !before.active && after && after.active) for (const listener of this.reenabled) listener(after.id);
  }

  private async reloadOne(id: string): Promise<WebhookTarget | null> {
    const row = await this.webhooks.routingById(id);
    const target = row ? this.toTarget(row) : null;
    this.noticeReenabled(this.byId.get(id), target);
    if (target) this.byId.set(id, target);
    else this.byId.delete(id);
    this.rebuildIndex();
    return target;
  }

  private rebuildIndex(): void {
    const byOrg = new Map<string, WebhookTarget[]>();
    for (const w of this.byId.values()) {
      const list = byOrg.get(w.organizationId);
      if (list) list.push(w);
      else byOrg.set(w.organizationId, [w]);
    }
    this.byOrg = byOrg;
  }

  private toTarget(row: WebhookRoutingRow): WebhookTarget | null {
    let secret: string | null = null;
    if (row.secretEncrypted) {
      try {
        secret = this.secrets.decrypt(row.secretEncrypted);
      } catch (err) {
        // unsigned deliveries would mislead the receiver; skip the webhook until its secret is readable
        this.log.error({ webhookId: row.id, reason: (err as Error).message }, 'webhook secret cannot be decrypted; webhook skipped');
        return null;
      }
    }
    const credential = CREDENTIAL_OF[row.kind](row.url, secret);
    return {
      id: row.id,
      kind: row.kind,
      target: row.target,
      organizationId: row.organizationId,
      url: credential.url,
      events: row.events ?? [],
      sessionId: row.sessionId,
      active: row.active,
      customHeaders: row.customHeaders ?? {},
      retryPolicy: { ...RETRY_POLICY_DEFAULTS, ...(row.retryPolicy ?? {}) },
      rateLimitPerSecond: row.rateLimitPerSecond,
      failingSince: row.failingSince ? row.failingSince.getTime() : null,
      disabledAt: row.disabledAt ? row.disabledAt.getTime() : null,
      secret: credential.secret,
    };
  }
}

/** Where each kind's stored secret goes: a webhook signs with it, a sink logs in with it (its URL's password). */
const CREDENTIAL_OF: Record<DestinationKind, (url: string, secret: string | null) => { url: string; secret: string | null }> = {
  http: (url, secret) => ({ url, secret }),
  amqp: withPassword,
  nats: withPassword,
  // a Chatwoot integration's stored secret is its API access token; its url is Chatwoot's base URL
  chatwoot: (url, secret) => ({ url, secret }),
};

function withPassword(url: string, password: string | null): { url: string; secret: null } {
  if (password === null) return { url, secret: null };
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return { url: u.toString(), secret: null };
}
