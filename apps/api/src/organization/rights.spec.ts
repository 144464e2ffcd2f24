import { PERMISSIONS, ROLE_PERMISSIONS } from '@app/contracts';
import type { Principal } from '../common/principal';
import { assertHolds, assertMayHandleRole } from './rights';

const principal = (over: Partial<Principal>): Principal => ({
  kind: 'user',
  id: 'usr_1',
  organizationId: 'org_1',
  role: 'admin',
  permissions: new Set(ROLE_PERMISSIONS.admin),
  name: 'a@example.test',
  sessionIds: null,
  allowedIps: null,
  expiresAt: null,
  tokenVersion: 0,
  ...over,
});

describe('no escalation', () => {
  it('grants only what the caller holds', () => {
    const narrow = principal({ kind: 'apiKey', role: null, permissions: new Set(['apikeys:manage', 'sessions:read'] as const) });
    expect(() => assertHolds(narrow, ['sessions:read'])).not.toThrow();
    expect(() => assertHolds(narrow, ['webhooks:manage'])).toThrow(expect.objectContaining({ code: 'forbidden', details: { reason: 'escalation', missing: ['webhooks:manage'] } }));
  });

  it('only an owner (a person) handles owners; others handle the roles whose rights they hold', () => {
    const admin = principal({});
    const owner = principal({ role: 'owner', permissions: new Set(ROLE_PERMISSIONS.owner) });
    const everythingKey = principal({ kind: 'apiKey', role: null, permissions: new Set(PERMISSIONS) });
    const memberManager = principal({ kind: 'apiKey', role: null, permissions: new Set(['members:manage', 'sessions:read'] as const) });
    expect(() => assertMayHandleRole(owner, 'owner')).not.toThrow();
    expect(() => assertMayHandleRole(admin, 'owner')).toThrow(expect.objectContaining({ details: { reason: 'owner_only' } }));
    expect(() => assertMayHandleRole(everythingKey, 'owner')).toThrow(expect.objectContaining({ details: { reason: 'owner_only' } }));
    expect(() => assertMayHandleRole(admin, 'admin')).not.toThrow();
    expect(() => assertMayHandleRole(memberManager, 'viewer')).not.toThrow();
    expect(() => assertMayHandleRole(memberManager, 'member')).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });
});
