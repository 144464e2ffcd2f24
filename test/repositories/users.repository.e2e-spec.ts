import type { DataSource } from 'typeorm';
import { newId, User, UsersRepository } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization } from './rows';

describe('UsersRepository (PostgreSQL)', () => {
  let db: DataSource;
  let users: UsersRepository;
  let orgId: string;

  const newUser = (email: string, organizationId = orgId): Promise<User> =>
    users.create({ id: newId('usr'), organizationId, email, passwordHash: 'scrypt$x', role: 'member', createdAt: new Date(), deletedAt: null });

  beforeAll(async () => {
    db = await testDataSource();
    users = new UsersRepository(await testDb());
    orgId = await newOrganization(db);
  });
  afterAll(() => closeTestDataSource());

  it('finds a live user by email and within its organization only', async () => {
    const user = await newUser(`live.${orgId.slice(-8)}@example.test`.toLowerCase());
    expect((await users.findLiveByEmail(user.email))?.id).toBe(user.id);
    expect((await users.findLiveInOrganization(orgId, user.id))?.email).toBe(user.email);
    expect(await users.findLiveInOrganization(await newOrganization(db), user.id)).toBeNull();
  });

  it('a deleted user is found by nothing, frees its email, and is deleted once', async () => {
    const email = `gone.${orgId.slice(-8)}@example.test`.toLowerCase();
    const user = await newUser(email);
    expect(await users.emailTaken(email)).toBe(true);

    expect(await users.softDelete(user.id)).toBe(true);
    expect(await users.softDelete(user.id)).toBe(false);
    expect(await users.findLiveByEmail(email)).toBeNull();
    expect(await users.findLiveInOrganization(orgId, user.id)).toBeNull();
    expect(await users.emailTaken(email)).toBe(false);

    // the address can be given to someone new; the old row stays for the record
    await newUser(email);
    const [{ n }] = await db.query('SELECT count(*)::int AS n FROM users WHERE email = $1', [email]);
    expect(n).toBe(2);
  });
});
