import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res, StreamableFile } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { toBuffer as qrPng } from 'qrcode';
import type { GroupView, SessionQr, SessionView } from '@app/contracts';
import { CurrentPrincipal, RequirePermissions } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { Page, PageQueryDto } from '../common/pagination';
import { CreateGroupDto, GroupPage, GroupResponse } from './dto/group.dto';
import { CreateSessionDto, PairingCodeResponse, RequestCodeDto, SessionPage, SessionQrResponse, SessionResponse, UpdateSessionDto } from './dto/session.dto';
import { SessionsService } from './sessions.service';

@ApiTags('sessions')
@ApiBearerAuth()
@Controller('sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  @RequirePermissions('sessions:write')
  @ApiCreatedResponse({ type: SessionResponse, description: 'placed on a live gateway and started' })
  create(@CurrentPrincipal() p: Principal, @Body() body: CreateSessionDto): Promise<SessionView> {
    return this.sessions.create(p, body);
  }

  @Get()
  @RequirePermissions('sessions:read')
  @ApiOkResponse({ type: SessionPage })
  list(@CurrentPrincipal() p: Principal, @Query() query: PageQueryDto): Promise<Page<SessionView>> {
    return this.sessions.list(p.organizationId, query);
  }

  @Get(':id')
  @RequirePermissions('sessions:read')
  @ApiOkResponse({ type: SessionResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.get(p.organizationId, id);
  }

  @Patch(':id')
  @RequirePermissions('sessions:write')
  @ApiOkResponse({ type: SessionResponse })
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: UpdateSessionDto): Promise<SessionView> {
    return this.sessions.update(p.organizationId, id, body);
  }

  @Delete(':id')
  @RequirePermissions('sessions:write')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'stopped, unlinked and deleted' })
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<void> {
    return this.sessions.remove(p.organizationId, id);
  }

  @Post(':id\\:start')
  @RequirePermissions('sessions:write')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponse })
  start(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.start(p.organizationId, id);
  }

  @Post(':id\\:stop')
  @RequirePermissions('sessions:write')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponse })
  stop(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.stop(p.organizationId, id);
  }

  @Post(':id\\:restart')
  @RequirePermissions('sessions:write')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponse, description: 'paired: reconnects keeping the attachment; unpaired: a fresh QR flow' })
  restart(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.restart(p.organizationId, id);
  }

  @Post(':id\\:logout')
  @RequirePermissions('sessions:write')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponse, description: 'device unlinked, number cleared, row kept; idempotent' })
  logout(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.logout(p.organizationId, id);
  }

  @Post(':id\\:request-code')
  @RequirePermissions('sessions:write')
  @HttpCode(200)
  @ApiOkResponse({ type: PairingCodeResponse })
  requestCode(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: RequestCodeDto): Promise<{ code: string }> {
    return this.sessions.requestPairingCode(p.organizationId, id, body.phoneNumber);
  }

  @Get(':id/qr')
  // whoever reads the QR can pair the organization's session to their own phone
  @RequirePermissions('sessions:write')
  @ApiProduces('application/json', 'image/png')
  @ApiOkResponse({ type: SessionQrResponse, description: '`image/png` when the request accepts it' })
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
  @ApiOkResponse({ type: GroupPage })
  groups(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: PageQueryDto): Promise<Page<GroupView>> {
    return this.sessions.listGroups(p.organizationId, id, query);
  }

  @Post(':id/groups')
  @RequirePermissions('groups:write')
  @ApiCreatedResponse({ type: GroupResponse })
  createGroup(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: CreateGroupDto): Promise<GroupView> {
    return this.sessions.createGroup(p.organizationId, id, body);
  }
}

/** PNG only when asked for it explicitly: a browser's `*\/*` keeps getting JSON. */
function wantsPng(accept: string | undefined): boolean {
  return !!accept && /(^|,)\s*image\/png\s*(;|,|$)/i.test(accept);
}
