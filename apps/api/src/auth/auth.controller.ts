import { Body, Controller, Get, HttpCode, Ip, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags, ApiTooManyRequestsResponse } from '@nestjs/swagger';
import { DomainError } from '@app/contracts';
import { LoginThrottle } from '../limits/login-throttle';
import { CurrentPrincipal, Public } from './auth.decorators';
import { AuthService } from './auth.service';
import { LoginDto, MeResponse, TokenResponse } from './dto/login.dto';
import type { Principal } from './principal';

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly throttle: LoginThrottle,
  ) {}

  @Public()
  @Post('login')
  @HttpCode(200)
  @ApiOkResponse({ type: TokenResponse })
  @ApiTooManyRequestsResponse({ description: 'too many attempts from this IP, or backoff after failed logins of this account or IP; Retry-After in seconds' })
  async login(@Body() body: LoginDto, @Ip() ip: string): Promise<TokenResponse> {
    await this.throttle.admit(body.email, ip);
    try {
      const token = await this.auth.login(body.email, body.password);
      await this.throttle.succeeded(body.email);
      return token;
    } catch (err) {
      if (err instanceof DomainError && err.code === 'unauthorized') await this.throttle.failed(body.email, ip);
      throw err;
    }
  }

  @Get('me')
  @ApiBearerAuth()
  @ApiOkResponse({ type: MeResponse })
  me(@CurrentPrincipal() p: Principal): MeResponse {
    return { kind: p.kind, id: p.id, organizationId: p.organizationId, role: p.role, capabilities: [...p.permissions].sort() };
  }
}
