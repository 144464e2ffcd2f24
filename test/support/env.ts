import { loadRunContext } from './run-context';

/** Every e2e worker sees the run's database and Redis prefix through the same variables the apps read. */
const ctx = loadRunContext();
process.env.NODE_ENV = 'test';
process.env.DATABASE_URL = ctx.databaseUrl;
process.env.REDIS_URL = ctx.redisUrl;
process.env.REDIS_KEY_PREFIX = ctx.redisPrefix;
process.env.SECRET_ENCRYPTION_KEY = ctx.encryptionKey;
process.env.JWT_SECRET = `test-jwt-secret-${ctx.runId}-0123456789abcdef`;
process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? 'true';
process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
// a run's files share one database: a fleet supervisor would adopt the sessions earlier files' gateways left behind.
// The fleet files run theirs in a database of their own (support/fleet-harness.ts).
process.env.SUPERVISOR_ENABLED = process.env.SUPERVISOR_ENABLED ?? 'false';
