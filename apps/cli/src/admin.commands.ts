import type { BaseConfig } from '@app/config';
import { ALL_PERMISSIONS, PERMISSIONS, PLATFORM_OPERATE, PrincipalChange, QUOTA_RESOURCES, quotaExceeded, quotaLimit, QuotaOverrides, Role, ROLES } from '@app/contracts';
import { hashPassword, newApiKeyToken, sha256Hex } from '@app/crypto';
import { ApiKey, ApiKeysRepository, AuditFact, AuditLogRepository, Db, newAuditEntry, newId, OrganizationsRepository, User, UsersRepository, type Tx } from '@app/database';
import { Flags, UsageError } from './command-table';

export { UsageError };

/** What `org:create --with-key` and the bootstrap variables create: an organization, its owner, maybe a first key. */
export interface NewOrganization {
  name: string;
  ownerEmail: string;
  ownerPassword: string;
  /** a first API key with every permission, its token shown once */
  withKey: boolean;
  keyName?: string;
}

function need(flags: Flags, name: string): string {
  const v = flags[name];
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

function email(value: string): string {
  const e = value.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(e)) throw new UsageError('--email/--owner-email must be an email address');
  return e;
}

function password(value: string): string {
  if (value.length < 8) throw new UsageError('passwords must be at least 8 characters');
  return value;
}

/** Tells every API replica that a key or user changed (PrincipalChanges); called only after the change committed. */
export interface PrincipalAnnouncer {
  announce(change: PrincipalChange): Promise<void>;
}

function permissionList(flags: Flags): string[] {
  const permissions = need(flags, 'permissions').split(',').map((p) => p.trim()).filter(Boolean);
  const known = [...PERMISSIONS, ALL_PERMISSIONS] as string[];
  const unknown = permissions.filter((p) => !known.includes(p));
  if (unknown.length || permissions.length === 0) throw new UsageError(`--permissions must be a comma list of ${known.join(', ')}`);
  return permissions;
}

/** A boolean flag: `--platform-operator` alone or `--platform-operator true|false`. */
function flag(flags: Flags, name: string): boolean {
  const v = flags[name];
  if (v === undefined || v === 'false') return false;
  if (v === '' || v === 'true') return true;
  throw new UsageError(`--${name} takes no value (or true/false)`);
}

const userView = (u: User) => ({ id: u.id, organizationId: u.organizationId, email: u.email, role: u.role });

const keyView = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  tokenHint: `${k.tokenHint}…`,
  permissions: k.permissions,
  createdAt: k.createdAt.toISOString(),
  revokedAt: k.revokedAt ? k.revokedAt.toISOString() : null,
});

/** The admin CLI's commands (CONTRACT 3). Each returns the JSON printed on stdout. */
export class AdminCommands {
  private readonly organizations: OrganizationsRepository;
  private readonly users: UsersRepository;
  private readonly apiKeys: ApiKeysRepository;
  private readonly auditLog: AuditLogRepository;

  constructor(
    private readonly db: Db,
    private readonly principals: PrincipalAnnouncer,
    private readonly config: Pick<BaseConfig, 'quotaDefaults'>,
  ) {
    this.organizations = new OrganizationsRepository(db);
    this.users = new UsersRepository(db);
    this.apiKeys = new ApiKeysRepository(db);
    this.auditLog = new AuditLogRepository(db);
  }

  /** The organization's audit entry of a CLI change (actor `cli`), in the change's transaction. */
  private async audit(tx: Tx, organizationId: string, fact: AuditFact): Promise<void> {
    await this.auditLog.append(organizationId, newAuditEntry({ actor: { type: 'cli', id: 'cli', name: 'admin CLI' }, ip: null, userAgent: null, requestId: null }, fact, 'success'), tx);
  }

  /** The organization a key or user belongs to, or a usage error. */
  private async organizationOf(kind: 'apiKey' | 'user', id: string): Promise<string> {
    const row = kind === 'apiKey' ? await this.apiKeys.findById(id) : await this.users.findById(id);
    if (!row) throw new UsageError(`no ${kind === 'apiKey' ? 'API key' : 'user'} ${id}`);
    return row.organizationId;
  }

