import { Injectable } from '@nestjs/common';
import { DomainError, RETRY_POLICY_DEFAULTS, RetryPolicy, WebhookView } from '@app/contracts';
import { SecretBox } from '@app/crypto';
import { DeliveriesRepository, newId, SessionsRepository, Webhook, WebhooksRepository, Db } from '@app/database';
import { WebhookChanges } from '@app/events';
import { changedFields, type AuditContext } from '../audit/audit-context';
import { AuditTrail } from '../audit/audit-trail';
import { reachesSession, type Principal } from '../auth/principal';
import { Page, PageQueryDto, pageRequest, toPage } from '../common/pagination';
import { OrganizationQuotas } from '../limits/organization-quotas';
import { CreateWebhookDto, RetryPolicyDto, UpdateWebhookDto } from './dto/webhook.dto';
import { WebhookTargetPolicy } from './webhook-target.policy';
import { toWebhookView } from './webhook.view';

const notFound = () => new DomainError('not_found', 'webhook not found');

/** Who acts on webhooks: its organization, and the sessions a scoped key is limited to. */
export type WebhookCaller = Pick<Principal, 'organizationId' | 'sessionIds'>;

/** The field names a body sets, for the audit entry (never their values). */

@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly sessions: SessionsRepository,
    private readonly changes: WebhookChanges,
    private readonly box: SecretBox,
    private readonly targets: WebhookTargetPolicy,
    private readonly quotas: OrganizationQuotas,
    private readonly deliveries: DeliveriesRepository,
    private readonly audit: AuditTrail,
    private readonly db: Db,
  ) {}

  async create(caller: WebhookCaller, ctx: AuditContext, body: CreateWebhookDto): Promise<WebhookView> {
    const organizationId = caller.organizationId;
    assertInScope(caller, body.sessionId ?? null);
    await this.targets.assertAllowed(body.url);
    await this.assertOwnSession(organizationId, body.sessionId ?? null);
    const now = new Date();
    const row: Webhook = {
      id: newId('whk'),
      organizationId,
      url: body.url,
      events: body.events ?? ['*'],
      sessionId: body.sessionId ?? null,
      active: body.active ?? true,
      customHeaders: body.customHeaders ?? {},
      retryPolicy: completePolicy(RETRY_POLICY_DEFAULTS, body.retryPolicy),
      rateLimitPerSecond: body.rateLimitPerSecond ?? null,
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
      secretEncrypted: body.secret ? this.box.encrypt(body.secret) : null,
      kind: 'http',
      target: {},
      createdAt: now,
      updatedAt: now,
    };
    const webhook = await this.quotas.admit(
      organizationId,
      'webhooks',
      (tx) => this.webhooks.countInOrganization(organizationId, tx),
      async (tx) => {
        const saved = await this.webhooks.save(row, tx);
        await this.audit.record(tx, organizationId, ctx, { action: 'webhook.create', target: { type: 'webhook', id: row.id }, changes: changedFields(body) });
        return saved;
      },
    );
    await this.announceChange(webhook.id);
    return toWebhookView(webhook);
  }

  async get(caller: WebhookCaller, id: string): Promise<WebhookView> {
    return toWebhookView(await this.find(caller, id));
  }

  /** A session-scoped key sees the webhooks of its sessions only. */
  async list(caller: WebhookCaller, query: PageQueryDto): Promise<Page<WebhookView>> {
    const scope = caller.sessionIds ? [...caller.sessionIds] : null;
    return toPage(await this.webhooks.page(caller.organizationId, pageRequest(query), 'webhook', scope), toWebhookView);
  }

  /** Everything is checked before anything is written: a failed PATCH changes nothing. */
  async update(caller: WebhookCaller, ctx: AuditContext, id: string, body: UpdateWebhookDto): Promise<WebhookView> {
    const organizationId = caller.organizationId;
    const webhook = await this.find(caller, id);
    if (body.sessionId !== undefined) assertInScope(caller, body.sessionId);
    if (body.url !== undefined) await this.targets.assertAllowed(body.url);
    if (body.sessionId !== undefined) await this.assertOwnSession(organizationId, body.sessionId);
    if (body.url !== undefined) webhook.url = body.url;
    const { reenabled } = applyDestinationSettings(webhook, body);
    if (body.customHeaders !== undefined) webhook.customHeaders = body.customHeaders;
    if (body.secret !== undefined) webhook.secretEncrypted = body.secret === null ? null : this.box.encrypt(body.secret);
    // the change and its audit entry are one statement: they commit together, or neither does
    const saved = await this.webhooks.updateSettings(webhook, this.audit.pending(organizationId, ctx, { action: 'webhook.update', target: { type: 'webhook', id }, changes: changedFields(body) }));
    if (!saved) throw notFound();
    // every delivery parked while it was switched off (or handed back by its breaker) is due now, before the
    // dispatchers hear of the change: they then enqueue the due rows' jobs at once (the reconciler any they miss)
    if (reenabled) await this.deliveries.resumeParked(id);
    await this.announceChange(id);
    return toWebhookView(saved);
  }

  async remove(caller: WebhookCaller, ctx: AuditContext, id: string): Promise<void> {
    await this.find(caller, id);
    await this.db.transaction(async (tx) => {
      if (!(await this.webhooks.deleteInOrganization(caller.organizationId, id, 'webhook', tx))) throw notFound();
      await this.audit.record(tx, caller.organizationId, ctx, { action: 'webhook.delete', target: { type: 'webhook', id } });
    });
    await this.announceChange(id);
  }

  /** Another organization's webhook, or one of a session outside a scoped key's sessions, is reported exactly like a missing one. */
  async find(caller: WebhookCaller, id: string): Promise<Webhook> {
    const webhook = await this.webhooks.findInOrganization(caller.organizationId, id);
    if (!webhook || !reachesSession(caller as Principal, webhook.sessionId)) throw notFound();
    return webhook;
  }

  private async assertOwnSession(organizationId: string, sessionId: string | null): Promise<void> {
    if (sessionId === null) return;
    const exists = await this.sessions.existsInOrganization(organizationId, sessionId);
    if (!exists) {
      throw new DomainError('validation_error', 'request is invalid', {
        fields: { sessionId: ['sessionId must reference a session of your organization'] },
      });
    }
  }

  /** Dispatchers cache webhooks; tell them this one changed (best effort: they also refresh on a timer). */
  private async announceChange(id: string): Promise<void> {
    await this.changes.announce(id).catch(() => undefined);
  }
}

