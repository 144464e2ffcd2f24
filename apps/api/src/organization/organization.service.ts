import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { DomainError, quotaLimit } from '@app/contracts';
import { ApiKeysRepository, InvitationsRepository, OrganizationsRepository, SessionsRepository, UsersRepository, WebhooksRepository, Db } from '@app/database';
import type { AuditContext } from '../audit/audit-context';
import { AuditTrail } from '../audit/audit-trail';
import type { OrganizationResponse } from './dto/organization.dto';

/** The caller's organization: its name, quotas and what it holds. */
@Injectable()
export class OrganizationService {
  constructor(
    private readonly db: Db,
    private readonly config: ApiConfig,
    private readonly organizations: OrganizationsRepository,
    private readonly sessions: SessionsRepository,
    private readonly webhooks: WebhooksRepository,
    private readonly keys: ApiKeysRepository,
    private readonly users: UsersRepository,
    private readonly invitations: InvitationsRepository,
    private readonly audit: AuditTrail,
  ) {}

  async get(organizationId: string): Promise<OrganizationResponse> {
    const org = await this.organizations.findById(organizationId);
    const overrides = await this.organizations.quotaOverrides(organizationId);
    if (!org || !overrides) throw new DomainError('not_found', 'organization not found');
    const defaults = this.config.quotaDefaults;
    const [sessions, webhooks, apiKeys, members, invited] = await Promise.all([
      this.sessions.countInOrganization(organizationId),
      this.webhooks.countInOrganization(organizationId),
      this.keys.countUsableInOrganization(organizationId),
      this.users.countLiveInOrganization(organizationId),
      this.invitations.countPending(organizationId),
    ]);
    return {
      id: org.id,
      name: org.name,
      createdAt: org.createdAt.toISOString(),
      quotas: { sessions: quotaLimit(defaults, overrides, 'sessions'), webhooks: quotaLimit(defaults, overrides, 'webhooks'), apiKeys: quotaLimit(defaults, overrides, 'apiKeys'), members: null },
      usage: { sessions, webhooks, apiKeys, members: members + invited },
    };
  }

  async rename(organizationId: string, ctx: AuditContext, name: string): Promise<OrganizationResponse> {
    await this.db.transaction(async (tx) => {
      await this.organizations.rename(organizationId, name, tx);
      await this.audit.record(tx, organizationId, ctx, { action: 'organization.update', target: { type: 'organization', id: organizationId }, changes: ['name'] });
    });
    return this.get(organizationId);
  }
}
