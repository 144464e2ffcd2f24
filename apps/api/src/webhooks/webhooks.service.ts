import { Injectable } from '@nestjs/common';
import { DomainError, RETRY_POLICY_DEFAULTS, RetryPolicy, WebhookView } from '@app/contracts';
import { SecretBox } from '@app/crypto';
import { DeliveriesRepository, newId, SessionsRepository, Webhook, WebhooksRepository } from '@app/database';
import { WebhookChanges } from '@app/events';
import { Page, PageQueryDto, pageRequest, toPage } from '../common/pagination';
import { OrganizationQuotas } from '../limits/organization-quotas';
import { CreateWebhookDto, RetryPolicyDto, UpdateWebhookDto } from './dto/webhook.dto';
import { WebhookTargetPolicy } from './webhook-target.policy';
import { toWebhookView } from './webhook.view';

const notFound = () => new DomainError('not_found', 'webhook not found');

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
  ) {}

  async create(organizationId: string, body: CreateWebhookDto): Promise<WebhookView> {
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
      (tx) => this.webhooks.save(row, tx),
    );
    await this.announceChange(webhook.id);
    return toWebhookView(webhook);
  }

  async get(organizationId: string, id: string): Promise<WebhookView> {
    return toWebhookView(await this.find(organizationId, id));
  }

  async list(organizationId: string, query: PageQueryDto): Promise<Page<WebhookView>> {
    return toPage(await this.webhooks.page(organizationId, pageRequest(query)), toWebhookView);
  }

  /** Everything is checked before anything is written: a failed PATCH changes nothing. */
  async update(organizationId: string, id: string, body: UpdateWebhookDto): Promise<WebhookView> {
    const webhook = await this.find(organizationId, id);
    if (body.url !== undefined) await this.targets.assertAllowed(body.url);
    if (body.sessionId !== undefined) await this.assertOwnSession(organizationId, body.sessionId);
    if (body.url !== undefined) webhook.url = body.url;
    if (body.events !== undefined) webhook.events = body.events;
    if (body.sessionId !== undefined) webhook.sessionId = body.sessionId;
    const reenabled = body.active === true && !webhook.active;
    if (body.active !== undefined) webhook.active = body.active;
    if (reenabled) {
      // a fresh start: the breaker's record of failure goes with the disabled state
      webhook.disabledAt = null;
      webhook.disabledReason = null;
      webhook.failingSince = null;
    }
    if (body.rateLimitPerSecond !== undefined) webhook.rateLimitPerSecond = body.rateLimitPerSecond;
    if (body.customHeaders !== undefined) webhook.customHeaders = body.customHeaders;
    if (body.retryPolicy !== undefined) webhook.retryPolicy = completePolicy(webhook.retryPolicy, body.retryPolicy);
    if (body.secret !== undefined) webhook.secretEncrypted = body.secret === null ? null : this.box.encrypt(body.secret);
    webhook.updatedAt = new Date();
    const saved = await this.webhooks.save(webhook);
    // every delivery parked while it was switched off (or handed back by its breaker) is due now, before the
    // dispatchers hear of the change: they then enqueue the due rows' jobs at once (the reconciler any they miss)
    if (reenabled) await this.deliveries.resumeParked(id);
    await this.announceChange(id);
    return toWebhookView(saved);
  }

  async remove(organizationId: string, id: string): Promise<void> {
    if (!(await this.webhooks.deleteInOrganization(organizationId, id))) throw notFound();
    await this.announceChange(id);
  }

  /** Another organization's webhook is reported exactly like a missing one. */
  async find(organizationId: string, id: string): Promise<Webhook> {
    const webhook = await this.webhooks.findInOrganization(organizationId, id);
    if (!webhook) throw notFound();
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

/** A partial retryPolicy is completed from `base` (the defaults on create, the stored policy on update). */
export function completePolicy(base: RetryPolicy, given: RetryPolicyDto | undefined): RetryPolicy {
  return {
    policy: given?.policy ?? base.policy,
    delaySeconds: given?.delaySeconds ?? base.delaySeconds,
    attempts: given?.attempts ?? base.attempts,
  };
}
