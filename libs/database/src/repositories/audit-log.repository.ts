import { Injectable } from '@nestjs/common';
import type { AuditActor, AuditEntry, AuditOutcome } from '@app/contracts';
import { newId } from '../ids';
import { Db, type Queryable, preparedStatement } from '../pg';

/** Who acted and from where, as an entry records it. */
export interface AuditSource {
  actor: AuditActor;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

/** What one entry says beyond its source. */
export interface AuditFact {
  action: string;
  target: { type: string | null; id: string | null };
  /** the names of the fields a change touched, never their values */
  changes?: string[];
}

/** A new entry, now; `changes` sorted and without repeats. */
export function newAuditEntry(source: AuditSource, fact: AuditFact, outcome: AuditOutcome): AuditEntry {
  return {
    id: newId('aud'),
    at: new Date().toISOString(),
    actor: source.actor,
    action: fact.action,
    target: fact.target,
    outcome,
    ip: source.ip,
    userAgent: source.userAgent,
    requestId: source.requestId,
    changes: [...new Set(fact.changes ?? [])].sort(),
  };
}

/** An entry to be written by the statement of the change itself (`foldAuditEntry`). */
export interface PendingAuditEntry {
  organizationId: string;
  entry: AuditEntry;
}

/** The columns an entry writes, with the type of each parameter (a folded entry's SELECT needs them spelled out). */
const COLUMNS: Array<[column: string, type: string]> = [
  ['id', 'text'],
  ['organization_id', 'text'],
  ['at', 'timestamptz'],
  ['actor_type', 'text'],
  ['actor_id', 'text'],
  ['actor_name', 'text'],
  ['action', 'text'],
  ['target_type', 'text'],
  ['target_id', 'text'],
  ['outcome', 'text'],
  ['ip', 'text'],
  ['user_agent', 'text'],
  ['request_id', 'text'],
  ['changes', 'text[]'],
];
const COLUMN_LIST = COLUMNS.map(([c]) => c).join(', ');
const parameters = (from: number) => COLUMNS.map(([, type], i) => `$${from + i}::${type}`).join(', ');

const APPEND = preparedStatement('audit_log_append', `INSERT INTO audit_log (${COLUMN_LIST}) VALUES (${parameters(1)})`);

/** An entry's parameters, in COLUMNS' order. */
export const auditEntryValues = ({ organizationId, entry }: PendingAuditEntry): unknown[] => [
  entry.id,
  organizationId,
  entry.at,
  entry.actor.type,
  entry.actor.id,
  entry.actor.name,
  entry.action,
  entry.target.type,
  entry.target.id,
  entry.outcome,
  entry.ip,
  entry.userAgent,
  entry.requestId,
  entry.changes,
];

/**
 * Folds an audit entry into the statement of the change it records: `statement` (an INSERT, UPDATE or DELETE with
 * `RETURNING`, over `$1…$parameterCount`) runs as a data-modifying CTE and the entry is inserted only when it touched a
 * row, with the entry's parameters after the statement's. One statement, so one round trip and no transaction around
 * it: the change and its entry commit together or not at all, and a change that found nothing writes no entry.
 * The answer is the statement's RETURNING rows.
 */
export function foldAuditEntry(statement: string, parameterCount: number): string {
  return `WITH changed AS (${statement}),
       audit_entry AS (INSERT INTO audit_log (${COLUMN_LIST}) SELECT ${parameters(parameterCount + 1)} WHERE EXISTS (SELECT 1 FROM changed))
  SELECT * FROM changed`;
}

/** What the audit log can be filtered by; every field optional. */
export interface AuditFilter {
  actor?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  outcome?: AuditOutcome;
  from?: Date;
  to?: Date;
}

interface AuditColumns {
  id: string;
  at: Date;
  actor_type: AuditEntry['actor']['type'];
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: AuditOutcome;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  changes: string[];
}

const toEntry = (r: AuditColumns): AuditEntry => ({
  id: r.id,
  at: r.at.toISOString(),
  actor: { type: r.actor_type, id: r.actor_id, name: r.actor_name },
  action: r.action,
  target: { type: r.target_type, id: r.target_id },
  outcome: r.outcome,
  ip: r.ip,
  userAgent: r.user_agent,
  requestId: r.request_id,
  changes: r.changes,
});

/**
 * The audit log: append-only for every API (no route updates or deletes an entry), read newest first per organization.
 * Besides the retention sweep, two internal writes finish an entry written ahead of a change a gateway carries out
 * (`settle`, `withdraw`; docs/auth.md, "Where the entry is written").
 */
@Injectable()
export class AuditLogRepository {
  constructor(private readonly db: Db) {}

  /** `manager`: the change's own transaction, so the entry and the change commit or fail together. */
  async append(organizationId: string, entry: AuditEntry, manager: Queryable = this.db): Promise<void> {
    await manager.prepared(APPEND, auditEntryValues({ organizationId, entry }));
  }

  /**
   * Finishes an entry written ahead of its change: its outcome once the change was refused or failed, or the target
   * the change created (a create's id is in its answer).
   */
  async settle(organizationId: string, entryId: string, to: { outcome?: AuditOutcome; targetId?: string | null }): Promise<void> {
    await this.db.query(
      `UPDATE audit_log SET outcome = COALESCE($3, outcome), target_id = CASE WHEN $4::boolean THEN $5 ELSE target_id END
        WHERE organization_id = $1 AND id = $2`,
      [organizationId, entryId, to.outcome ?? null, to.targetId !== undefined, to.targetId ?? null],
    );
  }

  /** Takes back an entry written ahead of a change that was never attempted (the request was invalid or named nothing). */
  async withdraw(organizationId: string, entryId: string): Promise<void> {
    await this.db.query(`DELETE FROM audit_log WHERE organization_id = $1 AND id = $2`, [organizationId, entryId]);
  }

  /** Newest first; `cursor`: the last id of the previous page. */
  async page(organizationId: string, filter: AuditFilter, limit: number, cursor?: string): Promise<{ rows: AuditEntry[]; nextCursor: string | null }> {
    const where = ['organization_id = $1'];
    const values: unknown[] = [organizationId];
    const add = (sql: string, value: unknown) => {
      values.push(value);
      where.push(sql.replace('?', `$${values.length}`));
    };
    if (filter.actor) add('actor_id = ?', filter.actor);
    if (filter.action) add('action = ?', filter.action);
    if (filter.targetType) add('target_type = ?', filter.targetType);
    if (filter.targetId) add('target_id = ?', filter.targetId);
    if (filter.outcome) add('outcome = ?', filter.outcome);
    if (filter.from) add('at >= ?', filter.from);
    if (filter.to) add('at < ?', filter.to);
    if (cursor) add('id < ?', cursor);
    values.push(limit + 1);
    const rows = await this.db.query<AuditColumns>(`SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${values.length}`, values);
    const more = rows.length > limit;
    const slice = (more ? rows.slice(0, limit) : rows).map(toEntry);
    return { rows: slice, nextCursor: more ? slice[slice.length - 1].id : null };
  }

  /** Deletes entries older than `before`, at most `batch` at a time; returns how many went. */
  async deleteOlderThan(before: Date, batch: number): Promise<number> {
    const count = await this.db.affected(
      `DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 ORDER BY at LIMIT $2)`,
      [before, batch],
    );
    return count;
  }
}