  async orgCreate(flags: Flags) {
    return this.createOrganization({
      name: need(flags, 'name').trim(),
      ownerEmail: email(need(flags, 'owner-email')),
      ownerPassword: password(need(flags, 'owner-password')),
      withKey: flags['with-key'] === 'true',
      keyName: flags['key-name'],
    });
  }

  /** One transaction: no organization without its owner, no owner without the key asked for. */
  async createOrganization(input: NewOrganization) {
    const ownerEmail = email(input.ownerEmail);
    const ownerPassword = password(input.ownerPassword);
    const passwordHash = await hashPassword(ownerPassword);
    return this.db.transaction(async (tx) => {
      await this.assertEmailFree(ownerEmail, tx);
      const org = await this.organizations.create({ id: newId('org'), name: input.name.trim(), createdAt: new Date() }, tx);
      const user = await this.users.create(
        {
          id: newId('usr'),
          organizationId: org.id,
          email: ownerEmail,
          passwordHash,
          role: 'owner' as Role,
          createdAt: new Date(),
          deletedAt: null,
        },
        tx,
      );
      const created = { organization: { id: org.id, name: org.name }, user: userView(user) };
      if (!input.withKey) return created;
      const apiKey = await this.issueKey(org.id, input.keyName || 'first key', [ALL_PERMISSIONS], tx);
      return { ...created, apiKey };
    });
  }

  /** `BOOTSTRAP_*`: the first organization, created once; later runs find its owner and change nothing. */
  async bootstrap(input: Omit<NewOrganization, 'withKey' | 'keyName'>) {
    if (await this.users.emailTaken(email(input.ownerEmail))) return { bootstrapped: false, reason: `a user with email ${input.ownerEmail} exists` };
    return { bootstrapped: true, ...(await this.createOrganization({ ...input, withKey: true, keyName: 'bootstrap' })) };
  }

  async orgList() {
    const orgs = await this.organizations.list();
    return { organizations: orgs.map((o) => ({ id: o.id, name: o.name, createdAt: o.createdAt.toISOString() })) };
  }

  /** Never the token (it is not stored): its first characters, to recognise it. */
  async apiKeyList(flags: Flags) {
    const orgId = need(flags, 'org');
    await this.assertOrg(orgId);
    const keys = await this.apiKeys.listByOrganization(orgId);
    return { apiKeys: keys.map(keyView) };
  }

  async userCreate(flags: Flags) {
    const orgId = need(flags, 'org');
    const role = need(flags, 'role') as Role;
    if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
    await this.assertOrg(orgId);
    const address = email(need(flags, 'email'));
    await this.assertEmailFree(address);
    const passwordHash = await hashPassword(password(need(flags, 'password')));
    const user = await this.db.transaction(async (tx) => {
      const created = await this.users.create({ id: newId('usr'), organizationId: orgId, email: address, passwordHash, role, createdAt: new Date(), deletedAt: null }, tx);
      await this.audit(tx, orgId, { action: 'member.create', target: { type: 'member', id: created.id }, changes: ['email', 'role', 'password'] });
      return created;
    });
    return { user: userView(user) };
  }

  async userDelete(flags: Flags) {
    const id = need(flags, 'id');
    const orgId = await this.organizationOf('user', id);
    await this.db.transaction(async (tx) => {
      if (!(await this.users.softDelete(id, tx))) throw new UsageError(`no live user ${id}`);
      await this.audit(tx, orgId, { action: 'member.remove', target: { type: 'member', id } });
    });
    await this.principals.announce({ kind: 'user', id });
    return { user: { id, deleted: true } };
  }

  async userRole(flags: Flags) {
    const id = need(flags, 'id');
    const role = need(flags, 'role') as Role;
    if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
    const orgId = await this.organizationOf('user', id);
    await this.db.transaction(async (tx) => {
      if (!(await this.users.changeRole(id, role, tx))) throw new UsageError(`no live user ${id}`);
      await this.audit(tx, orgId, { action: 'member.role', target: { type: 'member', id }, changes: ['role'] });
    });
    await this.principals.announce({ kind: 'user', id });
    return { user: { id, role } };
  }

