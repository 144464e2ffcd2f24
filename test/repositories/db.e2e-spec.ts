import { Db, poolSettings, preparedStatement, type Tx } from '@app/database';

/** The pg layer every repository runs on (decision 84): its transactions, its statements, a connection lost. */
describe('Db (PostgreSQL)', () => {
  let db: Db;
  const table = `db_spec_${process.pid}`;

  beforeAll(async () => {
    db = Db.open(poolSettings(process.env.DATABASE_URL!, { max: 2 }));
    await db.query(`CREATE TABLE IF NOT EXISTS ${table} (id int PRIMARY KEY, note text)`);
  });
  afterAll(async () => {
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    await db.close();
  });

  it('commits what the work wrote when it resolves, and nothing when it throws', async () => {
    await db.transaction(async (tx) => void (await tx.query(`INSERT INTO ${table} VALUES (1, 'kept')`)));
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${table} VALUES (2, 'dropped')`);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await db.query<{ id: number }>(`SELECT id FROM ${table} ORDER BY id`)).toEqual([{ id: 1 }]);
  });

  it('answers rows, prepared rows and the count a write changed', async () => {
    const find = preparedStatement(`db_spec_find_${process.pid}`, `SELECT note FROM ${table} WHERE id = $1`);
    expect(await db.prepared<{ note: string }>(find, [1])).toEqual([{ note: 'kept' }]);
    expect(await db.affected(`UPDATE ${table} SET note = note WHERE id > $1`, [0])).toBe(1);
    expect(await db.query(`UPDATE ${table} SET note = 'again' WHERE id = 1 RETURNING id`)).toEqual([{ id: 1 }]);
  });

  it('refuses a statement on a transaction that has ended', async () => {
    let kept: Tx | null = null;
    await db.transaction(async (tx) => void (kept = tx));
    await expect(kept!.query('SELECT 1')).rejects.toThrow('statement on a transaction that has ended');
  });

  it('fails the transaction whose connection the server ends, without ending the process, and the pool goes on', async () => {
    await expect(
      db.transaction(async (tx) => {
        const [{ pid }] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // the other connection of the pool ends this one, as a restart or an idle-in-transaction timeout would
        await db.query('SELECT pg_terminate_backend($1)', [pid]);
        return tx.query('SELECT 1');
      }),
    ).rejects.toThrow();
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});
