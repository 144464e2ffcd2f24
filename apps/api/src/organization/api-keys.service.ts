import { Injectable } from '@nestjs/common';
import { ALL_PERMISSIONS, DomainError, Permission, PERMISSIONS } from '@app/contracts';
import { newApiKeyToken, sha256Hex } from '@app/crypto';
import { ApiKey, ApiKeyPatch, ApiKeysRepository, newId, SessionsRepository, Db, type Tx } from '@app/database';
import { changedFields, type AuditContext } from '../audit/audit-context';
import { AuditTrail } from '../audit/audit-trail';
import type { Principal } from '../common/principal';
import { OrganizationQuotas } from '../limits/organization-quotas';
import type { ApiKeyResponse, CreateApiKeyDto, CreatedApiKeyResponse, UpdateApiKeyDto } from './dto/organization.dto';
import { PrincipalAnnouncer } from './principal-announcer';
import { assertHolds } from './rights';

const keyNotFound = (id: string) => new DomainError('not_found', 'API key not found', { id });

export const toApiKeyView = (k: ApiKey): ApiKeyResponse => ({
  id: k.id,
  name: k.name,
  permissions: k.permissions,
  sessionIds: k.sessionIds ?? null,
  allowedIps: k.allowedIps ?? null,
  expiresAt: k.expiresAt ? k.expiresAt.toISOString() : null,
  createdAt: k.createdAt.toISOString(),
  createdBy: k.createdBy ?? null,
  lastUsedAt: k.lastUsedAt ? k.lastUsedAt.toISOString() : null,
  tokenHint: `${k.tokenHint}…`,
});

/** What a saved permission list grants: `*` is every organization permission. */
const granted = (permissions: readonly string[]): Permission[] =>
  permissions.includes(ALL_PERMISSIONS) ? [...PERMISSIONS] : permissions.filter((p): p is Permission => (PERMISSIONS as readonly string[]).includes(p));