  async apiKeyCreate(flags: Flags) {
    const orgId = need(flags, 'org');
    await this.assertOrg(orgId);
    const permissions = permissionList(flags);
    // fleet-wide data is granted only here, never by `*` nor by a role
    if (flag(flags, 'platform-operator')) permissions.push(PLATFORM_OPERATE);
    const name = need(flags, 'name');
    // counted and inserted under the organization's quota lock, like the API's creates
    return this.organizations.withQuotaLock(orgId, async (tx, overrides) => {
      const limit = quotaLimit(this.config.quotaDefaults, overrides, 'apiKeys');
      const used = await this.apiKeys.countUsableInOrganization(orgId, tx);
      if (used >= limit) throw quotaExceeded({ resource: 'apiKeys', limit, used, rule: 'quota' });
      const issued = await this.issueKey(orgId, name, permissions, tx);
      await this.audit(tx, orgId, { action: 'apikey.create', target: { type: 'apiKey', id: issued.id }, changes: ['name', 'permissions'] });
      return issued;
    });
  }

  private async issueKey(organizationId: string, name: string, permissions: string[], manager?: Tx) {
    const token = newApiKeyToken();
    const key = await this.apiKeys.create(
      {
        id: newId('key'),
        organizationId,
        name,
        tokenHash: sha256Hex(token),
        tokenHint: token.slice(0, 8),
        permissions,
        createdAt: new Date(),
        revokedAt: null,
        createdBy: 'cli',
      },
      manager,
    );
    return { id: key.id, name: key.name, token, permissions: key.permissions };
  }

  async apiKeyRevoke(flags: Flags) {
    const id = need(flags, 'id');
    const orgId = await this.organizationOf('apiKey', id);
    // idempotent: revoking a revoked key again announces again, and records nothing new
    await this.db.transaction(async (tx) => {
      if (await this.apiKeys.revoke(id, tx)) await this.audit(tx, orgId, { action: 'apikey.revoke', target: { type: 'apiKey', id } });
    });
    await this.principals.announce({ kind: 'apiKey', id });
    return { id, revoked: true };
  }

  /** Replaces a key's permissions (keeps `platform:operate` only with `--platform-operator`). */
  async apiKeyPermissions(flags: Flags) {
    const id = need(flags, 'id');
    const permissions = permissionList(flags);
    if (flag(flags, 'platform-operator')) permissions.push(PLATFORM_OPERATE);
    const orgId = await this.organizationOf('apiKey', id);
    await this.db.transaction(async (tx) => {
      if (!(await this.apiKeys.changePermissions(id, permissions, tx))) throw new UsageError(`no usable API key ${id}`);
      await this.audit(tx, orgId, { action: 'apikey.permissions', target: { type: 'apiKey', id }, changes: ['permissions'] });
    });
    await this.principals.announce({ kind: 'apiKey', id });
    return { id, permissions };
  }

  /** Sets an organization's own quotas (`default` puts one back to the deployment's default) and shows them. */
  async orgQuota(flags: Flags) {
    const orgId = need(flags, 'org');
    const flagOf: Record<(typeof QUOTA_RESOURCES)[number], string> = { sessions: 'sessions', webhooks: 'webhooks', apiKeys: 'api-keys' };
    const patch: Partial<QuotaOverrides> = {};
    for (const resource of QUOTA_RESOURCES) {
      const raw = flags[flagOf[resource]];
      if (raw === undefined) continue;
      if (raw === 'default') patch[resource] = null;
      else if (/^\d{1,7}$/.test(raw)) patch[resource] = Number(raw);
      else throw new UsageError(`--${flagOf[resource]} must be a whole number up to 9999999, or default`);
    }
    const overrides = await this.organizations.setQuotas(orgId, patch);
    if (!overrides) throw new UsageError(`no organization ${orgId}`);
    const effective = Object.fromEntries(QUOTA_RESOURCES.map((r) => [r, quotaLimit(this.config.quotaDefaults, overrides, r)]));
    return { organization: { id: orgId }, quotas: effective, overrides };
  }

  private async assertOrg(id: string): Promise<void> {
    if (!(await this.organizations.exists(id))) throw new UsageError(`no organization ${id}`);
  }

  private async assertEmailFree(address: string, manager?: Tx): Promise<void> {
    if (await this.users.emailTaken(address, manager)) throw new UsageError(`a user with email ${address} exists`);
  }
}
