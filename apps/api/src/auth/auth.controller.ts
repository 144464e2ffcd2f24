import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { DomainError } from '@app/contracts';
import { auditContextOf } from '../audit/audit-context';
import { AuditTrail } from '../audit/audit-trail';
import { ApiEndpoint, ApiErrors, ApiPublicEndpoint } from '../common/api-docs';
import { LoginGate } from './login-gate';
import { CurrentPrincipal, Public } from '../common/auth.decorators';
import { AuthService } from './auth.service';
import { LoginDto, MeResponse, TokenResponse } from './dto/login.dto';
import type { Principal } from '../common/principal';

@ApiTags('auth')
@ApiErrors('unauthorized', 'rate_limited')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly throttle: LoginGate,
    private readonly audit: AuditTrail,
  ) {}

  @Public()
  @Post('login')
  @HttpCode(200)
  @ApiPublicEndpoint(
    'Log in',
    'Trades a user\'s email and password for a short-lived JWT to send as `Authorization: Bearer`. Repeated failures of one account or IP back off (429 with Retry-After); a wrong password and an unknown email are told the same 401.',
    'validation_error',
  )
  @ApiBody({ type: LoginDto, examples: { owner: { value: { email: 'owner@acme.test', password: 'a-long-password' } } } })
  @ApiOkResponse({ type: TokenResponse })
  async login(@Body() body: LoginDto, @Req() req: Request): Promise<TokenResponse> {
    // the client address as TRUSTED_PROXIES defines it (Express' `trust proxy`, set in bootstrap)
    const ip = req.ip ?? '';
    await this.throttle.admit(body.email, ip);
    const { user, token } = await this.auth.login(body.email, body.password);
    if (!token) {
      await this.throttle.failed(body.email, ip);
      // a known account's owners see the refused attempt (an unknown email names no organization)
      if (user) await this.audit.refused(user.organizationId, auditContextOf(req, { type: 'user', id: user.id, name: user.email }), { action: 'auth.login', target: { type: 'member', id: user.id } });
      throw new DomainError('unauthorized', 'missing or invalid credentials');
    }
    await this.throttle.succeeded(body.email, ip);
    return token;
  }

  @Get('me')
  @ApiBearerAuth()
  @ApiSecurity('api-key')
  @ApiEndpoint('Who am I', 'The caller as the API sees it: a user (with a role) or an API key, its organization and its capabilities.')
  @ApiOkResponse({ type: MeResponse })
  me(@CurrentPrincipal() p: Principal): MeResponse {
    return { kind: p.kind, id: p.id, organizationId: p.organizationId, role: p.role, capabilities: [...p.permissions].sort() };
  }
}
