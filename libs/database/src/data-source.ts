import { Client, type PoolConfig } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

/**
 * The pg pool's settings for a DATABASE_URL: the default pool (`max: 10`) with `extra` laid over it. One source for both
 * pools of a process, TypeORM's data source (`dataSourceOptions`) and `Db` (`DatabaseModule`).
 */
export function poolSettings(databaseUrl: string, extra: PoolConfig = {}): PoolConfig {
  return { connectionString: databaseUrl, max: 10, ...extra };
}

/** `overrides.extra` (the pg pool's settings) is laid over the default pool (`max: 10`), not instead of it. */
export function dataSourceOptions(databaseUrl: string, overrides: Partial<DataSourceOptions> = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    ...overrides,
    extra: { max: 10, ...(overrides as { extra?: object }).extra },
  } as DataSourceOptions;
}

/**
 * A pool setting (`extra`) for a process whose statements all find their rows by key (the gateway): every prepared statement
 * runs its generic plan, planned once per connection. Left to choose (`auto`), PostgreSQL keeps planning again on every
 * execution a statement over parameter arrays (`unnest($1::text[])`: a custom plan knows the array's length, the
 * generic one assumes 10 elements, so it always looks dearer for a batch of one or two): the record of a one-message
 * send cost PostgreSQL nearly twice the CPU planned each time as with its generic plan. Not for the API, whose list
 * queries have optional filters (`$2 IS NULL OR …`) that only a plan made for the values can serve by index.
 */
export const GENERIC_PLANS = { options: '-c plan_cache_mode=force_generic_plan' };

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  // a server going away between two statements fails the next one; unheard, the event would end the process
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    return true;
  } catch (err) {
    // a concurrent creator won the race
    if ((err as { code?: string }).code === '42P04') return false;
    throw err;
  } finally {
    await client.end();
  }
}

/** Creates the database if missing and applies pending migrations (idempotent). */
export async function migrate(databaseUrl: string): Promise<string[]> {
  await ensureDatabase(databaseUrl);
  const ds = new DataSource(dataSourceOptions(databaseUrl, { extra: { max: 1 } }));
  await ds.initialize();
  try {
    // one migrator at a time across processes
    await ds.query('SELECT pg_advisory_lock(727274)');
    const applied = await ds.runMigrations({ transaction: 'each' });
    await ds.query('SELECT pg_advisory_unlock(727274)');
    return applied.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}
