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
// every API a suite starts, in-process or spawned, binds its ops port where the OS finds room
process.env.API_OPS_PORT = '0';
// the suites make thousands of requests from 127.0.0.1 with a few keys within a minute; limits have their own e2e
process.env.RATE_LIMIT_IP_PER_MIN = process.env.RATE_LIMIT_IP_PER_MIN ?? '1000000';
process.env.RATE_LIMIT_CREDENTIAL_PER_MIN = process.env.RATE_LIMIT_CREDENTIAL_PER_MIN ?? '1000000';
process.env.LOGIN_RATE_IP_PER_MIN = process.env.LOGIN_RATE_IP_PER_MIN ?? '100000';
process.env.LOGIN_FREE_FAILURES_PER_IP = process.env.LOGIN_FREE_FAILURES_PER_IP ?? '100000';
// a run's files share one database: a fleet supervisor would adopt the sessions earlier files' gateways left behind.
// The fleet files run theirs in a database of their own (support/fleet-harness.ts).
process.env.SUPERVISOR_ENABLED = process.env.SUPERVISOR_ENABLED ?? 'false';
// fleet suites fill their gateways with one organization's sessions; the fair share has its own checks
process.env.QUOTA_FLEET_SHARE_PERCENT = process.env.QUOTA_FLEET_SHARE_PERCENT ?? '100';
// a gateway stopped with no other gateway up drains until its grace period is nearly over (less 3 s), and the
// harness's stop() SIGKILLs it at 10 s: 10 s for every afterAll and restart of a lone gateway holding a session (about
// 40 of them per `npm test`). 4 s leaves a drain 1 s to begin handing over, so a SIGTERM beside another gateway still
// drains; a lone one closes its sessions cleanly and exits 0 in about 1.5 s. Suites that show a drain set their own.
process.env.GATEWAY_DRAIN_GRACE_MS = process.env.GATEWAY_DRAIN_GRACE_MS ?? '4000';
