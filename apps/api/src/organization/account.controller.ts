import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Audit, type AuditContext, auditContextOf, Audited } from '../audit/audit-context';
import { CurrentPrincipal, Public } from '../common/auth.decorators';
import type { LoginToken } from '../auth/auth.service';
import { TokenResponse } from '../auth/dto/login.dto';
import type { Principal } from '../common/principal';
import { ApiEndpoint, ApiErrors, ApiPublicEndpoint } from '../common/api-docs';
import { AcceptInvitationDto, ChangePasswordDto, ResetPasswordDto } from './dto/organization.dto';
import { MembersService } from './members.service';

/** A person's own account: accepting an invitation, changing and resetting the password. */
@ApiTags('auth')
@ApiErrors('unauthorized', 'rate_limited')
@Controller('auth')
export class AccountController {
  constructor(private readonly members: MembersService) {}

  @Public()
  @Post('invitations\\:accept')
  @HttpCode(200)
  @ApiPublicEndpoint(
    'Accept an invitation',
    'Creates the member from an invitation\'s token (once) and answers as login does. An expired, used or withdrawn token is 401; an email taken meanwhile 409.',
    'validation_error',
    'conflict',
  )
  @ApiBody({ type: AcceptInvitationDto, examples: { accept: { value: { token: 'the token of the invitation link', password: 'a long passphrase', name: 'Dana Reyes' } } } })
  @ApiOkResponse({ type: TokenResponse })
  accept(@Req() req: Request, @Body() body: AcceptInvitationDto): Promise<LoginToken> {
    return this.members.acceptInvitation(body.token, body.password, body.name, auditContextOf(req));
  }

  @Public()
  @Post('password\\:reset')
  @HttpCode(204)
  @ApiPublicEndpoint('Reset a password', 'Sets a new password with a reset link\'s token (once); every login token of that person ends. An expired or used token is 401.', 'validation_error')
  @ApiBody({ type: ResetPasswordDto, examples: { reset: { value: { token: 'the token of the reset link', newPassword: 'a new long passphrase' } } } })
  @ApiNoContentResponse()
  reset(@Req() req: Request, @Body() body: ResetPasswordDto): Promise<void> {
    return this.members.resetPassword(body.token, body.newPassword, auditContextOf(req));
  }

  @Post('password')
  @HttpCode(200)
  @Audited('auth.password', 'member')
  @ApiBearerAuth()
  @ApiSecurity('api-key')
  @ApiEndpoint(
    'Change my password',
    'The caller\'s own (a person\'s; a key is 403). Every other login token of this person ends at once; the answer carries a fresh one. A wrong current password is 403.',
    'forbidden',
    'validation_error',
  )
  @ApiBody({ type: ChangePasswordDto, examples: { change: { value: { currentPassword: 'the current passphrase', newPassword: 'a new long passphrase' } } } })
  @ApiOkResponse({ type: TokenResponse })
  change(@CurrentPrincipal() p: Principal, @Audit() ctx: AuditContext, @Body() body: ChangePasswordDto): Promise<LoginToken> {
    return this.members.changeOwnPassword(p, ctx, body.currentPassword, body.newPassword);
  }
}
