import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { QuotaOverrides, QuotaResource } from '@app/contracts';
import { Organization } from '../entities/organization.entity';

const QUOTA_COLUMNS: Record<QuotaResource, string> = { sessions: 'quota_sessions', webhooks: 'quota_webhooks', apiKeys: 'quota_api_keys' };

interface QuotaColumns {
  quota_sessions: number | null;
  quota_webhooks: number | null;
  quota_api_keys: number | null;
}

const toOverrides = (r: QuotaColumns): QuotaOverrides => ({ sessions: r.quota_sessions, webhooks: r.quota_webhooks, apiKeys: r.quota_api_keys });

@Injectable()
export class OrganizationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private repo(manager: EntityManager = this.db.manager) {
    return manager.getRepository(Organization);
  }

  async create(org: Organization, manager?: EntityManager): Promise<Organization> {
    return this.repo(manager).save(org);
  }

  async findById(id: string): Promise<Organization | null> {
    return this.repo().findOne({ where: { id } });
  }

  async rename(id: string, name: string, manager?: EntityManager): Promise<void> {
    await this.repo(manager).update({ id }, { name });
  }

  async exists(id: string): Promise<boolean> {
    return this.repo().exists({ where: { id } });
  }

  /** null when the organization does not exist. */
  async quotaOverrides(id: string, manager: EntityManager = this.db.manager): Promise<QuotaOverrides | null> {
    const rows: QuotaColumns[] = await manager.query('SELECT quota_sessions, quota_webhooks, quota_api_keys FROM organizations WHERE id = $1', [id]);
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
    const result = await this.db.query(sql, values);
    // an UPDATE … RETURNING answers [rows, count] through the pg driver
    const rows: QuotaColumns[] = sets.length ? result[0] : result;
    return rows[0] ? toOverrides(rows[0]) : null;
  }

  /**
   * Runs `fn` in a transaction holding the organization's quota lock (a transaction-scoped advisory lock), so a
   * count and the insert it allows are never interleaved with another create of the same organization: two
   * concurrent creates cannot both take the last slot. Organizations never wait on each other.
   */
  async withQuotaLock<T>(id: string, fn: (tx: EntityManager, overrides: QuotaOverrides | null) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('org-quota:' || $1, 0))`, [id]);
      return fn(tx, await this.quotaOverrides(id, tx));
    });
  }

  /** Every organization, oldest first (an operator's listing; there are few). */
  async list(): Promise<Organization[]> {
    return this.repo().find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }
}
