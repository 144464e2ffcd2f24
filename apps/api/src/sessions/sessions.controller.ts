import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res, StreamableFile } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiExtraModels, ApiNoContentResponse, ApiOkResponse, ApiProduces, ApiSecurity, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Response } from 'express';
import { toBuffer as qrPng } from 'qrcode';
import type { GroupView, SessionQr, SessionView } from '@app/contracts';
import { Audit, Audited, AuditedAhead, type AuditContext } from '../audit/audit-context';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { Page, PageQueryDto } from '../common/pagination';
import { CreateGroupDto, GroupPage, GroupResponse } from './dto/group.dto';
import { CreateSessionDto, PairingCodeResponse, RequestCodeDto, SessionPage, SessionQrResponse, SessionResponse, UpdateSessionDto } from './dto/session.dto';
import { SessionsService } from './sessions.service';

@ApiTags('sessions')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited')
@ApiExtraModels(SessionQrResponse)
@Controller('sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  @RequirePermissions('sessions:write')
  @AuditedAhead('session.create', 'session', { targetField: 'id' })
  @ApiEndpoint(
    'Create a session',
    'Within the organization\'s session quota (over it: 403 `forbidden` with `details.quota`), placed on the live gateway with the most room and started; follow it with `GET /sessions/{id}/qr` or `:request-code` to pair a phone.',
    'validation_error',
    'gateway_unavailable',
  )
  @ApiBody({ type: CreateSessionDto, examples: { minimal: { value: { label: 'Support line' } } } })
  @ApiCreatedResponse({ type: SessionResponse, description: 'placed on a live gateway and started' })
  create(@CurrentPrincipal() p: Principal, @Body() body: CreateSessionDto): Promise<SessionView> {
    return this.sessions.create(p, body);
  }

  @Get()
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List sessions', 'The organization\'s sessions, paged by `cursor` (pages stay stable while sessions are added).', 'validation_error')
  @ApiOkResponse({ type: SessionPage })
  list(@CurrentPrincipal() p: Principal, @Query() query: PageQueryDto): Promise<Page<SessionView>> {
    return this.sessions.list(p.organizationId, query, p.sessionIds);
  }

  @Get(':id')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('Get a session', 'Its status, paired number and settings.', 'not_found')
  @ApiOkResponse({ type: SessionResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.get(p.organizationId, id);
  }

  @Patch(':id')
  @RequirePermissions('sessions:write')
  @Audited('session.update', 'session')
  @ApiEndpoint('Update a session', 'Label and settings; an omitted field keeps its value.', 'not_found', 'validation_error')
  @ApiBody({ type: UpdateSessionDto, examples: { rename: { value: { label: 'Support line (EU)' } } } })
  @ApiOkResponse({ type: SessionResponse })
  update(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string, @Body() body: UpdateSessionDto): Promise<SessionView> {
    return this.sessions.update(p.organizationId, ctx, id, body);
  }

  @Delete(':id')
  @RequirePermissions('sessions:write')
  @AuditedAhead('session.delete', 'session')
  @ApiEndpoint('Delete a session', 'Stops it, unlinks the device from the phone and deletes it with its stored credentials.', 'not_found', 'gateway_unavailable')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'stopped, unlinked and deleted' })
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<void> {
    return this.sessions.remove(p.organizationId, id);
  }

  @Post(':id\\:start')
  @AuditedAhead('session.start', 'session')
  @RequirePermissions('sessions:write')
  @ApiEndpoint('Start a session', 'Connects it (resuming a paired one without a QR); placed on a live gateway first when its own is gone.', 'not_found', 'gateway_unavailable')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponse })
  start(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.start(p.organizationId, id);
  }

  @Post(':id\\:stop')
  @AuditedAhead('session.stop', 'session')
  @RequirePermissions('sessions:write')
  @ApiEndpoint('Stop a session', 'Disconnects it and keeps the pairing, so `:start` resumes without a QR.', 'not_found', 'gateway_unavailable')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponse })
  stop(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.stop(p.organizationId, id);
  }

  @Post(':id\\:restart')
  @AuditedAhead('session.restart', 'session')
  @RequirePermissions('sessions:write')
  @ApiEndpoint('Restart a session', 'A paired session reconnects keeping its attachment; an unpaired one begins a fresh QR flow.', 'not_found', 'gateway_unavailable')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponse, description: 'paired: reconnects keeping the attachment; unpaired: a fresh QR flow' })
  restart(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.restart(p.organizationId, id);
  }

  @Post(':id\\:logout')
  @AuditedAhead('session.logout', 'session')
  @RequirePermissions('sessions:write')
  @ApiEndpoint('Log a session out', 'Unlinks the device from the phone and clears the number; the session row stays, to be paired again. Idempotent.', 'not_found', 'gateway_unavailable')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponse, description: 'device unlinked, number cleared, row kept; idempotent' })
  logout(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.logout(p.organizationId, id);
  }

  @Post(':id\\:request-code')
  @AuditedAhead('session.request-code', 'session')
  @RequirePermissions('sessions:write')
  @ApiEndpoint(
    'Request a pairing code',
    'The alternative to the QR while the session waits for pairing: enter the code on the phone under Linked devices → Link with phone number.',
    'not_found',
    'conflict',
    'validation_error',
    'gateway_unavailable',
  )
  @ApiBody({ type: RequestCodeDto, examples: { phone: { value: { phoneNumber: '15551234567' } } } })
  @HttpCode(200)
  @ApiOkResponse({ type: PairingCodeResponse })
  requestCode(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: RequestCodeDto): Promise<{ code: string }> {
    return this.sessions.requestPairingCode(p.organizationId, id, body.phoneNumber);
  }

  @Get(':id/qr')
  // whoever reads the QR can pair the organization's session to their own phone
  @RequirePermissions('sessions:write')
  @ApiEndpoint(
    'Get the pairing QR',
    'The current QR while the session waits for a scan (it refreshes; the `auth.qr` event announces each one). JSON by default; a PNG when `Accept: image/png`. Otherwise 409 with the status and the last failure reason in `details`.',
    'not_found',
    'conflict',
  )
  @ApiProduces('application/json', 'image/png')
  @ApiOkResponse({
    description: 'the QR payload as JSON, or the rendered QR as `image/png` when the request accepts it',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(SessionQrResponse) } },
      'image/png': { schema: { type: 'string', format: 'binary' } },
    },
  })
  async qr(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SessionQr | StreamableFile> {
    const shown = await this.sessions.qr(p.organizationId, id);
    res.setHeader('Cache-Control', 'no-store');
    if (wantsPng(accept)) return new StreamableFile(await qrPng(shown.qr, { type: 'png', margin: 2, width: 320 }), { type: 'image/png' });
    return shown;
  }

  @Get(':id/groups')
  @RequirePermissions('sessions:read')
  @ApiEndpoint('List groups', 'The groups stored for the session\'s account, paged by `cursor`.', 'not_found', 'validation_error')
  @ApiOkResponse({ type: GroupPage })
  groups(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: PageQueryDto): Promise<Page<GroupView>> {
    return this.sessions.listGroups(p.organizationId, id, query);
  }

  @Post(':id/groups')
  @AuditedAhead('group.create', 'group', { targetField: 'groupJid' })
  @RequirePermissions('groups:write')
  @ApiEndpoint(
    'Create a group',
    'Created by the session\'s account with these participants (user JIDs like `15551234567@s.whatsapp.net`; bare digits are refused); the session must be connected.',
    'not_found',
    'validation_error',
    'not_implemented',
    'gateway_unavailable',
  )
  @ApiBody({ type: CreateGroupDto, examples: { group: { value: { name: 'Project team', participants: ['15551234567@s.whatsapp.net'] } } } })
  @ApiCreatedResponse({ type: GroupResponse })
  createGroup(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: CreateGroupDto): Promise<GroupView> {
    return this.sessions.createGroup(p.organizationId, id, body);
  }
}

/** PNG only when asked for it explicitly: a browser's `*\/*` keeps getting JSON. */
function wantsPng(accept: string | undefined): boolean {
  return !!accept && /(^|,)\s*image\/png\s*(;|,|$)/i.test(accept);
}
