import { newId, OrganizationsRepository } from '@app/database';
import { closeTestDataSource, testDb } from '../support/seed';

describe('OrganizationsRepository (PostgreSQL)', () => {
  let organizations: OrganizationsRepository;

  beforeAll(async () => {
    organizations = new OrganizationsRepository(await testDb());
  });
  afterAll(() => closeTestDataSource());

  it('knows an organization once created, and no other', async () => {
    const org = await organizations.create({ id: newId('org'), name: 'Known', createdAt: new Date() });
    expect(await organizations.exists(org.id)).toBe(true);
    expect(await organizations.exists(newId('org'))).toBe(false);
  });

  it('creates inside the caller’s transaction: a rollback leaves no organization', async () => {
    const id = newId('org');
    await expect(
      (await testDb()).transaction(async (tx) => {
        await organizations.create({ id, name: 'Rolled back', createdAt: new Date() }, tx);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await organizations.exists(id)).toBe(false);
  });
});