/**
 * API keys managed by their organization (CONTRACT 14). No escalation: a caller grants no permission and no session
 * it does not hold, and a key cannot outlive a caller key's own expiry. A change is announced to every replica after
 * it committed, so a revoked or narrowed key is refused at once and its sockets close.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly db: Db,
    private readonly keys: ApiKeysRepository,
    private readonly sessions: SessionsRepository,
    private readonly quotas: OrganizationQuotas,
    private readonly audit: AuditTrail,
    private readonly announcer: PrincipalAnnouncer,
  ) {}

  async list(organizationId: string): Promise<ApiKeyResponse[]> {
    return (await this.keys.listUsableByOrganization(organizationId)).map(toApiKeyView);
  }

  async create(p: Principal, ctx: AuditContext, body: CreateApiKeyDto): Promise<CreatedApiKeyResponse> {
    assertHolds(p, granted(body.permissions));
    const scope = await this.checkScope(p, { sessionIds: body.sessionIds ?? null, expiresAt: body.expiresAt ?? null }, true);
    const token = newApiKeyToken();
    const row: ApiKey = {
      id: newId('key'),
      organizationId: p.organizationId,
      name: body.name,
      tokenHash: sha256Hex(token),
      tokenHint: token.slice(0, 8),
      permissions: body.permissions,
      createdAt: new Date(),
      revokedAt: null,
      sessionIds: scope.sessionIds ?? null,
      allowedIps: body.allowedIps ?? null,
      expiresAt: scope.expiresAt ?? null,
      createdBy: `${p.kind}:${p.id}`,
      lastUsedAt: null,
    };
    const key = await this.quotas.admit(
      p.organizationId,
      'apiKeys',
      (tx) => this.keys.countUsableInOrganization(p.organizationId, tx),
      async (tx) => {
        const saved = await this.keys.create(row, tx);
        await this.audit.record(tx, p.organizationId, ctx, { action: 'apikey.create', target: { type: 'apiKey', id: row.id }, changes: changedFields(body) });
        return saved;
      },
    );
    return { ...toApiKeyView(key), token };
  }

  async update(p: Principal, ctx: AuditContext, id: string, body: UpdateApiKeyDto): Promise<ApiKeyResponse> {
    const updated = await this.db.transaction(async (tx) => {
      const key = await this.findManageable(p, id, tx);
      const patch: ApiKeyPatch = {};
      if (body.name !== undefined) patch.name = body.name;
      if (body.allowedIps !== undefined) patch.allowedIps = body.allowedIps;
      const scope = await this.checkScope(p, { sessionIds: body.sessionIds, expiresAt: body.expiresAt }, false);
      if (scope.sessionIds !== undefined) patch.sessionIds = scope.sessionIds;
      if (scope.expiresAt !== undefined) patch.expiresAt = scope.expiresAt;
      if (!(await this.keys.patch(id, patch, tx))) throw keyNotFound(id);
      await this.audit.record(tx, p.organizationId, ctx, { action: 'apikey.update', target: { type: 'apiKey', id }, changes: changedFields(body) });
      return { ...key, ...patch };
    });
    await this.announcer.announce({ kind: 'apiKey', id });
    return toApiKeyView(updated);
  }

  async revoke(p: Principal, ctx: AuditContext, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await this.findManageable(p, id, tx);
      if (!(await this.keys.revoke(id, tx))) throw keyNotFound(id);
      await this.audit.record(tx, p.organizationId, ctx, { action: 'apikey.revoke', target: { type: 'apiKey', id } });
    });
    await this.announcer.announce({ kind: 'apiKey', id });
  }

  /**
   * A key the caller may change: of its organization (404 otherwise), holding nothing the caller lacks, and, for a
   * session-scoped caller, reaching none but the caller's sessions (403: a narrower caller cannot retarget a wider key).
   */
  private async findManageable(p: Principal, id: string, tx: Tx): Promise<ApiKey> {
    const key = await this.keys.findUsableInOrganization(p.organizationId, id, tx);
    if (!key) throw keyNotFound(id);
    assertHolds(p, granted(key.permissions));
    if (p.sessionIds && (!key.sessionIds || key.sessionIds.some((s) => !p.sessionIds!.has(s)))) {
      throw new DomainError('forbidden', 'the caller cannot manage a key that reaches sessions it does not', { reason: 'escalation' });
    }
    return key;
  }

  /**
   * The sessions and expiry a caller may give a key: sessions of its organization (422 otherwise) and within its own
   * scope (403), an expiry in the future (422) and not past its own (403). `undefined` leaves a field unchanged (PATCH).
   */
  private async checkScope(
    p: Principal,
    want: { sessionIds?: string[] | null; expiresAt?: string | null },
    creating: boolean,
  ): Promise<{ sessionIds?: string[] | null; expiresAt?: Date | null }> {
    const out: { sessionIds?: string[] | null; expiresAt?: Date | null } = {};
    if (want.sessionIds !== undefined || (creating && p.sessionIds)) {
      const ids = want.sessionIds ?? null;
      if (p.sessionIds && (ids === null || ids.some((s) => !p.sessionIds!.has(s)))) {
        throw new DomainError('forbidden', 'the caller cannot grant a session it does not hold', { reason: 'escalation' });
      }
      if (ids) {
        const unknown: string[] = [];
        for (const s of ids) if (!(await this.sessions.existsInOrganization(p.organizationId, s))) unknown.push(s);
        if (unknown.length) throw new DomainError('validation_error', 'request is invalid', { fields: { sessionIds: [`not sessions of your organization: ${unknown.join(', ')}`] } });
      }
      out.sessionIds = ids;
    }
    if (want.expiresAt !== undefined || (creating && p.expiresAt !== null)) {
      const at = want.expiresAt ? new Date(want.expiresAt) : null;
      if (at && at.getTime() <= Date.now()) throw new DomainError('validation_error', 'request is invalid', { fields: { expiresAt: ['expiresAt must be in the future'] } });
      if (p.expiresAt !== null && (at === null || at.getTime() > p.expiresAt)) {
        throw new DomainError('forbidden', 'a key cannot outlive the key that creates it', { reason: 'escalation' });
      }
      out.expiresAt = at;
    }
    return out;
  }
}
