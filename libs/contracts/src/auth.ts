/** Roles of a person in an organization (login JWT). */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** Permissions inside one organization, saved on an API key; also the capabilities a role grants. `*` means all of these. */
export const PERMISSIONS = [
  'sessions:read',
  'sessions:write',
  'groups:write',
  'messages:send',
  'webhooks:manage',
  'members:manage',
  'apikeys:manage',
  'audit:read',
] as const;
export type OrganizationPermission = (typeof PERMISSIONS)[number];
export const ALL_PERMISSIONS = '*';

/**
 * Fleet-wide data (every gateway, every organization's load) is the platform operator's, not a tenant's: no role
 * grants it and `*` does not include it; only the admin CLI puts it on a key (`apikey:create --platform-operator`).
 */
export const PLATFORM_OPERATE = 'platform:operate';
export type Permission = OrganizationPermission | typeof PLATFORM_OPERATE;

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS,
  member: ['sessions:read', 'sessions:write', 'groups:write', 'messages:send'],
  viewer: ['sessions:read'],
};

/** API keys carry this prefix so they are told apart from JWTs without guessing. */
export const API_KEY_PREFIX = 'gwk_';

/** Redis pub/sub channel (under the deployment prefix) of `PrincipalChanges`: a key or a user changed. */
export const PRINCIPAL_CHANGED_CHANNEL = 'principals:changed';

/** What changed: an API key (revoked, permissions changed) or a user (deleted, role changed). */
export interface PrincipalChange {
  kind: 'apiKey' | 'user';
  id: string;
}
