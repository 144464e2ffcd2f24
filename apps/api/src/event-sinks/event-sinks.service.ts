import { Injectable } from '@nestjs/common';
import { DomainError, EventSinkKind, EventSinkView, SINK_URL_SCHEMES, SinkTarget } from '@app/contracts';
import { SecretBox } from '@app/crypto';
import { newId } from '@app/database';
import type { AuditContext } from '../audit/audit-context';
import { Page, PageQueryDto } from '../common/pagination';
import { assertInScope, type DestinationCaller, type DestinationNames, Destinations } from '../destinations/destinations';
import { CreateEventSinkDto, UpdateEventSinkDto } from './dto/event-sink.dto';
import { toEventSinkView } from './event-sink.view';

const SINKS: DestinationNames = { family: 'sink', action: 'event-sink', targetType: 'eventSink' };
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
    private readonly destinations: Destinations,
    private readonly box: SecretBox,
  ) {}

  async create(caller: DestinationCaller, ctx: AuditContext, body: CreateEventSinkDto): Promise<EventSinkView> {
    assertInScope(caller, body.sessionId ?? null);
    const target = this.targetOf(body.kind, body, null);
    const url = this.splitUrl(body.kind, body.url, false);
    await this.destinations.assertReachable(caller.organizationId, body.url, body.sessionId);
    const fields = {
      id: newId('snk'),
      organizationId: caller.organizationId,
      kind: body.kind,
      url: url.stored,
      target,
      customHeaders: {},
      secretEncrypted: url.password ? this.box.encrypt(url.password) : null,
    };
    return toEventSinkView(await this.destinations.create(caller, ctx, SINKS, fields, body));
  }

  async get(caller: DestinationCaller, id: string): Promise<EventSinkView> {
    return toEventSinkView(await this.destinations.find(caller, 'sink', id));
  }

  list(caller: DestinationCaller, query: PageQueryDto): Promise<Page<EventSinkView>> {
    return this.destinations.page(caller, 'sink', query, toEventSinkView);
  }

  /** Everything is checked before anything is written: a failed PATCH changes nothing. */
  async update(caller: DestinationCaller, ctx: AuditContext, id: string, body: UpdateEventSinkDto): Promise<EventSinkView> {
    const sink = await this.destinations.find(caller, 'sink', id);
    if (body.sessionId !== undefined) assertInScope(caller, body.sessionId);
    const kind = sink.kind as EventSinkKind;
    const target = this.targetOf(kind, body, sink.target);
    const url = body.url !== undefined ? this.splitUrl(kind, body.url, true) : null;
    await this.destinations.assertReachable(caller.organizationId, body.url, body.sessionId);
    if (url) {
      sink.url = url.stored;
      if (url.password !== MASK) sink.secretEncrypted = url.password ? this.box.encrypt(url.password) : null;
    }
    sink.target = target;
    return toEventSinkView(await this.destinations.update(caller, ctx, SINKS, sink, body));
  }

  remove(caller: DestinationCaller, ctx: AuditContext, id: string): Promise<void> {
    return this.destinations.remove(caller, ctx, SINKS, id);
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
}
