import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { Audit, type AuditContext, Audited } from '../audit/audit-context';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors } from '../common/api-docs';
import { ApiKeysService } from './api-keys.service';
import {
  ApiKeyList,
  ApiKeyResponse,
  ChangeRoleDto,
  CreateApiKeyDto,
  CreatedApiKeyResponse,
  CreatedInvitationResponse,
  CreateInvitationDto,
  InvitationList,
  MemberList,
  MemberResponse,
  OrganizationResponse,
  PasswordResetLinkResponse,
  UpdateApiKeyDto,
  UpdateOrganizationDto,
} from './dto/organization.dto';
import { MembersService } from './members.service';
import { OrganizationService } from './organization.service';

@ApiTags('organization')
@ApiBearerAuth()
@ApiSecurity('api-key')
@ApiErrors('unauthorized', 'forbidden', 'rate_limited')
@Controller()
export class OrganizationController {
  constructor(
    private readonly organization: OrganizationService,
    private readonly members: MembersService,
    private readonly keys: ApiKeysService,
  ) {}

  @Get('organization')
  @ApiEndpoint('Get the organization', 'Its name, its quotas and what it holds now.')
  @ApiOkResponse({ type: OrganizationResponse })
  get(@CurrentPrincipal() p: Principal): Promise<OrganizationResponse> {
    return this.organization.get(p.organizationId);
  }

  @Patch('organization')
  @RequirePermissions('members:manage')
  @Audited('organization.update', 'organization')
  @ApiEndpoint('Rename the organization', 'Owners and admins.', 'validation_error')
  @ApiBody({ type: UpdateOrganizationDto, examples: { rename: { value: { name: 'Acme Support' } } } })
  @ApiOkResponse({ type: OrganizationResponse })
  update(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Body() body: UpdateOrganizationDto): Promise<OrganizationResponse> {
    return this.organization.rename(p.organizationId, ctx, body.name);
  }

  @Get('members')
  @RequirePermissions('members:manage')
  @ApiEndpoint('List members', 'The people of the organization with their roles and last login.')
  @ApiOkResponse({ type: MemberList })
  async listMembers(@CurrentPrincipal() p: Principal): Promise<MemberList> {
    return { data: await this.members.list(p.organizationId) };
  }

  @Patch('members/:userId')
  @RequirePermissions('members:manage')
  @Audited('member.role', 'member')
  @ApiEndpoint(
    'Change a member\'s role',
    'Only an owner makes or unmakes owners, and nobody grants a role with rights they lack (403); the last owner cannot be demoted (409). Applies at once on every replica.',
    'not_found',
    'conflict',
    'validation_error',
  )
  @ApiBody({ type: ChangeRoleDto, examples: { demote: { value: { role: 'member' } } } })
  @ApiOkResponse({ type: MemberResponse })
  changeRole(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('userId') userId: string, @Body() body: ChangeRoleDto): Promise<MemberResponse> {
    return this.members.changeRole(p, ctx, userId, body.role);
  }

  @Delete('members/:userId')
  @RequirePermissions('members:manage')
  @Audited('member.remove', 'member')
  @HttpCode(204)
  @ApiEndpoint('Remove a member', 'Their login tokens stop working and their WebSockets close at once on every replica; the last owner cannot be removed (409).', 'not_found', 'conflict')
  @ApiNoContentResponse()
  removeMember(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('userId') userId: string): Promise<void> {
    return this.members.remove(p, ctx, userId);
  }

  @Post('members/:userId\\:reset-password')
  @RequirePermissions('members:manage')
  @Audited('member.reset-password', 'member')
  @HttpCode(201)
  @ApiEndpoint(
    'Make a password-reset link',
    'A single-use link, shown once (and mailed to the member when SMTP_URL is set); `POST /auth/password:reset` takes its token. Only for members whose role the caller may handle (an owner\'s: owners only).',
    'not_found',
  )
  @ApiCreatedResponse({ type: PasswordResetLinkResponse })
  resetLink(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('userId') userId: string): Promise<PasswordResetLinkResponse> {
    return this.members.resetLink(p, ctx, userId);
  }

