import type { DataSource } from 'typeorm';
import { sha256Hex } from '@app/crypto';
import { ApiKey, ApiKeysRepository, newId } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization } from './rows';

describe('ApiKeysRepository (PostgreSQL)', () => {
  let db: DataSource;
  let keys: ApiKeysRepository;
  let orgId: string;

  const newKey = (token: string): Promise<ApiKey> =>
    keys.create({
      id: newId('key'),
      organizationId: orgId,
      name: 'spec',
      tokenHash: sha256Hex(token),
      tokenHint: token.slice(0, 8),
      permissions: ['sessions:read'],
      createdAt: new Date(),
      revokedAt: null,
    });

  beforeAll(async () => {
    db = await testDataSource();
    keys = new ApiKeysRepository(await testDb());
    orgId = await newOrganization(db);
  });
  afterAll(() => closeTestDataSource());

  it('finds a key by the hash of its token, with its permissions', async () => {
    const key = await newKey(`wak_${newId('key')}`);
    const found = await keys.findUsableByTokenHash(key.tokenHash);
    expect(found).toMatchObject({ id: key.id, organizationId: orgId, permissions: ['sessions:read'] });
    expect(await keys.findUsableByTokenHash(sha256Hex('wak_unknown'))).toBeNull();
  });

  it('lookup by hash ignores a revoked key; revoking again keeps the first revocation time', async () => {
    const key = await newKey(`wak_${newId('key')}`);
    await keys.revoke(key.id);
    expect(await keys.findUsableByTokenHash(key.tokenHash)).toBeNull();
    expect((await keys.findById(key.id))!.revokedAt).toBeInstanceOf(Date);

    const first = new Date('2025-01-01T00:00:00Z');
    await db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [key.id, first]);
    await keys.revoke(key.id);
    expect((await keys.findById(key.id))!.revokedAt).toEqual(first);
  });
});
