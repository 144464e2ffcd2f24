import { CallHandler, ExecutionContext, HttpException, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { catchError, concatMap, defer, from, Observable, switchMap, throwError } from 'rxjs';
import { AuditEntry, DomainError, ERROR_STATUS, type AuditOutcome } from '@app/contracts';
import type { Principal } from '../common/principal';
import { AUDITED_ACTION, AuditedRoute, auditContextOf, changedFields, targetIdOf } from './audit-context';
import { AuditTrail } from './audit-trail';

/** What a refusal by the domain (past the guard) is recorded as: a right lacking is denied, a state refusing it failed. */
const REFUSALS: Partial<Record<DomainError['code'], Exclude<AuditOutcome, 'success'>>> = { unauthorized: 'denied', forbidden: 'denied', conflict: 'failed' };

type Settlement = { outcome: Exclude<AuditOutcome, 'success'> } | 'never-attempted';

/**
 * What became of a change written ahead that answered an error: a refusal (401/403 denied, 409 failed) as above; a
 * failure of the server or of the gateway (5xx, or an error that is no HTTP answer) failed, since the change may have
 * been under way; any other 4xx (invalid input, a target that does not exist, a limit) was never attempted.
 */
function settlementOf(err: unknown): Settlement {
  if (err instanceof DomainError) {
    const refusal = REFUSALS[err.code];
    if (refusal) return { outcome: refusal };
    return ERROR_STATUS[err.code] >= 500 ? { outcome: 'failed' } : 'never-attempted';
  }
  if (err instanceof HttpException) return err.getStatus() >= 500 ? { outcome: 'failed' } : 'never-attempted';
  return { outcome: 'failed' };
}

type AuditedRequest = { principal?: Principal; params?: Record<string, string>; body?: unknown };

/**
 * The audit log's part at the route.
 * - `@Audited` (the service writes the success in the change's transaction): records the refusals the service makes (an
 *   escalation, a wrong current password, the last owner), beside those the guard records (a missing permission, an
 *   address not allowed).
 * - `@AuditedAhead` (a change a gateway carries out, or a service with no transaction to join): writes the entry before
 *   the handler runs, so a change whose entry cannot be written is never attempted (the request fails, nothing is sent
 *   to a gateway); then settles it by the answer: a create's target from the reply, a refusal or failure as its outcome,
 *   an invalid request withdrawn. One entry per request either way.
 */
@Injectable()
export class AuditRouteInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly audit: AuditTrail,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const audited = this.reflector.getAllAndOverride<AuditedRoute | undefined>(AUDITED_ACTION, [ctx.getHandler(), ctx.getClass()]);
    if (!audited) return next.handle();
    const req = ctx.switchToHttp().getRequest();
    const principal: Principal | undefined = req.principal;
    if (!principal) return next.handle();
    return audited.recordedBy === 'ahead' ? this.ahead(req, principal, audited, next) : this.refusalsOf(req, principal, audited, next);
  }

  /** A service-recorded route: its refusals, written on their own. */
  private refusalsOf(req: AuditedRequest, principal: Principal, audited: AuditedRoute, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((err: unknown) => {
        const outcome = err instanceof DomainError ? REFUSALS[err.code] : undefined;
        if (!outcome) return throwError(() => err);
        return from(this.audit.refused(principal.organizationId, auditContextOf(req as never), this.factOf(req, audited), outcome)).pipe(switchMap(() => throwError(() => err)));
      }),
    );
  }

  /** A route written ahead: the entry first (its failure fails the request before the handler runs), settled by the answer. */
  private ahead(req: AuditedRequest, principal: Principal, audited: AuditedRoute, next: CallHandler): Observable<unknown> {
    const organizationId = principal.organizationId;
    return defer(() => this.audit.ahead(organizationId, auditContextOf(req as never), { ...this.factOf(req, audited), changes: changedFields(req.body) })).pipe(
      concatMap((entry: AuditEntry | null) =>
        next.handle().pipe(
          concatMap(async (reply: unknown) => {
            if (entry && audited.targetField) {
              const id = (reply as Record<string, unknown> | null)?.[audited.targetField];
              await this.audit.settle(organizationId, entry, { targetId: typeof id === 'string' ? id : null });
            }
            return reply;
          }),
          catchError((err: unknown) => {
            if (!entry) return throwError(() => err);
            const settlement = settlementOf(err);
            const settled = settlement === 'never-attempted' ? this.audit.withdraw(organizationId, entry) : this.audit.settle(organizationId, entry, settlement);
            return from(settled).pipe(switchMap(() => throwError(() => err)));
          }),
        ),
      ),
    );
  }

  private factOf(req: AuditedRequest, audited: AuditedRoute) {
    return { action: audited.action, target: { type: audited.targetType, id: targetIdOf(req, audited) } };
  }
}
