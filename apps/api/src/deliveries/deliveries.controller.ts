import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { DeliveryDetailView, DeliveryView } from '@app/contracts';
import { CurrentPrincipal, RequirePermissions } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import type { Page } from '../common/pagination';
import { DeliveriesService } from './deliveries.service';
import { DeliveryDetailResponse, DeliveryPage, DeliveryResponse, ListDeliveriesQueryDto, WebhookTestResponse } from './dto/delivery.dto';

@ApiTags('webhooks')
@ApiBearerAuth()
@RequirePermissions('webhooks:manage')
@Controller('webhooks')
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get(':id/deliveries')
  @ApiOperation({ summary: 'Delivery log of a webhook, newest first' })
  @ApiOkResponse({ type: DeliveryPage })
  list(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: ListDeliveriesQueryDto): Promise<Page<DeliveryView>> {
    return this.deliveries.list(p.organizationId, id, query);
  }

  @Get(':id/deliveries/:deliveryId')
  @ApiOperation({ summary: 'One delivery with every attempt' })
  @ApiOkResponse({ type: DeliveryDetailResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<DeliveryDetailView> {
    return this.deliveries.get(p.organizationId, id, deliveryId);
  }

  @Post(':id/deliveries/:deliveryId\\:replay')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a finished delivery again (same request id, fresh timestamp, signature and retry budget)' })
  @ApiAcceptedResponse({ type: DeliveryResponse })
  replay(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<DeliveryView> {
    return this.deliveries.replay(p.organizationId, id, deliveryId);
  }

  @Post(':id\\:test')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a webhook.test event to this webhook only' })
  @ApiAcceptedResponse({ type: WebhookTestResponse })
  test(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<{ eventId: string; deliveryId?: string }> {
    return this.deliveries.sendTest(p.organizationId, id);
  }
}
