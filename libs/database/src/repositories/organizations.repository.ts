import { Injectable } from '@nestjs/common';
import type { QuotaOverrides, QuotaResource } from '@app/contracts';
import { Organization } from '../entities/organization.entity';
import { Db, EntityTable, type Queryable, type Tx } from '../pg';

const ORGANIZATIONS = new EntityTable(Organization);

const QUOTA_COLUMNS: Record<QuotaResource, string> = { sessions: 'quota_sessions', webhooks: 'quota_webhooks', apiKeys: 'quota_api_keys' };

interface QuotaColumns {
  quota_sessions: number | null;
  quota_webhooks: number | null;
  quota_api_keys: number | null;
}

const toOverrides = (r: QuotaColumns): QuotaOverrides => ({ sessions: r.quota_sessions, webhooks: r.quota_webhooks, apiKeys: r.quota_api_keys });

@Injectable()
export class OrganizationsRepository {
  constructor(private readonly db: Db) {}

  async create(org: Organization, tx?: Tx): Promise<Organization> {
    return ORGANIZATIONS.insert(tx ?? this.db, org);
  }

  async findById(id: string): Promise<Organization | null> {
    return ORGANIZATIONS.selectOne(this.db, 'id = $1', [id]);
  }

  async rename(id: string, name: string, tx?: Tx): Promise<void> {
    await (tx ?? this.db).query('UPDATE organizations SET name = $2 WHERE id = $1', [id, name]);
  }

  async exists(id: string): Promise<boolean> {
    return (await this.db.query('SELECT 1 FROM organizations WHERE id = $1', [id])).length > 0;
  }

  /** null when the organization does not exist. */
  async quotaOverrides(id: string, q: Queryable = this.db): Promise<QuotaOverrides | null> {
    const rows = await q.query<QuotaColumns>('SELECT quota_sessions, quota_webhooks, quota_api_keys FROM organizations WHERE id = $1', [id]);
    return rows[0] ? toOverrides(rows[0]) : null;
  }

  /** Sets the given figures (null: back to the default); returns the organization's overrides, null if it does not exist. */
  async setQuotas(id: string, patch: Partial<QuotaOverrides>): Promise<QuotaOverrides | null> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    for (const [resource, value] of Object.entries(patch) as [QuotaResource, number | null][]) {
      values.push(value);
      sets.push(`${QUOTA_COLUMNS[resource]} = $${values.length}`);
    }
    const sql = sets.length
      ? `UPDATE organizations SET ${sets.join(', ')} WHERE id = $1 RETURNING quota_sessions, quota_webhooks, quota_api_keys`
      : 'SELECT quota_sessions, quota_webhooks, quota_api_keys FROM organizations WHERE id = $1';
    const rows = await this.db.query<QuotaColumns>(sql, values);
    return rows[0] ? toOverrides(rows[0]) : null;
  }

  /**
   * Runs `fn` in a transaction holding the organization's quota lock (a transaction-scoped advisory lock), so a
   * count and the insert it allows are never interleaved with another create of the same organization: two
   * concurrent creates cannot both take the last slot. Organizations never wait on each other.
   */
  async withQuotaLock<T>(id: string, fn: (tx: Tx, overrides: QuotaOverrides | null) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('org-quota:' || $1, 0))`, [id]);
      return fn(tx, await this.quotaOverrides(id, tx));
    });
  }

  /** Every organization, oldest first (an operator's listing; there are few). */
  async list(): Promise<Organization[]> {
    return ORGANIZATIONS.select(this.db, 'true', [], 'ORDER BY created_at, id');
  }
}
