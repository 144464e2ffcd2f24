import { Injectable, Logger } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import type { AuditEntry, AuditOutcome } from '@app/contracts';
import { AuditFact, AuditLogRepository, newAuditEntry, type PendingAuditEntry, type Tx } from '@app/database';
import type { AuditContext } from './audit-context';

/**
 * Writes the audit log (CONTRACT 14). A change's entry goes into the change's own transaction (`tx`), so a change
 * whose entry cannot be written rolls back with it. A change a gateway carries out (a session started, a group's
 * participants, a block) has no local transaction to join: its entry is written ahead of it (`ahead`; a failure to
 * write it fails the request before anything is sent) and settled by its answer. A refusal has no transaction of its
 * own and is written alone, best effort (a refusal changes nothing, and an audit outage must not turn a 403 into a
 * 500). docs/auth.md, "Where the entry is written".
 */
@Injectable()
export class AuditTrail {
  private readonly logger = new Logger(AuditTrail.name);

  constructor(
    private readonly log: AuditLogRepository,
    private readonly config: ApiConfig,
  ) {}

  /** Records a successful change inside its transaction. */
  async record(tx: Tx, organizationId: string, ctx: AuditContext, fact: AuditFact): Promise<void> {
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

  /**
   * Writes a change's entry ahead of it, for a change with no local transaction to join (one a gateway carries out):
   * a failure to write it is thrown, so the change is not attempted. Null when the audit log is off.
   */
  async ahead(organizationId: string, ctx: AuditContext, fact: AuditFact): Promise<AuditEntry | null> {
    if (!this.config.AUDIT_LOG_ENABLED) return null;
    const entry = newAuditEntry(ctx, fact, 'success');
    await this.log.append(organizationId, entry);
    return entry;
  }

  /**
   * Finishes an entry written ahead: the outcome of a change refused or failed, or a create's target. The change's
   * answer stands whatever becomes of this write (it is logged): the entry exists already.
   */
  async settle(organizationId: string, entry: AuditEntry, to: { outcome?: Exclude<AuditOutcome, 'success'>; targetId?: string | null }): Promise<void> {
    await this.log.settle(organizationId, entry.id, to).catch((err: Error) => this.logger.error(`audit entry ${entry.id} (${entry.action}) not settled ${JSON.stringify(to)}: ${err.message}`));
  }

  /** Takes back an entry written ahead of a request that was never attempted (invalid, or naming nothing). */
  async withdraw(organizationId: string, entry: AuditEntry): Promise<void> {
    await this.log.withdraw(organizationId, entry.id).catch((err: Error) => this.logger.warn(`audit entry ${entry.id} (${entry.action}) of a request never attempted not withdrawn: ${err.message}`));
  }

  /** Records a refused or failed attempt, on its own. */
  async refused(organizationId: string, ctx: AuditContext, fact: AuditFact, outcome: Exclude<AuditOutcome, 'success'> = 'denied'): Promise<void> {
    if (!this.config.AUDIT_LOG_ENABLED) return;
    await this.log.append(organizationId, newAuditEntry(ctx, fact, outcome)).catch((err: Error) => this.logger.warn(`audit entry ${fact.action} (${outcome}) not written: ${err.message}`));
  }
}
