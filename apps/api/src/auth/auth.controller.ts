import { Body, Controller, Get, HttpCode, Ip, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { DomainError } from '@app/contracts';
import { ApiEndpoint, ApiErrors, ApiPublicEndpoint } from '../common/api-docs';
import { LoginThrottle } from '../limits/login-throttle';
import { CurrentPrincipal, Public } from './auth.decorators';
import { AuthService } from './auth.service';
import { LoginDto, MeResponse, TokenResponse } from './dto/login.dto';
import type { Principal } from './principal';

@ApiTags('auth')
@ApiErrors('unauthorized', 'rate_limited')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly throttle: LoginThrottle,
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
  async login(@Body() body: LoginDto, @Ip() ip: string): Promise<TokenResponse> {
    await this.throttle.admit(body.email, ip);
    try {
      const token = await this.auth.login(body.email, body.password);
      await this.throttle.succeeded(body.email, ip);
      return token;
    } catch (err) {
      if (err instanceof DomainError && err.code === 'unauthorized') await this.throttle.failed(body.email, ip);
      throw err;
    }
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
