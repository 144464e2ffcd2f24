import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiQuery, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CampaignRecipientView, CampaignView, OptOutView, RECIPIENT_STATUSES } from '@app/contracts';
import { AuditedAhead } from '../audit/audit-context';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import type { Page } from '../common/pagination';
import { CampaignsService } from './campaigns.service';
import { CampaignPage, CampaignRecipientPage, CampaignResponse, CreateCampaignDto, OptOutPage } from './dto/campaign.dto';

type ListQuery = { limit?: string; cursor?: string };

/** Campaigns and opt-outs (CONTRACT 17). Bodies and queries are checked by the service, after the session lookup. */
@ApiTags('campaigns')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'not_found')
@Controller('sessions/:id')
export class CampaignsController {
  constructor(private readonly campaigns: CampaignsService) {}

  @Post('campaigns')
  @AuditedAhead('campaign.create', 'campaign', { targetField: 'id' })
  @RequirePermissions('messages:send')
  @HttpCode(201)
  @ApiEndpoint(
    'Create a campaign',
    'Up to 10,000 recipients (`recipients` or `recipientsCsv`) get the message, its `{{variables}}` filled per recipient, one at a time: a random delay in [minDelayMs, maxDelayMs] between two, "typing…" before each when asked, only inside the window, within the hourly and daily caps and the warm-up\'s growing daily cap, and within the session\'s own rates. Opted-out numbers are skipped, and numbers not on WhatsApp when skipNotOnWhatsApp (default true). 422 names the recipient and the variable when a recipient lacks one the template uses. A media campaign\'s file (`message.media`, a URL or base64) is taken once at creation and stored once; each recipient gets those bytes with its own caption.',
    'validation_error',
  )
  @ApiBody({
    type: CreateCampaignDto,
    examples: {
      paced: {
        value: {
          name: 'order ready',
          message: { text: 'Hi {{name}}, your order {{order}} is ready' },
          recipients: [{ to: '15551234567', variables: { name: 'Ana', order: 'A-17' } }],
          window: { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '18:00', timeZone: 'America/New_York' },
          pacing: { minDelayMs: 20000, maxDelayMs: 60000, typing: true, perHour: 60, perDay: 300 },
          skipNotOnWhatsApp: true,
        },
      },
      image: {
        value: {
          name: 'new menu',
          // a 1×1 PNG, so the example works as tried; `media.url` takes an https URL instead (fetched once, guarded)
          message: { type: 'image', text: 'Hi {{name}}, our new menu', media: { base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', mimetype: 'image/png' } },
          recipients: [{ to: '15551234567', variables: { name: 'Ana' } }],
        },
      },
    },
  })
  @ApiCreatedResponse({ type: CampaignResponse })
  create(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown): Promise<CampaignView> {
    return this.campaigns.create(p.organizationId, id, body);
  }

  @Get('campaigns')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List campaigns', "The session's campaigns, newest first, with their counts.", 'validation_error')
  @ApiQuery({ name: 'limit', required: false, type: Number }) @ApiQuery({ name: 'cursor', required: false, type: String })
  @ApiOkResponse({ type: CampaignPage })
  list(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: ListQuery): Promise<Page<CampaignView>> {
    return this.campaigns.list(p.organizationId, id, query);
  }

  @Get('campaigns/:campaignId')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('Get a campaign', 'Its status, counts and when it sends next.')
  @ApiOkResponse({ type: CampaignResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('campaignId') campaignId: string): Promise<CampaignView> {
    return this.campaigns.get(p.organizationId, id, campaignId);
  }

  @Get('campaigns/:campaignId/recipients')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List a campaign\'s recipients', 'Each recipient in order with its state, its message id and error; `cursor` is the last position of the previous page.', 'validation_error')
  @ApiQuery({ name: 'status', required: false, enum: RECIPIENT_STATUSES })
  @ApiQuery({ name: 'limit', required: false, type: Number }) @ApiQuery({ name: 'cursor', required: false, type: String })
  @ApiOkResponse({ type: CampaignRecipientPage })
  recipients(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Param('campaignId') campaignId: string,
    @Query() query: ListQuery & { status?: string },
  ): Promise<Page<CampaignRecipientView>> {
    return this.campaigns.recipients(p.organizationId, id, campaignId, query);
  }

  @Post('campaigns/:campaignId\\:pause')
  @AuditedAhead('campaign.pause', 'campaign', { targetParam: 'campaignId' })
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiEndpoint('Pause a campaign', 'Nothing more is sent within 1 s, on whichever gateway holds the session; its message not yet sent goes back out of the queue (it goes back in, with the same network id, on resume). 409 unless scheduled or running.', 'conflict')
  @ApiOkResponse({ type: CampaignResponse })
  pause(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('campaignId') campaignId: string): Promise<CampaignView> {
    return this.campaigns.change(p.organizationId, id, campaignId, 'pause');
  }

  @Post('campaigns/:campaignId\\:resume')
  @AuditedAhead('campaign.resume', 'campaign', { targetParam: 'campaignId' })
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiEndpoint('Resume a campaign', 'It runs again from its next pending recipient. 409 unless paused.', 'conflict')
  @ApiOkResponse({ type: CampaignResponse })
  resume(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('campaignId') campaignId: string): Promise<CampaignView> {
    return this.campaigns.change(p.organizationId, id, campaignId, 'resume');
  }

  @Post('campaigns/:campaignId\\:cancel')
  @AuditedAhead('campaign.cancel', 'campaign', { targetParam: 'campaignId' })
  @RequirePermissions('messages:send')
  @HttpCode(200)
  @ApiEndpoint('Cancel a campaign', 'Nothing more is sent within 1 s; pending recipients become cancelled. 409 when it already completed or was cancelled.', 'conflict')
  @ApiOkResponse({ type: CampaignResponse })
  cancel(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('campaignId') campaignId: string): Promise<CampaignView> {
    return this.campaigns.change(p.organizationId, id, campaignId, 'cancel');
  }

  @Get('opt-outs')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List opt-outs', 'Numbers that answered with an opt-out keyword (OPT_OUT_KEYWORDS, default STOP): every later campaign of the session skips them.', 'validation_error')
  @ApiQuery({ name: 'limit', required: false, type: Number }) @ApiQuery({ name: 'cursor', required: false, type: String })
  @ApiOkResponse({ type: OptOutPage })
  optOuts(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: ListQuery): Promise<Page<OptOutView>> {
    return this.campaigns.optOuts(p.organizationId, id, query);
  }

  @Delete('opt-outs/:jid')
  @AuditedAhead('opt-out.remove', 'optOut', { targetParam: 'jid' })
  @RequirePermissions('messages:send')
  @HttpCode(204)
  @ApiEndpoint('Remove an opt-out', 'The number can be sent campaigns again.')
  @ApiNoContentResponse({ description: 'removed' })
  async removeOptOut(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('jid') jid: string): Promise<void> {
    await this.campaigns.removeOptOut(p.organizationId, id, jid);
  }
}
