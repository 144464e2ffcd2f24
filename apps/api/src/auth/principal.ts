import type { Permission, Role } from '@app/contracts';

/** Who is calling: a person (login JWT) or a script (API key), always inside one organization. */
export interface Principal {
  kind: 'user' | 'apiKey';
  id: string;
  organizationId: string;
  role: Role | null;
  permissions: ReadonlySet<Permission>;
}
