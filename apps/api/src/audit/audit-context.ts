import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditActor } from '@app/contracts';
import type { AuditSource } from '@app/database';
import type { Principal } from '../common/principal';

/** Who made a request and from where, as its audit entries record it. */
export type AuditContext = AuditSource;

export const AUDITED_ACTION = 'audit:action';

/**
 * What a state-changing route is in the audit log: its action, the type of its target and where the target's id is
 * (the route's `targetParam`, by default `:userId` or `:id`; for a create, the answer's `targetField`).
 * `recordedBy`: `service` when the route's service writes the success entry in the change's own transaction;
 * `ahead` when the change is carried out elsewhere (a gateway command: there is no local transaction to join), so the
 * entry is written before the handler runs and settled by its answer (AuditRouteInterceptor).
 */
export interface AuditedRoute {
  action: string;
  targetType: string;
  targetParam?: string;
  targetField?: string;
  recordedBy: 'service' | 'ahead';
}

type TargetOptions = Pick<AuditedRoute, 'targetParam' | 'targetField'>;

/**
 * Marks a route of the management surface whose service records the success in the change's transaction; its refusals
 * (401 with a known credential, 403, 409) are recorded by the auth guard and the interceptor.
 */
export const Audited = (action: string, targetType: string, target: TargetOptions = {}) =>
  SetMetadata(AUDITED_ACTION, { action, targetType, ...target, recordedBy: 'service' } satisfies AuditedRoute);

/**
 * As @Audited, for a change a gateway carries out (or a service with no transaction to join): the entry is written
 * before the handler runs, so a change whose entry cannot be written is never attempted, and settled by its answer.
 */
export const AuditedAhead = (action: string, targetType: string, target: TargetOptions = {}) =>
  SetMetadata(AUDITED_ACTION, { action, targetType, ...target, recordedBy: 'ahead' } satisfies AuditedRoute);

/** The target id a request names: none for a create (its answer names it), the route's own param, else `:userId`, else `:id`. */
export function targetIdOf(req: { params?: Record<string, string> }, audited: AuditedRoute): string | null {
  if (audited.targetField) return null;
  if (audited.targetParam) return req.params?.[audited.targetParam] ?? null;
  return req.params?.userId ?? req.params?.id ?? null;
}

/** The names of the fields a body sets (never their values): what an entry's `changes` lists. */
export const changedFields = (body: unknown): string[] =>
  body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).filter((k) => (body as Record<string, unknown>)[k] !== undefined) : [];

export const actorOf = (p: Pick<Principal, 'kind' | 'id' | 'name'>): AuditActor => ({ type: p.kind, id: p.id, name: p.name });

type AuditedRequest = IncomingMessage & { ip?: string; principal?: Principal; res?: ServerResponse };

/** The request's context; `actor` the principal's, or the given one (a public route's: the user it acts for). */
export function auditContextOf(req: AuditedRequest, actor?: AuditActor): AuditContext {
  const ua = req.headers['user-agent'];
  const id = req.res?.getHeader('x-request-id');
  return {
    actor: actor ?? (req.principal ? actorOf(req.principal) : { type: 'system', id: null, name: null }),
    ip: req.ip ?? req.socket?.remoteAddress ?? null,
    userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null,
    requestId: typeof id === 'string' ? id : null,
  };
}

/** The request's audit context, for a controller to hand to its service. */
export const Audit = createParamDecorator((_: unknown, ctx: ExecutionContext): AuditContext => auditContextOf(ctx.switchToHttp().getRequest()));
