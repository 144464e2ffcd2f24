import { DomainError, Permission, Role, ROLE_PERMISSIONS } from '@app/contracts';
import type { Principal } from '../common/principal';

/**
 * No escalation (CONTRACT 14): a caller grants only what it holds itself. 403 `forbidden` naming what it lacks.
 */
export function assertHolds(p: Principal, permissions: Iterable<Permission>): void {
  const missing = [...permissions].filter((perm) => !p.permissions.has(perm));
  if (missing.length) throw new DomainError('forbidden', 'the caller cannot grant a right it does not hold', { reason: 'escalation', missing });
}

/**
 * May `p` put someone in `role`, or act on someone who is in it (change, remove, reset)? Only an owner (a person,
 * never a key) makes or unmakes owners; otherwise the caller must hold every permission of the role.
 */
export function assertMayHandleRole(p: Principal, role: Role): void {
  if (role === 'owner' && !(p.kind === 'user' && p.role === 'owner')) {
    throw new DomainError('forbidden', 'only an owner makes, unmakes or acts on owners', { reason: 'owner_only' });
  }
  assertHolds(p, ROLE_PERMISSIONS[role]);
}
