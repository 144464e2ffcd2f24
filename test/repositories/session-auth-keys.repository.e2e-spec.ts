import type { DataSource } from 'typeorm';
import { newId, SessionAuthKey, SessionAuthKeysRepository } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession } from './rows';

describe('SessionAuthKeysRepository (PostgreSQL)', () => {
  let db: DataSource;
  let keys: SessionAuthKeysRepository;
  let orgId: string;

  const row = (sessionId: string, category: string, keyId: string, value: string): SessionAuthKey => ({
    sessionId,
    category,
    keyId,
    value,
    schemaVersion: 1,
    updatedAt: new Date(),
  });
  const values = async (sessionId: string) =>
    (await db.query('SELECT category, key_id, value FROM session_auth_keys WHERE session_id = $1 ORDER BY category, key_id', [sessionId])).map(
      (r: { category: string; key_id: string; value: string }) => `${r.category}/${r.key_id}=${r.value}`,
    );

  beforeAll(async () => {
    db = await testDataSource();
    keys = new SessionAuthKeysRepository(await testDb());
    orgId = await newOrganization(db);
  });
  afterAll(() => closeTestDataSource());

  it('upserts rows, the last of a key given twice winning, in batches beyond one statement', async () => {
    const { id } = await newSession(db, orgId);
    await keys.upsert([row(id, 'pre-key', '1', 'a'), row(id, 'pre-key', '1', 'b'), row(id, 'creds', '', 'c')]);
    expect(await values(id)).toEqual(['creds/=c', 'pre-key/1=b']);

    const many = Array.from({ length: 1200 }, (_, i) => row(id, 'pre-key', String(i), 'v'));
    await keys.upsert(many);
    expect(await keys.findMany(id, 'pre-key', ['1', '1', '1199', 'absent'])).toHaveLength(2);
    expect((await keys.find(id, 'creds', ''))?.value).toBe('c');
  });

  it('applies deletions and writes together, or not at all', async () => {
    const { id } = await newSession(db, orgId);
    await keys.upsert([row(id, 'session', 'x', 'old'), row(id, 'session', 'y', 'old')]);

    // the second write names a session that does not exist: the whole batch is refused
    await expect(keys.apply(id, new Map([['session', ['x']]]), [row(id, 'session', 'y', 'new'), row(newId('ses'), 'session', 'z', 'new')])).rejects.toThrow();
    expect(await values(id)).toEqual(['session/x=old', 'session/y=old']);

    await keys.apply(id, new Map([['session', ['x']]]), [row(id, 'session', 'y', 'new')]);
    expect(await values(id)).toEqual(['session/y=new']);
  });

  it('replaces a value only while it is still the one read', async () => {
    const { id } = await newSession(db, orgId);
    await keys.upsert([row(id, 'creds', '', 'v1')]);
    const read = (await keys.find(id, 'creds', ''))!;
    await keys.replaceValue(read, 'v1-resealed');
    expect((await keys.find(id, 'creds', ''))!.value).toBe('v1-resealed');

    // a newer write happened since `read`: it wins
    await keys.upsert([row(id, 'creds', '', 'v2')]);
    await keys.replaceValue(read, 'stale-reseal');
    expect((await keys.find(id, 'creds', ''))!.value).toBe('v2');
  });

  it('clears one session’s rows only', async () => {
    const a = (await newSession(db, orgId)).id;
    const b = (await newSession(db, orgId)).id;
    await keys.upsert([row(a, 'creds', '', 'a'), row(b, 'creds', '', 'b')]);
    await keys.clear(a);
    expect(await values(a)).toEqual([]);
    expect(await values(b)).toEqual(['creds/=b']);
  });
});
