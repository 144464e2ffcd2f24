import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiConfig } from '@app/config';
import type { AuditOutcome } from '@app/contracts';
import { AuditFact, AuditLogRepository, newAuditEntry } from '@app/database';
import type { AuditContext } from './audit-context';

/**
 * Writes the audit log (CONTRACT 14). A change's entry goes into the change's own transaction (`tx`), so a change
 * whose entry cannot be written rolls back with it; a refusal has no transaction of its own and is written alone,
 * best effort (a refusal changes nothing, and an audit outage must not turn a 403 into a 500).
 */
@Injectable()
export class AuditTrail {
  private readonly logger = new Logger(AuditTrail.name);

  constructor(
    private readonly log: AuditLogRepository,
    private readonly config: ApiConfig,
  ) {}

  /** Records a successful change inside its transaction. */
  async record(tx: EntityManager, organizationId: string, ctx: AuditContext, fact: AuditFact): Promise<void> {
    if (!this.config.AUDIT_LOG_ENABLED) return;
    await this.log.append(organizationId, newAuditEntry(ctx, fact, 'success'), tx);
  }

  /** Records a refused or failed attempt, on its own. */
  async refused(organizationId: string, ctx: AuditContext, fact: AuditFact, outcome: Exclude<AuditOutcome, 'success'> = 'denied'): Promise<void> {
    if (!this.config.AUDIT_LOG_ENABLED) return;
    await this.log.append(organizationId, newAuditEntry(ctx, fact, outcome)).catch((err: Error) => this.logger.warn(`audit entry ${fact.action} (${outcome}) not written: ${err.message}`));
  }

}
