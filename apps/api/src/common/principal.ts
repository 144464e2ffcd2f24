import type { Permission, Role } from '@app/contracts';
import type { AddressRanges } from '@app/net-guard';

/** Who is calling: a person (login JWT) or a script (API key), always inside one organization. */
export interface Principal {
  kind: 'user' | 'apiKey';
  id: string;
  organizationId: string;
  role: Role | null;
  permissions: ReadonlySet<Permission>;
  /** The user's email or the key's name, as the audit log shows the actor. */
  name: string;
  /** A session-scoped key's sessions: every other session is 404 to it. null: every session of the organization. */
  sessionIds: ReadonlySet<string> | null;
  /** A key's address allow-list; null: any address. */
  allowedIps: AddressRanges | null;
  /** A key's expiry, epoch ms; null: none. */
  expiresAt: number | null;
  /** A user's token version: a login JWT carrying another is refused (a password change moved it on). */
  tokenVersion: number;
}

/** Whether the principal may reach this session (an unscoped one reaches every session of its organization). */
export const reachesSession = (p: Principal, sessionId: string | null): boolean => p.sessionIds === null || (sessionId !== null && p.sessionIds.has(sessionId));
