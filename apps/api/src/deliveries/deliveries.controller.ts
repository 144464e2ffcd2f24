import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { DeliveryDetailView, DeliveryView } from '@app/contracts';
import { AuditedAhead } from '../audit/audit-context';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import type { Page } from '../common/pagination';
import { DeliveriesService } from './deliveries.service';
import { DeliveryDetailResponse, DeliveryPage, DeliveryResponse, ListDeliveriesQueryDto, WebhookTestResponse } from './dto/delivery.dto';

@ApiTags('webhooks')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited', 'not_found')
@RequirePermissions('webhooks:manage')
@Controller('webhooks')
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get(':id/deliveries')
  @ApiEndpoint('List a webhook\'s deliveries', 'The delivery log, newest first, filterable by status; each with its status and attempt count.', 'validation_error')
  @ApiOkResponse({ type: DeliveryPage })
  list(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: ListDeliveriesQueryDto): Promise<Page<DeliveryView>> {
    return this.deliveries.list(p, id, query);
  }

  @Get(':id/deliveries/:deliveryId')
  @ApiEndpoint('Get a delivery', 'One delivery with every attempt: status code, error, duration and the time of each.')
  @ApiOkResponse({ type: DeliveryDetailResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<DeliveryDetailView> {
    return this.deliveries.get(p, id, deliveryId);
  }

  @Post(':id/deliveries/:deliveryId\\:replay')
  @AuditedAhead('webhook.replay', 'delivery', { targetParam: 'deliveryId' })
  @HttpCode(202)
  @ApiEndpoint(
    'Replay a delivery',
    'Sends a finished delivery again: the same request id (receivers deduplicate on it), a fresh timestamp, signature and retry budget. 409 while it is still in progress.',
    'conflict',
  )
  @ApiAcceptedResponse({ type: DeliveryResponse })
  replay(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<DeliveryView> {
    return this.deliveries.replay(p, id, deliveryId);
  }

  @Post(':id\\:test')
  @AuditedAhead('webhook.test', 'webhook')
  @HttpCode(202)
  @ApiEndpoint('Test-fire a webhook', 'Sends a `webhook.test` event to this webhook only, to check the receiver and its signature verification. 409 when the webhook is inactive.', 'conflict')
  @ApiAcceptedResponse({ type: WebhookTestResponse })
  test(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<{ eventId: string; deliveryId?: string }> {
    return this.deliveries.sendTest(p, id);
  }
}
