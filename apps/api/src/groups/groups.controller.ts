import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { GroupDetails, GroupParticipantResult } from '@app/contracts';
import { AuditedAhead } from '../audit/audit-context';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import {
  GroupDetailsResponse,
  GroupInviteResponse,
  GroupParticipantsDto,
  GroupParticipantsResponse,
  GroupPictureDto,
  JoinGroupDto,
  UpdateGroupDto,
} from './dto/group-admin.dto';
import { GROUP_READ_TTL_MS, GroupsService } from './groups.service';

const NOT_ADMIN = '409 `conflict` when the session is not connected (`details.status`) or WhatsApp refuses it because the account is not an admin (`details.reason: "not_admin"`).';

/** Group administration (CONTRACT 13); listing and creating groups stay with the sessions (sessions.controller.ts). */
@ApiTags('groups')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited')
@Controller('sessions')
export class GroupsController {
  constructor(private readonly groups: GroupsService) {}

  @Get(':id/groups/:groupJid')
  @RequirePermissions('sessions:read')
  @ApiEndpoint(
    'Get a group',
    `The group fresh from the network with its members and their rights (a read within ${GROUP_READ_TTL_MS / 1000} s of the last one answers what is stored, which notifications keep current). While the session is not connected: the stored group, or 409 when there is none.`,
    'not_found',
    'validation_error',
    'conflict',
    'gateway_unavailable',
  )
  @ApiOkResponse({ type: GroupDetailsResponse })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('groupJid') groupJid: string): Promise<GroupDetails> {
    return this.groups.get(p.organizationId, id, groupJid);
  }

  @Patch(':id/groups/:groupJid')
  @AuditedAhead('group.update', 'group', { targetParam: 'groupJid' })
  @RequirePermissions('groups:write')
  @ApiEndpoint('Update a group', `Subject, description and settings; an omitted field keeps its value. Members see \`group.update\`. ${NOT_ADMIN}`, 'not_found', 'validation_error', 'conflict', 'gateway_unavailable')
  @ApiBody({ type: UpdateGroupDto, examples: { rename: { value: { subject: 'Project team (EU)' } }, announce: { value: { isAnnounce: true } } } })
  @ApiOkResponse({ type: GroupDetailsResponse })
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('groupJid') groupJid: string, @Body() body: UpdateGroupDto): Promise<GroupDetails> {
    return this.groups.update(p.organizationId, id, groupJid, body);
  }

  @Post(':id/groups/:groupJid/participants')
  @AuditedAhead('group.participants', 'group', { targetParam: 'groupJid' })
  @RequirePermissions('groups:write')
  @ApiEndpoint(
    'Change group participants',
    'Adds, removes, promotes or demotes members; answered per participant (`ok`, `not_on_whatsapp`, `not_admin`, `already`, `not_in_group`, `invite_required`, `recently_left`, `group_full`, `error`). Members see `group.participants`. 409 when the session is not connected.',
    'not_found',
    'validation_error',
    'conflict',
    'gateway_unavailable',
  )
  @ApiBody({ type: GroupParticipantsDto, examples: { add: { value: { action: 'add', participants: ['15551234567@s.whatsapp.net'] } } } })
  @HttpCode(200)
  @ApiOkResponse({ type: GroupParticipantsResponse })
  participants(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Param('groupJid') groupJid: string,
    @Body() body: GroupParticipantsDto,
  ): Promise<{ data: GroupParticipantResult[] }> {
    return this.groups.participants(p.organizationId, id, groupJid, body);
  }

  @Post(':id/groups/:groupJid\\:leave')
  @AuditedAhead('group.leave', 'group', { targetParam: 'groupJid' })
  @RequirePermissions('groups:write')
  @ApiEndpoint('Leave a group', 'The account leaves the group; the stored group is removed. 409 when the session is not connected.', 'not_found', 'validation_error', 'conflict', 'gateway_unavailable')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'left' })
  leave(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('groupJid') groupJid: string): Promise<void> {
    return this.groups.leave(p.organizationId, id, groupJid);
  }

  // the code lets anyone join the group: handing it out is a group write, as showing a QR is a session write
  @Get(':id/groups/:groupJid/invite')
  @RequirePermissions('groups:write')
  @ApiEndpoint('Get a group invite link', `The group's current invite code and link. ${NOT_ADMIN}`, 'not_found', 'validation_error', 'conflict', 'gateway_unavailable')
  @ApiOkResponse({ type: GroupInviteResponse })
  invite(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('groupJid') groupJid: string): Promise<{ code: string; url: string }> {
    return this.groups.invite(p.organizationId, id, groupJid);
  }

  @Post(':id/groups/:groupJid/invite\\:revoke')
  @AuditedAhead('group.invite-revoke', 'group', { targetParam: 'groupJid' })
  @RequirePermissions('groups:write')
  @ApiEndpoint('Revoke a group invite link', `The old code stops working; answers the new one. ${NOT_ADMIN}`, 'not_found', 'validation_error', 'conflict', 'gateway_unavailable')
  @HttpCode(200)
  @ApiOkResponse({ type: GroupInviteResponse })
  revokeInvite(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('groupJid') groupJid: string): Promise<{ code: string; url: string }> {
    return this.groups.revokeInvite(p.organizationId, id, groupJid);
  }

  @Post(':id/groups\\:join')
  @AuditedAhead('group.join', 'group', { targetField: 'groupJid' })
  @RequirePermissions('groups:write')
  @ApiEndpoint('Join a group by invite', 'The account joins the group the code (or link) points at; answers the group, now stored. 404 for a revoked or unknown code; 409 when the session is not connected.', 'not_found', 'validation_error', 'conflict', 'gateway_unavailable')
  @ApiBody({ type: JoinGroupDto, examples: { code: { value: { code: 'F4k3InV1t3C0d3xxxxxxxx' } } } })
  @HttpCode(200)
  @ApiOkResponse({ type: GroupDetailsResponse })
  join(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: JoinGroupDto): Promise<GroupDetails> {
    return this.groups.join(p.organizationId, id, body);
  }

  @Put(':id/groups/:groupJid/picture')
  @AuditedAhead('group.picture', 'group', { targetParam: 'groupJid' })
  @RequirePermissions('groups:write')
  @ApiEndpoint(
    'Set a group picture',
    `An image (image/jpeg, image/png or image/webp) given as in a send. Any member may unless the group is locked (\`isLocked\`). ${NOT_ADMIN}`,
    'not_found',
    'validation_error',
    'conflict',
    'payload_too_large',
    'gateway_unavailable',
  )
  @ApiBody({ type: GroupPictureDto, examples: { url: { value: { media: { url: 'https://example.com/team.jpg', mimetype: 'image/jpeg' } } } } })
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'set' })
  setPicture(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('groupJid') groupJid: string, @Body() body: GroupPictureDto): Promise<void> {
    return this.groups.setPicture(p.organizationId, id, groupJid, body);
  }
}
