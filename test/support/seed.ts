import { DataSource } from 'typeorm';
import { ApiKey, dataSourceOptions, Db, newId, Organization, poolSettings, Session, User } from '@app/database';
import { hashPassword, newApiKeyToken, sha256Hex } from '@app/crypto';
import type { Permission, Role } from '@app/contracts';
import { signAccessToken } from '../../apps/api/src/auth/access-token';

/**
 * Seeds an organization the way the admin CLI would, so an e2e test reads like a user story:
 * one user of each role (with a login JWT) and API keys.
 */
export interface SeededUser {
  id: string;
  email: string;
  password: string;
  role: Role;
  /** a valid login JWT for this user */
  token: string;
}

export interface SeededOrg {
  id: string;
  name: string;
  users: Record<Role, SeededUser>;
  /** API key token with every permission ('*') */
  adminKey: string;
  /** creates an API key with exactly these permissions */
  apiKey(permissions: (Permission | '*')[]): Promise<{ id: string; token: string }>;
}

let ds: DataSource | null = null;
let pool: Db | null = null;

/** The test database through the pool the repositories run on (closed with the data source). */
export async function testDb(): Promise<Db> {
  return (pool ??= Db.open(poolSettings(process.env.DATABASE_URL!, { max: 4 })));
}

export async function testDataSource(): Promise<DataSource> {
  if (!ds) {
    ds = new DataSource(dataSourceOptions(process.env.DATABASE_URL!, { extra: { max: 4 } }));
    await ds.initialize();
  }
  return ds;
}

export async function closeTestDataSource(): Promise<void> {
  if (ds) await ds.destroy();
  ds = null;
  await pool?.close();
  pool = null;
}

const jwtSecret = () => process.env.JWT_SECRET!;

export async function seedOrganization(name = 'Acme'): Promise<SeededOrg> {
  const db = await testDataSource();
  const org = await db.getRepository(Organization).save({ id: newId('org'), name, createdAt: new Date() });
  const tag = org.id.slice(-8).toLowerCase();
  const users = {} as Record<Role, SeededUser>;
  for (const role of ['owner', 'admin', 'member', 'viewer'] as Role[]) {
    const password = `pw-${role}-${tag}`;
    const user = await db.getRepository(User).save({
      id: newId('usr'),
      organizationId: org.id,
      email: `${role}.${tag}@example.test`,
      passwordHash: await hashPassword(password),
      role,
      createdAt: new Date(),
      deletedAt: null,
    });
    users[role] = {
      id: user.id,
      email: user.email,
      password,
      role,
      token: signAccessToken({ sub: user.id, org: org.id, role }, jwtSecret(), 3600),
    };
  }
  const apiKey = async (permissions: (Permission | '*')[]) => {
    const token = newApiKeyToken();
    const key = await db.getRepository(ApiKey).save({
      id: newId('key'),
      organizationId: org.id,
      name: `test-${permissions.join('+')}`,
      tokenHash: sha256Hex(token),
      tokenHint: token.slice(0, 8),
      permissions,
      createdAt: new Date(),
      revokedAt: null,
    });
    return { id: key.id, token };
  };
  const adminKey = (await apiKey(['*'])).token;
  return { id: org.id, name: org.name, users, adminKey, apiKey };
}

/** A session row on no gateway, stopped: something real to address by id without a gateway running. */
export async function seedStoppedSession(organizationId: string, label: string): Promise<Session> {
  const db = await testDataSource();
  return db.getRepository(Session).save({
    id: newId('ses'),
    organizationId,
    createdByUserId: null,
    gatewayId: null,
    label,
    status: 'stopped',
    desiredState: 'stopped',
  } as Partial<Session>);
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
