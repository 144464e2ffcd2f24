import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { newId, Organization, Session, SessionAuthKey, SessionAuthKeysRepository } from '@app/database';
import { SecretBox } from '@app/crypto';
import { createPgAuthStateStore, PgAuthStates } from '../apps/gateway/src/auth-state';
import { closeTestDataSource, testDataSource, testDb } from './support/seed';

/** The encrypted auth-state store against the run's real PostgreSQL database. */
describe('PostgreSQL auth-state store', () => {
  let db: DataSource;
  let keys: SessionAuthKeysRepository;
  let box: SecretBox;
  let orgId: string;

  const newSession = async (): Promise<string> => {
    const session = await db.getRepository(Session).save({
      id: newId('ses'),
      organizationId: orgId,
      createdByUserId: null,
      gatewayId: null,
      label: 'auth-state test',
      status: 'stopped',
    });
    return session.id;
  };

  const rawRows = (sessionId: string) =>
    db.query<{ category: string; key_id: string; value: string; schema_version: number }[]>(
      'SELECT category, key_id, value, schema_version FROM session_auth_keys WHERE session_id = $1 ORDER BY category, key_id',
      [sessionId],
    );

  beforeAll(async () => {
    db = await testDataSource();
    keys = new SessionAuthKeysRepository(await testDb());
    box = new SecretBox([Buffer.from(process.env.SECRET_ENCRYPTION_KEY!, 'base64')]);
    orgId = (await db.getRepository(Organization).save({ id: newId('org'), name: 'Auth state', createdAt: new Date() })).id;
  });

  afterAll(async () => {
    await closeTestDataSource();
  });

  it('round-trips creds and keys, Buffers and Uint8Arrays included', async () => {
    const store = createPgAuthStateStore(keys, box, await newSession());
    expect(await store.readCreds()).toBeNull();

    const noisePrivate = randomBytes(32);
    const creds = {
      noiseKey: { public: new Uint8Array(randomBytes(32)), private: noisePrivate },
      registrationId: 4242,
      advSecretKey: 'c2VjcmV0',
      me: { id: '491701234567:3@s.whatsapp.net', lid: '1234567890:3@lid' },
      registered: true,
      routingInfo: Buffer.from([1, 2, 3]),
      nested: { list: [Buffer.from('ab'), 7, null] },
    };
    await store.writeCreds(creds);
    const read = await store.readCreds<typeof creds>();
    expect(Buffer.isBuffer(read!.noiseKey.private)).toBe(true);
    expect(Buffer.compare(read!.noiseKey.private, noisePrivate)).toBe(0);
    expect(Buffer.from(read!.noiseKey.public).equals(Buffer.from(creds.noiseKey.public))).toBe(true);
    expect(read!.routingInfo).toEqual(Buffer.from([1, 2, 3]));
    expect(read!.nested.list).toEqual([Buffer.from('ab'), 7, null]);
    expect(read!.me).toEqual(creds.me);

    const preKey = { public: randomBytes(32), private: randomBytes(32) };
    const sessionBlob = new Uint8Array(randomBytes(64));
    await store.writeKeys({
      'pre-key': { '1': preKey, '2': { public: randomBytes(32), private: randomBytes(32) } },
      session: { '491701234567.0': sessionBlob },
      'sender-key-memory': { 'group@g.us': { '491701234567@s.whatsapp.net': true } },
    });
    const preKeys = await store.readKeys<typeof preKey>('pre-key', ['1', '2', '3']);
    expect(Object.keys(preKeys).sort()).toEqual(['1', '2']);
    expect(preKeys['1'].private.equals(preKey.private)).toBe(true);
    const sessions = await store.readKeys<Buffer>('session', ['491701234567.0']);
    expect(Buffer.from(sessions['491701234567.0']).equals(Buffer.from(sessionBlob))).toBe(true);
    expect(await store.readKeys('sender-key-memory', ['group@g.us'])).toEqual({
      'group@g.us': { '491701234567@s.whatsapp.net': true },
    });
    expect(await store.readKeys('pre-key', [])).toEqual({});
  });

  it('overwrites a key in place and deletes keys written as null', async () => {
    const sessionId = await newSession();
    const store = createPgAuthStateStore(keys, box, sessionId);
    await store.writeKeys({ 'pre-key': { '1': { v: 1 }, '2': { v: 2 }, '3': { v: 3 } } });
    await store.writeKeys({ 'pre-key': { '1': null, '2': { v: 22 } }, session: { gone: null } });
    expect(await store.readKeys('pre-key', ['1', '2', '3'])).toEqual({ '2': { v: 22 }, '3': { v: 3 } });
    expect((await rawRows(sessionId)).map((r) => `${r.category}/${r.key_id}`)).toEqual(['pre-key/2', 'pre-key/3']);
  });

  it('writes one row per key, sealed: the table holds no plaintext, and every row carries its schema version', async () => {
    const sessionId = await newSession();
    const store = createPgAuthStateStore(keys, box, sessionId);
    const marker = 'plaintext-marker-491701234567';
    const secretBytes = randomBytes(16);
    await store.writeCreds({ me: { id: marker }, secret: secretBytes });
    await store.writeKeys({ session: { [marker]: { note: marker } } });

    const rows = await rawRows(sessionId);
    expect(rows.map((r) => r.category)).toEqual(['creds', 'session']);
    for (const row of rows) {
      expect(row.value.startsWith('v1.')).toBe(true);
      expect(row.value).not.toContain(marker);
      expect(row.value).not.toContain(secretBytes.toString('base64'));
      expect(row.value).not.toContain(secretBytes.toString('hex'));
      expect(row.schema_version).toBe(1);
    }
    // tampering is detected, not decoded into garbage
    const sealed = rows[0].value.split('.');
    sealed[4] = (sealed[4][0] === 'A' ? 'B' : 'A') + sealed[4].slice(1);
    await db.query(`UPDATE session_auth_keys SET value = $2 WHERE session_id = $1 AND category = 'creds'`, [sessionId, sealed.join('.')]);
    await expect(store.readCreds()).rejects.toThrow(/cannot be decrypted/);
  });

  it("a gateway's stores read the creds of many sessions in one statement, each session its own (a failover's connects)", async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => newSession()));
    // the last session has never paired: no creds row
    await Promise.all(ids.slice(0, 4).map((id, i) => createPgAuthStateStore(keys, box, id).writeCreds({ who: i })));
    const statements: string[][] = [];
    const counted = Object.assign(Object.create(keys) as SessionAuthKeysRepository, {
      findOfSessions: (sessionIds: readonly string[], category: string, keyId: string) => {
        statements.push([...sessionIds]);
        return keys.findOfSessions(sessionIds, category, keyId);
      },
    });
    const states = new PgAuthStates(counted, box);
    const read = await Promise.all(ids.map((id) => states.forSession(id).readCreds()));
    expect(read).toEqual([{ who: 0 }, { who: 1 }, { who: 2 }, { who: 3 }, null]);
    expect(statements).toEqual([ids]);
    // a write is read back by the next read (nothing is cached)
    await states.forSession(ids[4]).writeCreds({ who: 4 });
    expect(await states.forSession(ids[4]).readCreds()).toEqual({ who: 4 });
  });

  it('clear() wipes the session and nothing else; two sessions never see each other', async () => {
    const a = createPgAuthStateStore(keys, box, await newSession());
    const b = createPgAuthStateStore(keys, box, await newSession());
    await a.writeCreds({ who: 'a' });
    await b.writeCreds({ who: 'b' });
    await a.writeKeys({ 'pre-key': { '1': { who: 'a' } } });
    await b.writeKeys({ 'pre-key': { '1': { who: 'b' } } });

    expect(await a.readCreds()).toEqual({ who: 'a' });
    expect(await b.readKeys('pre-key', ['1'])).toEqual({ '1': { who: 'b' } });

    await a.clear();
    expect(await a.readCreds()).toBeNull();
    expect(await a.readKeys('pre-key', ['1'])).toEqual({});
    expect(await rawRows(a.sessionId)).toEqual([]);
    expect(await b.readCreds()).toEqual({ who: 'b' });
    expect(await b.readKeys('pre-key', ['1'])).toEqual({ '1': { who: 'b' } });
  });

  it('reads values sealed with a previous key after rotation, and re-seals them with the current key', async () => {
    const sessionId = await newSession();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = createPgAuthStateStore(keys, new SecretBox([oldKey]), sessionId);
    await before.writeCreds({ me: { id: '491701234567@s.whatsapp.net' }, key: Buffer.from('k') });
    await before.writeKeys({ session: { s1: { blob: Buffer.from('s') } } });

    // a box without the old key cannot read the state at all
    const withoutOld = createPgAuthStateStore(keys, new SecretBox([newKey]), sessionId);
    await expect(withoutOld.readCreds()).rejects.toThrow(/cannot be decrypted/);

    const rotated = createPgAuthStateStore(keys, new SecretBox([newKey, oldKey]), sessionId);
    expect(await rotated.readCreds()).toEqual({ me: { id: '491701234567@s.whatsapp.net' }, key: Buffer.from('k') });
    expect(await rotated.readKeys('session', ['s1'])).toEqual({ s1: { blob: Buffer.from('s') } });

    // once read, the rows are sealed with the new key: the old one can be retired
    const rows = await rawRows(sessionId);
    expect(rows.map((r) => r.value.split('.')[1])).toEqual([SecretBox.keyId(newKey), SecretBox.keyId(newKey)]);
    expect(await withoutOld.readCreds()).toEqual({ me: { id: '491701234567@s.whatsapp.net' }, key: Buffer.from('k') });
  });

  it('writes a large batch (hundreds of pre-keys, as Baileys uploads them) in one call', async () => {
    const sessionId = await newSession();
    const store = createPgAuthStateStore(keys, box, sessionId);
    const batch: Record<string, unknown> = {};
    for (let id = 1; id <= 1200; id += 1) batch[String(id)] = { public: randomBytes(32), private: randomBytes(32) };
    await store.writeKeys({ 'pre-key': batch });
    const [{ count }] = await db.query('SELECT count(*)::int AS count FROM session_auth_keys WHERE session_id = $1', [sessionId]);
    expect(count).toBe(1200);
    const some = await store.readKeys<{ public: Buffer }>('pre-key', ['1', '600', '1200']);
    expect(Object.keys(some).sort()).toEqual(['1', '1200', '600']);
    expect(some['600'].public.equals((batch['600'] as { public: Buffer }).public)).toBe(true);
  });

  it('is removed with its session (the rows belong to the session)', async () => {
    const sessionId = await newSession();
    await createPgAuthStateStore(keys, box, sessionId).writeCreds({ x: 1 });
    await db.getRepository(Session).delete({ id: sessionId });
    expect(await db.getRepository(SessionAuthKey).countBy({ sessionId })).toBe(0);
  });
});
