import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Public } from './auth.decorators';
import { AuthService } from './auth.service';
import { LoginDto, MeResponse, TokenResponse } from './dto/login.dto';
import type { Principal } from './principal';

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('login')
  @HttpCode(200)
  @ApiOkResponse({ type: TokenResponse })
  login(@Body() body: LoginDto): Promise<TokenResponse> {
    return this.auth.login(body.email, body.password);
  }

  @Get('me')
  @ApiBearerAuth()
  @ApiOkResponse({ type: MeResponse })
  me(@CurrentPrincipal() p: Principal): MeResponse {
    return { kind: p.kind, id: p.id, organizationId: p.organizationId, role: p.role, capabilities: [...p.permissions].sort() };
  }
}