  @Post('invitations')
  @RequirePermissions('members:manage')
  @Audited('invitation.create', 'invitation')
  @ApiEndpoint(
    'Invite a person',
    'A single-use link to join with this role, shown once (and mailed with SMTP_URL); `POST /auth/invitations:accept` takes its token. Nobody invites to a role with rights they lack (403); an email already in use is 409.',
    'conflict',
    'validation_error',
  )
  @ApiBody({ type: CreateInvitationDto, examples: { colleague: { value: { email: 'dana@example.com', role: 'member' } } } })
  @ApiCreatedResponse({ type: CreatedInvitationResponse })
  invite(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Body() body: CreateInvitationDto): Promise<CreatedInvitationResponse> {
    return this.members.invite(p, ctx, body.email, body.role);
  }

  @Get('invitations')
  @RequirePermissions('members:manage')
  @ApiEndpoint('List pending invitations', 'Not yet accepted, withdrawn or expired; never their tokens.')
  @ApiOkResponse({ type: InvitationList })
  async listInvitations(@CurrentPrincipal() p: Principal): Promise<InvitationList> {
    return { data: await this.members.listInvitations(p.organizationId) };
  }

  @Delete('invitations/:id')
  @RequirePermissions('members:manage')
  @Audited('invitation.withdraw', 'invitation')
  @HttpCode(204)
  @ApiEndpoint('Withdraw an invitation', 'Its link stops working.', 'not_found')
  @ApiNoContentResponse()
  withdraw(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string): Promise<void> {
    return this.members.withdrawInvitation(p, ctx, id);
  }

  @Get('api-keys')
  @RequirePermissions('apikeys:manage')
  @ApiEndpoint('List API keys', 'The organization\'s keys that are not revoked; never their tokens.')
  @ApiOkResponse({ type: ApiKeyList })
  async listKeys(@CurrentPrincipal() p: Principal): Promise<ApiKeyList> {
    return { data: await this.keys.list(p.organizationId) };
  }

  @Post('api-keys')
  @RequirePermissions('apikeys:manage')
  @Audited('apikey.create', 'apiKey')
  @ApiEndpoint(
    'Create an API key',
    'The token is in this answer only. Optionally limited to some sessions (`sessionIds`), to client addresses (`allowedIps`, IPv4/IPv6 CIDRs) and in time (`expiresAt`). A caller cannot grant a permission or a session it does not hold, nor a longer life than its own key\'s (403). Over the API-key quota: 403 with `details.quota`.',
    'validation_error',
  )
  @ApiBody({ type: CreateApiKeyDto, examples: { scoped: { value: { name: 'support bot', permissions: ['sessions:read', 'messages:send'], sessionIds: ['ses_01JD3Z8Q5W7N2K4M6P8R0T2V4X'], allowedIps: ['203.0.113.0/24'] } } } })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse })
  createKey(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Body() body: CreateApiKeyDto): Promise<CreatedApiKeyResponse> {
    return this.keys.create(p, ctx, body);
  }

  @Patch('api-keys/:id')
  @RequirePermissions('apikeys:manage')
  @Audited('apikey.update', 'apiKey')
  @ApiEndpoint('Change an API key', 'Name, sessions, addresses and expiry (`null` lifts a limit); applies at once on every replica. Its permissions are fixed: create another key.', 'not_found', 'validation_error')
  @ApiBody({ type: UpdateApiKeyDto, examples: { narrow: { value: { name: 'support bot (office only)', allowedIps: ['203.0.113.0/24', '2001:db8::/32'] } } } })
  @ApiOkResponse({ type: ApiKeyResponse })
  updateKey(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string, @Body() body: UpdateApiKeyDto): Promise<ApiKeyResponse> {
    return this.keys.update(p, ctx, id, body);
  }

  @Delete('api-keys/:id')
  @RequirePermissions('apikeys:manage')
  @Audited('apikey.revoke', 'apiKey')
  @HttpCode(204)
  @ApiEndpoint('Revoke an API key', 'Refused at once on every replica (401) and its WebSockets closed (4401).', 'not_found')
  @ApiNoContentResponse()
  revokeKey(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Param('id') id: string): Promise<void> {
    return this.keys.revoke(p, ctx, id);
  }
}
