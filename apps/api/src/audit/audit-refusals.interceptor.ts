import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { catchError, from, map, Observable, switchMap, throwError } from 'rxjs';
import { DomainError, type AuditOutcome } from '@app/contracts';
import type { Principal } from '../auth/principal';
import { AUDITED_ACTION, AuditedRoute, auditContextOf, changedFields, targetIdOf } from './audit-context';
import { AuditTrail } from './audit-trail';

/** What a refusal by the domain (past the guard) is recorded as: a right lacking is denied, a state refusing it failed. */
const REFUSALS: Partial<Record<DomainError['code'], Exclude<AuditOutcome, 'success'>>> = { unauthorized: 'denied', forbidden: 'denied', conflict: 'failed' };

/**
 * The audit log's part at the route: records the refusals a service makes on an audited route (an escalation, a wrong
 * current password, the last owner), beside those the guard records (a missing permission, an address not allowed);
 * and, for a route recorded by the route (a change a gateway carries out), its success once the route answers.
 * Other successes are written by the services themselves, inside their transactions.
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
    const answered = audited.recordedBy === 'route' ? next.handle().pipe(switchMap((reply: unknown) => from(this.confirmed(req, audited, reply)).pipe(map(() => reply)))) : next.handle();
    return answered.pipe(
      catchError((err: unknown) => {
        const principal: Principal | undefined = req.principal;
        const outcome = err instanceof DomainError ? REFUSALS[err.code] : undefined;
        if (!principal || !outcome) return throwError(() => err);
        return from(this.audit.refused(principal.organizationId, auditContextOf(req), { action: audited.action, target: { type: audited.targetType, id: targetIdOf(req, audited) } }, outcome)).pipe(
          switchMap(() => throwError(() => err)),
        );
      }),
    );
  }

  /** The success entry of a change the gateway confirmed; the target of a create is in the answer. */
  private async confirmed(req: { principal?: Principal; params?: Record<string, string>; body?: unknown }, audited: AuditedRoute, reply: unknown): Promise<void> {
    const principal = req.principal;
    if (!principal) return;
    const id = audited.targetField ? ((reply as Record<string, unknown> | null)?.[audited.targetField] ?? null) : targetIdOf(req, audited);
    await this.audit.confirmed(principal.organizationId, auditContextOf(req as never), {
      action: audited.action,
      target: { type: audited.targetType, id: typeof id === 'string' ? id : null },
      changes: changedFields(req.body),
    });
  }
}
