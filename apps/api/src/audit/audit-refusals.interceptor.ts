import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { catchError, from, Observable, switchMap, throwError } from 'rxjs';
import { DomainError, type AuditOutcome } from '@app/contracts';
import type { Principal } from '../auth/principal';
import { AUDITED_ACTION, AuditedRoute, auditContextOf } from './audit-context';
import { AuditTrail } from './audit-trail';

/** What a refusal by the domain (past the guard) is recorded as: a right lacking is denied, a state refusing it failed. */
const REFUSALS: Partial<Record<DomainError['code'], Exclude<AuditOutcome, 'success'>>> = { unauthorized: 'denied', forbidden: 'denied', conflict: 'failed' };

/**
 * Records the refusals a service makes on an @Audited route (an escalation, a wrong current password, the last owner),
 * beside those the guard records (a missing permission, an address not allowed). Successes are written by the
 * services themselves, inside their transactions.
 */
@Injectable()
export class AuditRefusalsInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly audit: AuditTrail,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const audited = this.reflector.getAllAndOverride<AuditedRoute | undefined>(AUDITED_ACTION, [ctx.getHandler(), ctx.getClass()]);
    if (!audited) return next.handle();
    const req = ctx.switchToHttp().getRequest();
    return next.handle().pipe(
      catchError((err: unknown) => {
        const principal: Principal | undefined = req.principal;
        const outcome = err instanceof DomainError ? REFUSALS[err.code] : undefined;
        if (!principal || !outcome) return throwError(() => err);
        const id = req.params?.userId ?? req.params?.id ?? null;
        return from(this.audit.refused(principal.organizationId, auditContextOf(req), { action: audited.action, target: { type: audited.targetType, id } }, outcome)).pipe(
          switchMap(() => throwError(() => err)),
        );
      }),
    );
  }
}
