import { Injectable } from '@nestjs/common';
import { DomainError, EventSinkKind, EventSinkView, RETRY_POLICY_DEFAULTS, SINK_URL_SCHEMES, SinkTarget } from '@app/contracts';
import { SecretBox } from '@app/crypto';
import { DeliveriesRepository, newId, SessionsRepository, Webhook, WebhooksRepository, Db } from '@app/database';
import { WebhookChanges } from '@app/events';
import { changedFields, type AuditContext } from '../audit/audit-context';
import { AuditTrail } from '../audit/audit-trail';
import { Page, PageQueryDto, pageRequest, toPage } from '../common/pagination';
import { OrganizationQuotas } from '../limits/organization-quotas';
import { applyDestinationSettings, assertInScope, completePolicy, type WebhookCaller } from '../webhooks/webhooks.service';
import { reachesSession, type Principal } from '../auth/principal';
import { WebhookTargetPolicy } from '../webhooks/webhook-target.policy';
import { CreateEventSinkDto, UpdateEventSinkDto } from './dto/event-sink.dto';
import { toEventSinkView } from './event-sink.view';

const notFound = () => new DomainError('not_found', 'event sink not found');
const invalid = (fields: Record<string, string[]>) => new DomainError('validation_error', 'request is invalid', { fields });
/** What a PATCH sends back when it copied the URL as shown: keep the stored password. */
const MASK = '***';

type TargetFields = Pick<UpdateEventSinkDto, 'exchange' | 'routingKey' | 'subject'>;

/**
 * Each kind's broker-side fields: which it takes, and the target they make over the stored one (null on create).
 * A field of the other kind is refused rather than ignored.
 */
const SINK_TARGETS: Record<EventSinkKind, { fields: (keyof TargetFields)[]; build(given: TargetFields, stored: SinkTarget | null): SinkTarget | string }> = {
  amqp: {
    fields: ['exchange', 'routingKey'],
    build: (given, stored) => {
      const exchange = given.exchange ?? stored?.exchange;
      if (exchange === undefined) return 'exchange is required for an amqp sink (`""` for the default exchange)';
      const routingKey = given.routingKey ?? stored?.routingKey;
      return routingKey === undefined ? { exchange } : { exchange, routingKey };
    },
  },
  nats: {
    fields: ['subject'],
    build: (given, stored) => {
      const subject = given.subject ?? stored?.subject;
      return subject === undefined ? {} : { subject };
    },
  },
};

/**
 * Event sinks (CONTRACT 15): RabbitMQ and NATS JetStream destinations, kept in the webhooks table beside webhooks so
 * the dispatchers deliver them through the same pipeline. The URL's password is split off and stored encrypted
 * (libs/crypto, as a webhook's secret); what is stored and shown as the URL never holds it.
 */
@Injectable()
export class EventSinksService {
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

  async create(caller: WebhookCaller, ctx: AuditContext, body: CreateEventSinkDto): Promise<EventSinkView> {
    const organizationId = caller.organizationId;
    assertInScope(caller, body.sessionId ?? null);
    const target = this.targetOf(body.kind, body, null);
    const url = this.splitUrl(body.kind, body.url, false);
    await this.targets.assertAllowed(body.url);
    await this.assertOwnSession(organizationId, body.sessionId ?? null);
    const now = new Date();
    const row: Webhook = {
      id: newId('snk'),
      organizationId,
      kind: body.kind,
      url: url.stored,
      target,
      events: body.events ?? ['*'],
      sessionId: body.sessionId ?? null,
      active: body.active ?? true,
      customHeaders: {},
      retryPolicy: completePolicy(RETRY_POLICY_DEFAULTS, body.retryPolicy),
      rateLimitPerSecond: body.rateLimitPerSecond ?? null,
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
      secretEncrypted: url.password ? this.box.encrypt(url.password) : null,
      createdAt: now,
      updatedAt: now,
    };
    // sinks count against the organization's webhook quota: both are destinations the dispatchers deliver to
    const sink = await this.quotas.admit(
      organizationId,
      'webhooks',
      (tx) => this.webhooks.countInOrganization(organizationId, tx),
      async (tx) => {
        const saved = await this.webhooks.save(row, tx);
        await this.audit.record(tx, organizationId, ctx, { action: 'event-sink.create', target: { type: 'eventSink', id: row.id }, changes: changedFields(body) });
        return saved;
      },
    );
    await this.announceChange(sink.id);
    return toEventSinkView(sink);
  }

  async get(caller: WebhookCaller, id: string): Promise<EventSinkView> {
    return toEventSinkView(await this.find(caller, id));
  }

