import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { WebhookView } from '@app/contracts';
import { Audit, type AuditContext, Audited } from '../audit/audit-context';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { Page, PageQueryDto } from '../common/pagination';
import { CreateWebhookDto, UpdateWebhookDto, WebhookPage, WebhookResponse } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

@ApiTags('webhooks')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited')
@RequirePermissions('webhooks:manage')
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @Audited('webhook.create', 'webhook')
  @ApiEndpoint(
    'Create a webhook',
    'Events of the organization (optionally of one session) are POSTed to `url`, signed with `secret` (the seed\'s `X-Webhook-*` headers and Standard Webhooks\' `webhook-*`), retried per `retryPolicy`. `events` takes `*` or names of the catalog (docs/events.md); another name is 422. Over the organization\'s webhook quota: 403 `forbidden` with `details.quota`.',
    'validation_error',
  )
  @ApiBody({
    type: CreateWebhookDto,
    examples: { messages: { value: { url: 'https://example.com/hooks/whatsapp', events: ['message.received', 'session.status'], secret: 'a-long-random-secret' } } },
  })
  @ApiCreatedResponse({ type: WebhookResponse })
  create(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Body() body: CreateWebhookDto): Promise<WebhookView> {
    return this.webhooks.create(p, ctx, body);
  }

  @Get()
  @ApiEndpoint('List webhooks', 'The organization\'s webhooks, paged by `cursor`; never their secrets.', 'validation_error')
  @ApiOkResponse({ type: WebhookPage })
  list(@CurrentPrincipal() p: Principal, @Query() query: PageQueryDto): Promise<Page<WebhookView>> {
    return this.webhooks.list(p, query);
  }

  @Get(':id')
  @ApiEndpoint('Get a webhook', 'Its target, filters, headers and retry policy; never its secret.', 'not_found')
  @ApiOkResponse({ type: WebhookResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<WebhookView> {
    return this.webhooks.get(p, id);
  }

  @Patch(':id')
  @Audited('webhook.update', 'webhook')
  @ApiEndpoint(
    'Update a webhook',
    'An omitted field keeps its value; `secret: null` clears the secret, `sessionId: null` removes the session scope. Everything is validated before anything is written.',
    'not_found',
    'validation_error',
  )
  @ApiBody({ type: UpdateWebhookDto, examples: { pause: { value: { active: false } } } })
  @ApiOkResponse({ type: WebhookResponse })
  update(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string, @Body() body: UpdateWebhookDto): Promise<WebhookView> {
    return this.webhooks.update(p, ctx, id, body);
  }

  @Delete(':id')
  @Audited('webhook.delete', 'webhook')
  @HttpCode(204)
  @ApiEndpoint('Delete a webhook', 'No further deliveries are made to it; its delivery log goes with it.', 'not_found')
  @ApiNoContentResponse()
  remove(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string): Promise<void> {
    return this.webhooks.remove(p, ctx, id);
  }
}
