import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { WebhookView } from '@app/contracts';
import { CurrentPrincipal, RequirePermissions } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { Page, PageQueryDto } from '../common/pagination';
import { CreateWebhookDto, UpdateWebhookDto, WebhookPage, WebhookResponse } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

@ApiTags('webhooks')
@ApiBearerAuth()
@RequirePermissions('webhooks:manage')
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @ApiCreatedResponse({ type: WebhookResponse })
  create(@CurrentPrincipal() p: Principal, @Body() body: CreateWebhookDto): Promise<WebhookView> {
    return this.webhooks.create(p.organizationId, body);
  }

  @Get()
  @ApiOkResponse({ type: WebhookPage })
  list(@CurrentPrincipal() p: Principal, @Query() query: PageQueryDto): Promise<Page<WebhookView>> {
    return this.webhooks.list(p.organizationId, query);
  }

  @Get(':id')
  @ApiOkResponse({ type: WebhookResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<WebhookView> {
    return this.webhooks.get(p.organizationId, id);
  }

  @Patch(':id')
  @ApiOkResponse({ type: WebhookResponse })
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: UpdateWebhookDto): Promise<WebhookView> {
    return this.webhooks.update(p.organizationId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiNoContentResponse()
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<void> {
    return this.webhooks.remove(p.organizationId, id);
  }
}
