import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { API_KEY_PREFIX, DomainError, Permission } from '@app/contracts';
import { requestToken, requestTokenHash } from './access-token';
import { PUBLIC_ROUTE, REQUIRED_PERMISSIONS } from './auth.decorators';
import { AuthService } from './auth.service';

/** What a route asks of its caller, from its decorators (the handler's over its controller's). */
interface RouteAuth {
  isPublic: boolean;
  required: Permission[];
}

/** Global guard: every route needs a valid credential (Bearer or X-Api-Key) unless @Public(); then the route's permissions. */
@Injectable()
export class AuthGuard implements CanActivate {
  /** Decorators are fixed once the app is built: read once per controller and handler, not twice per request. */
  private readonly routes = new WeakMap<object, WeakMap<object, RouteAuth>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const { isPublic, required } = this.routeAuth(ctx);
    if (isPublic) return true;
    const req = ctx.switchToHttp().getRequest();
    const token = requestToken(req.headers ?? {});
    if (!token) throw new DomainError('unauthorized', 'missing or invalid credentials');
    req.principal = await this.auth.authenticate(token, token.startsWith(API_KEY_PREFIX) ? requestTokenHash(req, token) : undefined);
    const missing = required.filter((p) => !req.principal.permissions.has(p));
    if (missing.length) throw new DomainError('forbidden', 'the caller lacks the needed capability', { required: missing });
    return true;
  }

  private routeAuth(ctx: ExecutionContext): RouteAuth {
    const handler = ctx.getHandler();
    const controller = ctx.getClass();
    // keyed by both: a handler inherited by two controllers may sit under different controller decorators
    let byHandler = this.routes.get(controller);
    if (!byHandler) this.routes.set(controller, (byHandler = new WeakMap()));
    let route = byHandler.get(handler);
    if (!route) {
      const targets = [handler, controller];
      route = {
        isPublic: this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) === true,
        required: this.reflector.getAllAndOverride<Permission[]>(REQUIRED_PERMISSIONS, targets) ?? [],
      };
      byHandler.set(handler, route);
    }
    return route;
  }
}
