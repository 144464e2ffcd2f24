import IORedis from 'ioredis';
import { Client } from 'pg';
import { LOCAL_SERVICES, RUN_USERS } from './global-setup';
import { killLeftovers } from './process-registry';
import { loadRunContext } from './run-context';

export default async function globalTeardown(): Promise<void> {
  // the last e2e project of the run ends it (global-setup)
  const holder = globalThis as Record<symbol, unknown>;
  holder[RUN_USERS] = ((holder[RUN_USERS] as number | undefined) ?? 1) - 1;
  if ((holder[RUN_USERS] as number) > 0) return;
  const ctx = loadRunContext();
  // a worker that died before its environment's teardown left its children's pid files behind
  const killed = killLeftovers(ctx.runId);
  if (killed.length) process.stderr.write(`e2e: killed ${killed.length} process group(s) left by a dead worker: ${killed.join(', ')}\n`);
  if (process.env.E2E_KEEP_DB !== '1') {
    const admin = new Client({ connectionString: ctx.adminDatabaseUrl });
    await admin.connect();
    const db = ctx.databaseUrl.split('/').pop()!;
    await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
    await admin.end();
  }
  const redis = new IORedis(ctx.redisUrl);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${ctx.redisPrefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  await redis.quit();
  // the PostgreSQL and Redis global-setup started, if it did (after the database is dropped and the keys deleted)
  await ((globalThis as Record<symbol, unknown>)[LOCAL_SERVICES] as { stop: () => Promise<void> } | undefined)?.stop();
}
