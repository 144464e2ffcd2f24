import { Injectable } from '@nestjs/common';
import { DomainError, RETRY_POLICY_DEFAULTS, RetryPolicy } from '@app/contracts';
import { Db, DeliveriesRepository, DestinationFamily, SessionsRepository, Webhook, WebhooksRepository } from '@app/database';
import { WebhookChanges } from '@app/events';
import { changedFields, type AuditContext } from '../audit/audit-context';
import { AuditTrail } from '../audit/audit-trail';
import { reachesSession, type Principal } from '../common/principal';
import { Page, PageQueryDto, pageRequest, toPage } from '../common/pagination';
import { OrganizationQuotas } from '../limits/organization-quotas';
import { DestinationTargetPolicy } from './destination-target.policy';

/** Who acts on a destination: its organization, and the sessions a scoped key is limited to. */
export type DestinationCaller = Pick<Principal, 'organizationId' | 'sessionIds'>;

/** What a PATCH may change on every kind of destination (a webhook or an event sink). */
export interface DestinationSettings {
  events?: string[];
  sessionId?: string | null;
  active?: boolean;
  rateLimitPerSecond?: number | null;
  retryPolicy?: Partial<RetryPolicy>;
}

/** A destination of each family as errors name it. */
export const DESTINATION_NOUN: Record<DestinationFamily, string> = { webhook: 'webhook', sink: 'event sink', chatwoot: 'Chatwoot integration' };
const notFound = (family: DestinationFamily) => new DomainError('not_found', `${DESTINATION_NOUN[family]} not found`);

/** How one family's changes are audited: `webhook` → `webhook.create`, `webhook.update`, `webhook.delete`. */
export interface DestinationNames {
  family: DestinationFamily;
  action: string;
  /** the audit entry's target type */
  targetType: string;
}

/** The row fields of a new destination that every kind shares, from its create body. */
export type NewDestination = Pick<Webhook, 'id' | 'organizationId' | 'kind' | 'url' | 'target' | 'customHeaders' | 'secretEncrypted'>;

/**
 * The life of a destination row (webhooks, event sinks: one table, CONTRACT 4 and 15): who may see it, the checks of
 * its target and session, the quota on create, the audit entry in the transaction of the change, the resume of its
 * parked deliveries when it is switched back on, and the dispatchers told of every change. Each kind's service adds
 * only what differs (its URL rules, its broker-side fields, its view).
 */
