import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { DeliveryDetailView, DeliveryView, EventSinkView } from '@app/contracts';
import { Audit, Audited, AuditedAhead, type AuditContext } from '../audit/audit-context';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { Page, PageQueryDto } from '../common/pagination';
import { DeliveriesService } from '../deliveries/deliveries.service';
import { DeliveryDetailResponse, DeliveryPage, DeliveryResponse, ListDeliveriesQueryDto, WebhookTestResponse } from '../deliveries/dto/delivery.dto';
import { CreateEventSinkDto, EventSinkPage, EventSinkResponse, UpdateEventSinkDto } from './dto/event-sink.dto';
import { EventSinksService } from './event-sinks.service';

/** CONTRACT 15: RabbitMQ and NATS JetStream destinations, managed and logged as webhooks are. */
@ApiTags('event-sinks')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited')
@RequirePermissions('webhooks:manage')
@Controller('event-sinks')
export class EventSinksController {
  constructor(
    private readonly sinks: EventSinksService,
    private readonly deliveries: DeliveriesService,
  ) {}

  @Post()
  @Audited('event-sink.create', 'eventSink')
  @ApiEndpoint(
    'Create an event sink',
    'Events of the organization (optionally of one session) are published to a RabbitMQ exchange (`kind: amqp`, publisher confirms) or a NATS JetStream subject (`kind: nats`, publish acks), retried per `retryPolicy` as webhooks are (docs/event-sinks.md). The body is the event envelope; the message id is the event id. A private broker address is 422 unless the server allows private targets. Sinks count against the webhook quota.',
    'validation_error',
  )
  @ApiBody({
    type: CreateEventSinkDto,
    examples: {
      rabbitmq: { value: { kind: 'amqp', url: 'amqp://gateway:s3cret@rabbitmq.example.com:5672/whatsapp', exchange: 'whatsapp.events', routingKey: '{event}' } },
      jetstream: { value: { kind: 'nats', url: 'nats://gateway:s3cret@nats.example.com:4222', subject: 'wa.{organizationId}.{sessionId}.{event}', events: ['message.received'] } },
    },
  })
  @ApiCreatedResponse({ type: EventSinkResponse })
  create(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Body() body: CreateEventSinkDto): Promise<EventSinkView> {
    return this.sinks.create(p, ctx, body);
  }

  @Get()
  @ApiEndpoint('List event sinks', 'The organization\'s sinks, paged by `cursor`; their URLs\' passwords masked.', 'validation_error')
  @ApiOkResponse({ type: EventSinkPage })
  list(@CurrentPrincipal() p: Principal, @Query() query: PageQueryDto): Promise<Page<EventSinkView>> {
    return this.sinks.list(p, query);
  }

  @Get(':id')
  @ApiEndpoint('Get an event sink', 'Its broker URL (password masked), target, filters and retry policy.', 'not_found')
  @ApiOkResponse({ type: EventSinkResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<EventSinkView> {
    return this.sinks.get(p, id);
  }

  @Patch(':id')
  @Audited('event-sink.update', 'eventSink')
  @ApiEndpoint(
    'Update an event sink',
    'An omitted field keeps its value; a URL whose password is `***` keeps the stored password; `sessionId: null` removes the session scope. The kind cannot change. Everything is validated before anything is written.',
    'not_found',
    'validation_error',
  )
  @ApiBody({ type: UpdateEventSinkDto, examples: { pause: { value: { active: false } } } })
  @ApiOkResponse({ type: EventSinkResponse })
  update(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string, @Body() body: UpdateEventSinkDto): Promise<EventSinkView> {
    return this.sinks.update(p, ctx, id, body);
  }

  @Delete(':id')
  @Audited('event-sink.delete', 'eventSink')
  @HttpCode(204)
  @ApiEndpoint('Delete an event sink', 'No further publishes are made to it; its delivery log goes with it.', 'not_found')
  @ApiNoContentResponse()
  remove(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string): Promise<void> {
    return this.sinks.remove(p, ctx, id);
  }

  @Get(':id/deliveries')
  @ApiEndpoint('List an event sink\'s deliveries', 'The delivery log, newest first, filterable by status: a delivery is `delivered` once the broker confirmed it.', 'not_found', 'validation_error')
  @ApiOkResponse({ type: DeliveryPage })
  listDeliveries(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: ListDeliveriesQueryDto): Promise<Page<DeliveryView>> {
    return this.deliveries.list(p, id, query, 'sink');
  }

  @Get(':id/deliveries/:deliveryId')
  @ApiEndpoint('Get an event sink delivery', 'One delivery with every attempt: the broker\'s error or acknowledgement, duration and time of each.', 'not_found')
  @ApiOkResponse({ type: DeliveryDetailResponse })
  getDelivery(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<DeliveryDetailView> {
    return this.deliveries.get(p, id, deliveryId, 'sink');
  }

  @Post(':id/deliveries/:deliveryId\\:replay')
  @AuditedAhead('event-sink.replay', 'delivery', { targetParam: 'deliveryId' })
  @HttpCode(202)
  @ApiEndpoint(
    'Replay an event sink delivery',
    'Publishes a finished delivery again with the same message id (JetStream\'s duplicate window drops it if still inside; RabbitMQ consumers deduplicate on it) and a fresh retry budget. 409 while it is still in progress.',
    'not_found',
    'conflict',
  )
  @ApiAcceptedResponse({ type: DeliveryResponse })
  replay(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<DeliveryView> {
    return this.deliveries.replay(p, id, deliveryId, 'sink');
  }

  @Post(':id\\:test')
  @AuditedAhead('event-sink.test', 'eventSink')
  @HttpCode(202)
  @ApiEndpoint('Test-publish to an event sink', 'Publishes a `webhook.test` event (its `payload.webhookId` is the sink\'s id) to this sink only. 409 when the sink is inactive.', 'not_found', 'conflict')
  @ApiAcceptedResponse({ type: WebhookTestResponse })
  test(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<{ eventId: string; deliveryId?: string }> {
    return this.deliveries.sendTest(p, id, 'sink');
  }
}
