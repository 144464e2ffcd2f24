import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiBody, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiQuery, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { ChatwootIntegrationView } from '@app/contracts';
import { Audit, type AuditContext, Audited, AuditedAhead } from '../../audit/audit-context';
import { CurrentPrincipal, Public, RequirePermissions } from '../../common/auth.decorators';
import type { Principal } from '../../common/principal';
import { ApiEndpoint, ApiErrors } from '../../common/api-docs';
import { DeliveriesService } from '../../deliveries/deliveries.service';
import { WebhookTestResponse } from '../../deliveries/dto/delivery.dto';
import { ChatwootInboundService, ChatwootWebhookMessage, ChatwootWebhookOutcome } from './chatwoot-inbound.service';
import { ChatwootIntegrationService } from './chatwoot-integration.service';
import { ChatwootIntegrationResponse, ChatwootWebhookResponse, PutChatwootDto } from './dto/chatwoot.dto';

/** CONTRACT 16: a session's Chatwoot inbox, managed as the session's destinations are (`webhooks:manage`). */
@ApiTags('integrations')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited')
@RequirePermissions('webhooks:manage')
@Controller('sessions/:id/integrations')
export class ChatwootIntegrationController {
  constructor(
    private readonly integrations: ChatwootIntegrationService,
    private readonly deliveries: DeliveriesService,
  ) {}

  @Put('chatwoot')
  @Audited('chatwoot.connect', 'session')
  @ApiEndpoint(
    'Connect the session to a Chatwoot inbox',
    'Creates or replaces the session\'s Chatwoot integration (docs/integrations/chatwoot.md): its messages appear in the API-channel inbox `inboxId` of account `accountId` (without `inboxId`, one is created, named after the session, with `webhookUrl` as its webhook), and agents\' replies are sent to WhatsApp. Answers `webhookUrl`, to set as the inbox\'s webhook URL in Chatwoot when an inbox is given. The token is stored encrypted and shown masked; a private `baseUrl` is 422 unless the server allows private targets.',
    'not_found',
    'validation_error',
  )
  @ApiBody({
    type: PutChatwootDto,
    examples: {
      connect: { value: { baseUrl: 'https://chatwoot.example.com', accountId: 1, apiAccessToken: 'hQx3vB8kR2mN7pL4sT9wY6zA', inboxId: 4, signMessages: true, importDays: 7 } },
      groups: { value: { baseUrl: 'https://chatwoot.example.com', accountId: 1, groups: true } },
    },
  })
  @ApiOkResponse({ type: ChatwootIntegrationResponse })
  put(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string, @Body() body: PutChatwootDto): Promise<ChatwootIntegrationView> {
    return this.integrations.put(p, ctx, id, body);
  }

  @Get('chatwoot')
  @ApiEndpoint('Get the session\'s Chatwoot integration', 'Its settings (token masked), `webhookUrl`, the import\'s state and the last error Chatwoot answered.', 'not_found')
  @ApiOkResponse({ type: ChatwootIntegrationResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<ChatwootIntegrationView> {
    return this.integrations.get(p, id);
  }

  @Delete('chatwoot')
  @Audited('chatwoot.disconnect', 'session')
  @HttpCode(204)
  @ApiEndpoint('Disconnect Chatwoot', 'Nothing more is delivered to Chatwoot and its webhook calls are refused (401); the conversations stay in Chatwoot.', 'not_found')
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string): Promise<void> {
    await this.integrations.remove(p, ctx, id);
  }

  @Post('chatwoot\\:test')
  @AuditedAhead('chatwoot.test', 'session')
  @HttpCode(202)
  @ApiEndpoint('Test the Chatwoot connection', 'Reads the inbox through Chatwoot\'s API once, as a delivery: the outcome is the integration\'s `lastError` (null when it worked). 409 when inactive.', 'not_found', 'conflict')
  @ApiAcceptedResponse({ type: WebhookTestResponse })
  async test(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<{ eventId: string; deliveryId?: string }> {
    const integration = await this.integrations.get(p, id);
    return this.deliveries.sendTest(p, integration.id, 'chatwoot');
  }
}

/** Chatwoot's webhook: agents' replies. Authenticated by the integration's secret, not by a login or an API key. */
@ApiTags('integrations')
@Controller('integrations/chatwoot')
export class ChatwootWebhookController {
  constructor(
    private readonly integrations: ChatwootIntegrationService,
    private readonly inbound: ChatwootInboundService,
  ) {}

  @Post(':integrationId/webhook')
  @Public()
  @HttpCode(200)
  @ApiEndpoint(
    'Chatwoot\'s webhook (agents\' replies)',
    'Set as the inbox\'s webhook URL in Chatwoot (the integration\'s `webhookUrl`). A `message_created` that is outgoing and not private is sent to the conversation\'s WhatsApp chat once, whatever Chatwoot redelivers (idempotent on Chatwoot\'s message id); anything else is answered `ignored`. 401 without the integration\'s secret (`?secret=` or `X-Chatwoot-Secret`).',
    'unauthorized',
    'conflict',
    'validation_error',
  )
  @ApiQuery({ name: 'secret', required: false, description: 'the integration\'s secret, as `webhookUrl` carries it' })
  @ApiHeader({ name: 'X-Chatwoot-Secret', required: false, description: 'the integration\'s secret, instead of `?secret=`' })
  @ApiBody({
    // Chatwoot's own webhook body (its fields beyond these are read where docs/integrations/chatwoot.md says)
    schema: {
      type: 'object',
      additionalProperties: true,
      properties: {
        event: { type: 'string', description: 'Chatwoot\'s event name; only `message_created` sends' },
        id: { type: 'integer', description: 'Chatwoot\'s message id: a redelivery with the same id sends nothing more' },
        content: { type: 'string', nullable: true },
        message_type: { type: 'string', description: '`outgoing` (an agent\'s reply) is sent; anything else is ignored' },
        private: { type: 'boolean', description: 'a private note is never sent' },
      },
    },
    examples: {
      agentReply: {
        value: {
          event: 'message_created', id: 1024, content: 'Your order ships today', message_type: 'outgoing', private: false, source_id: null,
          sender: { id: 3, name: 'Dana', type: 'user' }, conversation: { id: 77, contact_inbox: { source_id: '15551234567@s.whatsapp.net' } }, attachments: [],
        },
      },
    },
  })
  @ApiOkResponse({ type: ChatwootWebhookResponse })
  async webhook(
    @Param('integrationId') integrationId: string,
    @Query('secret') querySecret: string | undefined,
    @Headers('x-chatwoot-secret') headerSecret: string | undefined,
    @Body() body: ChatwootWebhookMessage,
  ): Promise<ChatwootWebhookOutcome> {
    const integration = await this.integrations.authenticate(integrationId, typeof querySecret === 'string' ? querySecret : headerSecret);
    return this.inbound.handle(integration, body ?? {});
  }
}
