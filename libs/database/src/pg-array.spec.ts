import { Client } from 'pg';
import { pgArray } from './pg-array';

describe('pgArray', () => {
  it('writes plain ids, numbers and nulls unquoted, and quotes everything else', () => {
    expect(pgArray(['dlv_01ABC', 'whk-1.2:3', null, undefined])).toBe('{dlv_01ABC,whk-1.2:3,NULL,NULL}');
    expect(pgArray([1, 2.5, null, Number.NaN])).toBe('{1,2.5,NULL,NULL}');
    expect(pgArray(['', 'null', 'a b', 'say "hi"', 'back\\slash', '{x,y}'])).toBe('{"","null","a b","say \\"hi\\"","back\\\\slash","{x,y}"}');
    expect(pgArray([])).toBe('{}');
  });

  // the literal must read back as the same values; PostgreSQL is the judge when it is reachable
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  it('round-trips through PostgreSQL', async () => {
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
    } catch {
      return; // no database here: the literal checks above still hold
    }
    try {
      const texts = ['dlv_1', null, '', 'NULL', 'a "quoted", {braced} \\ value', 'ünïcödé\nline', 'timed out'];
      const { rows } = await client.query('SELECT $1::text[] AS t, $2::float8[] AS f', [pgArray(texts), pgArray([1.5, null, 1763683200000])]);
      expect(rows[0].t).toEqual(texts);
      expect(rows[0].f).toEqual([1.5, null, 1763683200000]);
    } finally {
      await client.end();
    }
  });
});