  /** A session-scoped key sees the sinks of its sessions only. */
  async list(caller: WebhookCaller, query: PageQueryDto): Promise<Page<EventSinkView>> {
    const scope = caller.sessionIds ? [...caller.sessionIds] : null;
    return toPage(await this.webhooks.page(caller.organizationId, pageRequest(query), 'sink', scope), toEventSinkView);
  }

  /** Everything is checked before anything is written: a failed PATCH changes nothing. */
  async update(caller: WebhookCaller, ctx: AuditContext, id: string, body: UpdateEventSinkDto): Promise<EventSinkView> {
    const organizationId = caller.organizationId;
    const sink = await this.find(caller, id);
    if (body.sessionId !== undefined) assertInScope(caller, body.sessionId);
    const kind = sink.kind as EventSinkKind;
    const target = this.targetOf(kind, body, sink.target);
    const url = body.url !== undefined ? this.splitUrl(kind, body.url, true) : null;
    if (body.url !== undefined) await this.targets.assertAllowed(body.url);
    if (body.sessionId !== undefined) await this.assertOwnSession(organizationId, body.sessionId);
    if (url) {
      sink.url = url.stored;
      if (url.password !== MASK) sink.secretEncrypted = url.password ? this.box.encrypt(url.password) : null;
    }
    sink.target = target;
    const { reenabled } = applyDestinationSettings(sink, body);
    // the change and its audit entry are one statement: they commit together, or neither does
    const saved = await this.webhooks.updateSettings(sink, this.audit.pending(organizationId, ctx, { action: 'event-sink.update', target: { type: 'eventSink', id }, changes: changedFields(body) }));
    if (!saved) throw notFound();
    if (reenabled) await this.deliveries.resumeParked(id);
    await this.announceChange(id);
    return toEventSinkView(saved);
  }

  async remove(caller: WebhookCaller, ctx: AuditContext, id: string): Promise<void> {
    await this.find(caller, id);
    await this.db.transaction(async (tx) => {
      if (!(await this.webhooks.deleteInOrganization(caller.organizationId, id, 'sink', tx))) throw notFound();
      await this.audit.record(tx, caller.organizationId, ctx, { action: 'event-sink.delete', target: { type: 'eventSink', id } });
    });
    await this.announceChange(id);
  }

  /** Another organization's sink, or a webhook, is reported exactly like a missing one. */
  /** Another organization's sink, or one of a session outside a scoped key's sessions, is reported like a missing one. */
  async find(caller: WebhookCaller, id: string): Promise<Webhook> {
    const found = await this.webhooks.findInOrganization(caller.organizationId, id, 'sink');
    const sink = found && reachesSession(caller as Principal, found.sessionId) ? found : null;
    if (!sink) throw notFound();
    return sink;
  }

  private targetOf(kind: EventSinkKind, given: TargetFields, stored: SinkTarget | null): SinkTarget {
    const spec = SINK_TARGETS[kind];
    const foreign = (['exchange', 'routingKey', 'subject'] as const).filter((f) => given[f] !== undefined && !spec.fields.includes(f));
    if (foreign.length) throw invalid(Object.fromEntries(foreign.map((f) => [f, [`${f} does not apply to a ${kind} sink`]])));
    const target = spec.build(given, stored);
    if (typeof target === 'string') throw invalid({ [spec.fields[0]]: [target] });
    return target;
  }

  /** The URL as stored (no password) and its password, after its kind's scheme is checked. */
  private splitUrl(kind: EventSinkKind, raw: string, maskAllowed: boolean): { stored: string; password: string } {
    const u = new URL(raw);
    if (!SINK_URL_SCHEMES[kind].includes(u.protocol)) throw invalid({ url: [`url of a ${kind} sink must start with ${SINK_URL_SCHEMES[kind].map((s) => `${s}//`).join(' or ')}`] });
    const password = decodeURIComponent(u.password);
    if (password === MASK && !maskAllowed) throw invalid({ url: ['url password "***" is the masked form; give the real password'] });
    u.password = '';
    return { stored: u.toString(), password };
  }

  private async assertOwnSession(organizationId: string, sessionId: string | null): Promise<void> {
    if (sessionId === null) return;
    if (!(await this.sessions.existsInOrganization(organizationId, sessionId))) {
      throw invalid({ sessionId: ['sessionId must reference a session of your organization'] });
    }
  }

  private async announceChange(id: string): Promise<void> {
    await this.changes.announce(id).catch(() => undefined);
  }
}
