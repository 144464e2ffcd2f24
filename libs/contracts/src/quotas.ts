import { DomainError } from './errors';

/** What an organization's quotas count. */
export const QUOTA_RESOURCES = ['sessions', 'webhooks', 'apiKeys'] as const;
export type QuotaResource = (typeof QUOTA_RESOURCES)[number];

/** An organization's own figures (null: the deployment's default). */
export type QuotaOverrides = Record<QuotaResource, number | null>;

/** The deployment's default of each resource; an organization's own figure wins. */
export function quotaLimit(defaults: Record<QuotaResource, number>, overrides: QuotaOverrides | null, resource: QuotaResource): number {
  return overrides?.[resource] ?? defaults[resource];
}

/** `details.quota` of a 403 over quota. */
export interface QuotaUsage {
  resource: QuotaResource;
  limit: number;
  used: number;
  /** `fleet_share` when the organization's share of the shared fleet, not its own quota, is what ran out */
  rule: 'quota' | 'fleet_share';
}

export function quotaExceeded(usage: QuotaUsage): DomainError {
  const what = usage.rule === 'fleet_share' ? `its share of the gateway fleet (${usage.limit} sessions)` : `its ${usage.resource} quota (${usage.limit})`;
  return new DomainError('forbidden', `the organization has reached ${what}`, { quota: usage });
}