/** A session-scoped key's webhooks must name one of its sessions (403 otherwise: it cannot grant itself more). */
export function assertInScope(caller: WebhookCaller, sessionId: string | null): void {
  if (caller.sessionIds && (sessionId === null || !caller.sessionIds.has(sessionId))) {
    throw new DomainError('forbidden', 'a session-scoped API key manages only webhooks and event sinks of its own sessions', { reason: 'session_scope' });
  }
}

/** What a PATCH may change on every kind of destination (a webhook or an event sink). */
export interface DestinationSettings {
  events?: string[];
  sessionId?: string | null;
  active?: boolean;
  rateLimitPerSecond?: number | null;
  retryPolicy?: Partial<RetryPolicy>;
}

/**
 * Applies the settings every destination shares to its loaded row; `reenabled` when it was switched back on, which
 * also clears the breaker's record of failure (a fresh start). The caller resumes its parked deliveries after saving.
 */
export function applyDestinationSettings(row: Webhook, body: DestinationSettings): { reenabled: boolean } {
  if (body.events !== undefined) row.events = body.events;
  if (body.sessionId !== undefined) row.sessionId = body.sessionId;
  const reenabled = body.active === true && !row.active;
  if (body.active !== undefined) row.active = body.active;
  if (reenabled) {
    row.disabledAt = null;
    row.disabledReason = null;
    row.failingSince = null;
  }
  if (body.rateLimitPerSecond !== undefined) row.rateLimitPerSecond = body.rateLimitPerSecond;
  if (body.retryPolicy !== undefined) row.retryPolicy = completePolicy(row.retryPolicy, body.retryPolicy);
  row.updatedAt = new Date();
  return { reenabled };
}

/** A partial retryPolicy is completed from `base` (the defaults on create, the stored policy on update). */
export function completePolicy(base: RetryPolicy, given: RetryPolicyDto | undefined): RetryPolicy {
  return {
    policy: given?.policy ?? base.policy,
    delaySeconds: given?.delaySeconds ?? base.delaySeconds,
    attempts: given?.attempts ?? base.attempts,
  };
}
