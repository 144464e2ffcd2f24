import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { DomainError, quotaExceeded, quotaLimit, QuotaOverrides, QuotaResource } from '@app/contracts';
import { OrganizationsRepository, type Tx } from '@app/database';

/** What an organization may hold of a fleet of `fleetCapacity` sessions: its fair share, never less than one. */
export function fleetShare(fleetCapacity: number, percent: number): number {
  return Math.max(1, Math.floor((fleetCapacity * percent) / 100));
}

/** Counts the organization's holdings of a resource inside the quota lock's transaction. */
export type QuotaCount = (tx: Tx) => Promise<number>;

/**
 * Quotas per organization (docs/api.md, Quotas). Each create counts and inserts under the organization's quota
 * lock, so the last slot goes to exactly one of two concurrent creates; over quota is 403 `forbidden` with
 * `details.quota`, before anything is written.
 */
@Injectable()
export class OrganizationQuotas {
  constructor(
    private readonly config: ApiConfig,
    private readonly organizations: OrganizationsRepository,
  ) {}

  async admit<T>(organizationId: string, resource: QuotaResource, count: QuotaCount, insert: (tx: Tx) => Promise<T>): Promise<T> {
    return this.organizations.withQuotaLock(organizationId, async (tx, overrides) => {
      await this.assertRoom(tx, overrides, resource, count);
      return insert(tx);
    });
  }

  /**
   * A session also takes a slot of the shared fleet: after its own quota, the organization's holdings are held to
   * its fair share of the live capacity (QUOTA_FLEET_SHARE_PERCENT). `place` answers 503 itself when the fleet is
   * full or gone. Everything runs on the lock's transaction (`tx`): a second pooled connection asked for while this one
   * is held deadlocks a burst of creates (test/quota-admission.e2e-spec.ts).
   */
  async admitSession<P extends { fleetCapacity: number }, T>(
    organizationId: string,
    count: QuotaCount,
    place: (tx: Tx) => Promise<P>,
    insert: (tx: Tx, placement: P) => Promise<T>,
  ): Promise<T> {
    return this.organizations.withQuotaLock(organizationId, async (tx, overrides) => {
      const used = await this.assertRoom(tx, overrides, 'sessions', count);
      const placement = await place(tx);
      const share = fleetShare(placement.fleetCapacity, this.config.QUOTA_FLEET_SHARE_PERCENT);
      if (used >= share) throw quotaExceeded({ resource: 'sessions', limit: share, used, rule: 'fleet_share' });
      return insert(tx, placement);
    });
  }

  private async assertRoom(tx: Tx, overrides: QuotaOverrides | null, resource: QuotaResource, count: QuotaCount): Promise<number> {
    if (!overrides) throw new DomainError('forbidden', 'the organization does not exist');
    const limit = quotaLimit(this.config.quotaDefaults, overrides, resource);
    const used = await count(tx);
    if (used >= limit) throw quotaExceeded({ resource, limit, used, rule: 'quota' });
    return used;
  }
}
