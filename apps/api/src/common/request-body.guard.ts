import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { DomainError } from '@app/contracts';

/** What a route takes as its body, from its decorators: none, one it may omit, or one it needs. */
export type RouteBody = 'none' | 'optional' | 'required';

const BODY_PREFIX = `${RouteParamtypes.BODY}:`;
/** Where @nestjs/swagger keeps a handler's @ApiBody (its DECORATORS.API_PARAMETERS, not exported by the package). */
const API_PARAMETERS = 'swagger/apiParameters';

/**
 * A handler's body, as its parameters (`@Body()`) and its OpenAPI description (`@ApiBody({ required: false })`) declare
 * it: the same metadata the document is built from, so what is enforced is what the document says.
 */
export function routeBody(controller: object, handler: Function): RouteBody { // eslint-disable-line @typescript-eslint/no-unsafe-function-type -- Nest hands handlers as Function
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {}) as Record<string, unknown>;
  if (!Object.keys(args).some((key) => key.startsWith(BODY_PREFIX))) return 'none';
  const described = (Reflect.getMetadata(API_PARAMETERS, handler) ?? []) as Array<{ in?: string; required?: boolean }>;
  return described.some((p) => p.in === 'body' && p.required === false) ? 'optional' : 'required';
}

/** The refusal of a body sent to an operation that takes none: each field named, as the validation pipe names unknown ones. */
export function bodylessRefusal(body: unknown): DomainError | null {
  if (body === undefined) return null;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return new DomainError('validation_error', 'request body must be empty or an empty JSON object', { fields: { body: ['this operation takes no body'] } });
  }
  const keys = Object.keys(body);
  if (keys.length === 0) return null;
  return new DomainError('validation_error', 'request is invalid', { fields: Object.fromEntries(keys.map((k) => [k, [`property ${k} should not exist`]])) });
}

/**
 * Global guard, after authentication: an operation without a body (`:block`, `:start`, a DELETE) refuses one with
 * fields, which the validation pipe cannot do for a handler with no `@Body()` to validate (`{}` and no body pass);
 * an operation whose body is optional (`:read`) takes a request with none as `{}`.
 */
@Injectable()
export class RequestBodyGuard implements CanActivate {
  /** Decorators are fixed once the app is built: read once per controller and handler. */
  private readonly routes = new WeakMap<object, WeakMap<object, RouteBody>>();

  canActivate(ctx: ExecutionContext): boolean {
    if (ctx.getType() !== 'http') return true;
    const kind = this.routeBody(ctx);
    if (kind === 'required') return true;
    const req = ctx.switchToHttp().getRequest<{ body?: unknown }>();
    if (kind === 'optional') {
      if (req.body === undefined) req.body = {};
      return true;
    }
    const refusal = bodylessRefusal(req.body);
    if (refusal) throw refusal;
    return true;
  }

  private routeBody(ctx: ExecutionContext): RouteBody {
    const controller = ctx.getClass();
    const handler = ctx.getHandler();
    let byHandler = this.routes.get(controller);
    if (!byHandler) this.routes.set(controller, (byHandler = new WeakMap()));
    let kind = byHandler.get(handler);
    if (kind === undefined) byHandler.set(handler, (kind = routeBody(controller, handler)));
    return kind;
  }
}
