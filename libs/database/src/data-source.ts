import { Client } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export function dataSourceOptions(databaseUrl: string, extra: Partial<DataSourceOptions> = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: { max: 10 },
    ...extra,
  } as DataSourceOptions;
}

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
