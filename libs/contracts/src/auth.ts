/** Roles of a person in an organization (login JWT). */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** Permissions saved on an API key; also the capabilities a role grants. */
export const PERMISSIONS = [
  'sessions:read',
  'sessions:write',
  'groups:write',
  'messages:send',
  'webhooks:manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];
export const ALL_PERMISSIONS = '*';

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS,
  member: ['sessions:read', 'sessions:write', 'groups:write', 'messages:send'],
  viewer: ['sessions:read'],
};

/** API keys carry this prefix so they are told apart from JWTs without guessing. */
export const API_KEY_PREFIX = 'gwk_';
