import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditActor } from '@app/contracts';
import type { AuditSource } from '@app/database';
import type { Principal } from '../auth/principal';

/** Who made a request and from where, as its audit entries record it. */
export type AuditContext = AuditSource;

export const AUDITED_ACTION = 'audit:action';

/** What a state-changing route is in the audit log: its action and the type of its target (the `:id`/`:userId` param). */
export interface AuditedRoute {
  action: string;
  targetType: string;
}

/**
 * Marks a route of the management surface: its refusals (401 with a known credential, 403) are recorded under this
 * action by the auth guard; its service records the success in the change's transaction.
 */
export const Audited = (action: string, targetType: string) => SetMetadata(AUDITED_ACTION, { action, targetType } satisfies AuditedRoute);

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