@Injectable()
export class Destinations {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly sessions: SessionsRepository,
    private readonly changes: WebhookChanges,
    private readonly targets: DestinationTargetPolicy,
    private readonly quotas: OrganizationQuotas,
    private readonly deliveries: DeliveriesRepository,
    private readonly audit: AuditTrail,
    private readonly db: Db,
  ) {}

  /** A URL the guard refuses, or a session of another organization, is 422; checked before anything is written. */
  async assertReachable(organizationId: string, url: string | undefined, sessionId: string | null | undefined): Promise<void> {
    if (url !== undefined) await this.targets.assertAllowed(url);
    if (sessionId === undefined || sessionId === null) return;
    if (!(await this.sessions.existsInOrganization(organizationId, sessionId))) {
      throw new DomainError('validation_error', 'request is invalid', {
        fields: { sessionId: ['sessionId must reference a session of your organization'] },
      });
    }
  }

  /** Inserts a destination within the organization's webhook quota (every kind counts against it), with its audit entry. */
  async create(caller: DestinationCaller, ctx: AuditContext, names: DestinationNames, fields: NewDestination, body: DestinationSettings): Promise<Webhook> {
    const organizationId = caller.organizationId;
    const now = new Date();
    const row: Webhook = {
      ...fields,
      events: body.events ?? ['*'],
      sessionId: body.sessionId ?? null,
      active: body.active ?? true,
      retryPolicy: completePolicy(RETRY_POLICY_DEFAULTS, body.retryPolicy),
      rateLimitPerSecond: body.rateLimitPerSecond ?? null,
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
    };
    const saved = await this.quotas.admit(
      organizationId,
      'webhooks',
      (tx) => this.webhooks.countInOrganization(organizationId, tx),
      async (tx) => {
        const inserted = await this.webhooks.save(row, tx);
        await this.audit.record(tx, organizationId, ctx, { action: `${names.action}.create`, target: { type: names.targetType, id: row.id }, changes: changedFields(body) });
        return inserted;
      },
    );
    await this.announce(saved.id);
    return saved;
  }

  /** Another organization's destination, one of another family, or one of a session outside a scoped key's sessions is reported exactly like a missing one. */
  async find(caller: DestinationCaller, family: DestinationFamily, id: string): Promise<Webhook> {
    const found = await this.webhooks.findInOrganization(caller.organizationId, id, family);
    if (!found || !reachesSession(caller as Principal, found.sessionId)) throw notFound(family);
    return found;
  }

  /** A session-scoped key sees the destinations of its sessions only. */
  async page<V>(caller: DestinationCaller, family: DestinationFamily, query: PageQueryDto, view: (row: Webhook) => V): Promise<Page<V>> {
    const scope = caller.sessionIds ? [...caller.sessionIds] : null;
    return toPage(await this.webhooks.page(caller.organizationId, pageRequest(query), family, scope), view);
  }

  /**
   * Writes a loaded row changed by a PATCH: the shared settings applied here, the kind's own fields by the caller before.
   * The change and its audit entry are one statement: they commit together, or neither does.
   */
  async update(caller: DestinationCaller, ctx: AuditContext, names: DestinationNames, row: Webhook, body: DestinationSettings): Promise<Webhook> {
    const { reenabled } = applyDestinationSettings(row, body);
    const entry = this.audit.pending(caller.organizationId, ctx, { action: `${names.action}.update`, target: { type: names.targetType, id: row.id }, changes: changedFields(body) });
    const saved = await this.webhooks.updateSettings(row, entry);
    if (!saved) throw notFound(names.family);
    // every delivery parked while it was switched off (or handed back by its breaker) is due now, before the
    // dispatchers hear of the change: they then enqueue the due rows' jobs at once (the reconciler any they miss)
    if (reenabled) await this.deliveries.resumeParked(row.id);
    await this.announce(row.id);
    return saved;
  }

  async remove(caller: DestinationCaller, ctx: AuditContext, names: DestinationNames, id: string): Promise<void> {
    await this.find(caller, names.family, id);
    await this.db.transaction(async (tx) => {
      if (!(await this.webhooks.deleteInOrganization(caller.organizationId, id, names.family, tx))) throw notFound(names.family);
      await this.audit.record(tx, caller.organizationId, ctx, { action: `${names.action}.delete`, target: { type: names.targetType, id } });
    });
    await this.announce(id);
  }

  /** Dispatchers cache destinations; tell them this one changed (best effort: they also refresh on a timer). */
  async announce(id: string): Promise<void> {
    await this.changes.announce(id).catch(() => undefined);
  }
}

/** A session-scoped key's destinations must name one of its sessions (403 otherwise: it cannot grant itself more). */
export function assertInScope(caller: DestinationCaller, sessionId: string | null): void {
  if (caller.sessionIds && (sessionId === null || !caller.sessionIds.has(sessionId))) {
    throw new DomainError('forbidden', 'a session-scoped API key manages only webhooks and event sinks of its own sessions', { reason: 'session_scope' });
  }
}

/**
 * Applies the settings every destination shares to its loaded row; `reenabled` when it was switched back on, which
 * also clears the breaker's record of failure (a fresh start).
 */
function applyDestinationSettings(row: Webhook, body: DestinationSettings): { reenabled: boolean } {
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
function completePolicy(base: RetryPolicy, given: Partial<RetryPolicy> | undefined): RetryPolicy {
  return {
    policy: given?.policy ?? base.policy,
    delaySeconds: given?.delaySeconds ?? base.delaySeconds,
    attempts: given?.attempts ?? base.attempts,
  };
}
