import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiConfig } from '@app/config';
import type { AuditOutcome } from '@app/contracts';
import { AuditFact, AuditLogRepository, newAuditEntry, type PendingAuditEntry } from '@app/database';
import type { AuditContext } from './audit-context';

/**
 * Writes the audit log (CONTRACT 14). A change's entry goes into the change's own transaction (`tx`), so a change
 * whose entry cannot be written rolls back with it; a refusal has no transaction of its own and is written alone,
 * best effort (a refusal changes nothing, and an audit outage must not turn a 403 into a 500). A change a gateway
 * carries out (a session started, a group's participants, a block) has no local transaction to join: its entry is
 * written when the gateway has confirmed it (`confirmed`), and a failure to write it is logged, not answered as a
 * failure of a change that happened (docs/security.md, "Audit log").
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

  /**
   * A successful change's entry for the repository to write in the change's own statement (foldAuditEntry): the
   * cheapest way to keep them together, no extra round trip. Null when the audit log is off.
   */
  pending(organizationId: string, ctx: AuditContext, fact: AuditFact): PendingAuditEntry | null {
    return this.config.AUDIT_LOG_ENABLED ? { organizationId, entry: newAuditEntry(ctx, fact, 'success') } : null;
  }

  /** Records a change a gateway confirmed, on its own. */
  async confirmed(organizationId: string, ctx: AuditContext, fact: AuditFact): Promise<void> {
    if (!this.config.AUDIT_LOG_ENABLED) return;
    await this.log.append(organizationId, newAuditEntry(ctx, fact, 'success')).catch((err: Error) => this.logger.error(`audit entry ${fact.action} (success) not written: ${err.message}`));
  }

  /** Records a refused or failed attempt, on its own. */
  async refused(organizationId: string, ctx: AuditContext, fact: AuditFact, outcome: Exclude<AuditOutcome, 'success'> = 'denied'): Promise<void> {
    if (!this.config.AUDIT_LOG_ENABLED) return;
    await this.log.append(organizationId, newAuditEntry(ctx, fact, outcome)).catch((err: Error) => this.logger.warn(`audit entry ${fact.action} (${outcome}) not written: ${err.message}`));
  }
}
