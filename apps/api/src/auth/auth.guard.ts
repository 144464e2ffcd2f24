import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { API_KEY_PREFIX, DomainError, Permission } from '@app/contracts';
import { requestToken, requestTokenHash } from './access-token';
import { PUBLIC_ROUTE, REQUIRED_PERMISSIONS } from './auth.decorators';
import { AuthService } from './auth.service';

/** Global guard: every route needs a valid credential (Bearer or X-Api-Key) unless @Public(); then the route's permissions. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const req = ctx.switchToHttp().getRequest();
    const token = requestToken(req.headers ?? {});
    if (!token) throw new DomainError('unauthorized', 'missing or invalid credentials');
    req.principal = await this.auth.authenticate(token, token.startsWith(API_KEY_PREFIX) ? requestTokenHash(req, token) : undefined);
    const required = this.reflector.getAllAndOverride<Permission[]>(REQUIRED_PERMISSIONS, targets) ?? [];
    const missing = required.filter((p) => !req.principal.permissions.has(p));
    if (missing.length) throw new DomainError('forbidden', 'the caller lacks the needed capability', { required: missing });
    return true;
  }
}
