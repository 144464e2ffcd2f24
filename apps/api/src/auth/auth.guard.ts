import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { API_KEY_PREFIX, DomainError, Permission } from '@app/contracts';
import { ApiKeysRepository } from '@app/database';
import { AUDITED_ACTION, AuditedRoute, auditContextOf, targetIdOf } from '../audit/audit-context';
import { AuditTrail } from '../audit/audit-trail';
import { requestToken, requestTokenHash } from './access-token';
import { PUBLIC_ROUTE, REQUIRED_PERMISSIONS } from '../common/auth.decorators';
import { AuthService } from './auth.service';
import { reachesSession, type Principal } from '../common/principal';

/** What a route asks of its caller, from its decorators (the handler's over its controller's). */
interface RouteAuth {
  isPublic: boolean;
  required: Permission[];
  audited: AuditedRoute | null;
}

/** The routes that name one session: a session-scoped key reaches only its own (others are 404 to it). */
const SESSION_ROUTE = /^\/api\/v1\/sessions\/:id(?:$|[/\\:])/;
const SESSIONS_ROOT = '/api/v1/sessions';

/**
 * Global guard: every route needs a valid credential (Bearer or X-Api-Key) unless @Public(); then the route's
 * permissions (403), the key's address allow-list (403 `ip_not_allowed`) and its session scope (404). A refusal of an
 * @Audited route is recorded in the audit log of the caller's organization when the credential names one.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  /** Decorators are fixed once the app is built: read once per controller and handler, not twice per request. */
  private readonly routes = new WeakMap<object, WeakMap<object, RouteAuth>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
    private readonly apiKeys: ApiKeysRepository,
    private readonly audit: AuditTrail,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const route = this.routeAuth(ctx);
    if (route.isPublic) return true;
    const req = ctx.switchToHttp().getRequest();
    const token = requestToken(req.headers ?? {});
    if (!token) throw new DomainError('unauthorized', 'missing or invalid credentials');
    const keyHash = token.startsWith(API_KEY_PREFIX) ? requestTokenHash(req, token) : undefined;
    try {
      req.principal = await this.auth.authenticate(token, keyHash);
    } catch (err) {
      if (route.audited && keyHash && err instanceof DomainError) await this.recordRefusedKey(req, route.audited, keyHash);
      throw err;
    }
    const principal: Principal = req.principal;
    try {
      const missing = route.required.filter((p) => !principal.permissions.has(p));
      if (missing.length) throw new DomainError('forbidden', 'the caller lacks the needed capability', { required: missing });
      if (principal.allowedIps && !principal.allowedIps.contains(req.ip ?? '')) {
        throw new DomainError('forbidden', 'this API key may not be used from this address', { reason: 'ip_not_allowed' });
      }
    } catch (err) {
      if (route.audited) await this.audit.refused(principal.organizationId, auditContextOf(req), this.fact(req, route.audited));
      throw err;
    }
    if (principal.sessionIds) {
      const path: string | undefined = req.route?.path;
      if (path === SESSIONS_ROOT && req.method === 'POST') {
        if (route.audited) await this.audit.refused(principal.organizationId, auditContextOf(req), this.fact(req, route.audited));
        throw new DomainError('forbidden', 'a session-scoped API key cannot create sessions', { reason: 'session_scoped_key' });
      }
      if (path && SESSION_ROUTE.test(path) && !reachesSession(principal, req.params?.id ?? null)) {
        throw new DomainError('not_found', 'session not found', { id: req.params?.id });
      }
    }
    return true;
  }

  /** A revoked or expired key still names its organization: its owners see the attempt. An unknown token names none. */
  private async recordRefusedKey(req: { params?: Record<string, string> } & object, audited: AuditedRoute, keyHash: string): Promise<void> {
    const key = await this.apiKeys.findByTokenHash(keyHash).catch(() => null);
    if (key) await this.audit.refused(key.organizationId, auditContextOf(req as never, { type: 'apiKey', id: key.id, name: key.name }), this.fact(req, audited));
  }

  private fact(req: { params?: Record<string, string> }, audited: AuditedRoute) {
    return { action: audited.action, target: { type: audited.targetType, id: targetIdOf(req, audited) } };
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
        audited: this.reflector.getAllAndOverride<AuditedRoute>(AUDITED_ACTION, targets) ?? null,
      };
      byHandler.set(handler, route);
    }
    return route;
  }
}
