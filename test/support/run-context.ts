import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/**
 * One throwaway database and Redis key prefix per `npm test` run, shared by every e2e file of the run.
 * global-setup puts it in the GW_TEST_RUN environment variable, which jest's workers inherit, so concurrent runs
 * on one machine never see each other's context.
 */
export interface RunContext {
  runId: string;
  databaseUrl: string;
  adminDatabaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  encryptionKey: string;
}

const ROOT = join(__dirname, '..', '..');
const VARIABLE = 'GW_TEST_RUN';

export function newRunContext(): RunContext {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const pgBase = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
  return {
    runId,
    databaseUrl: `${pgBase}/gw_test_${runId}`,
    adminDatabaseUrl: `${pgBase}/postgres`,
    redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    redisPrefix: `gwtest:${runId}`,
    encryptionKey: randomBytes(32).toString('base64'),
  };
}

export function saveRunContext(ctx: RunContext): void {
  process.env[VARIABLE] = JSON.stringify(ctx);
}

export function loadRunContext(): RunContext {
  const raw = process.env[VARIABLE];
  if (!raw) throw new Error(`${VARIABLE} is not set: run e2e tests through jest (its global-setup creates the run)`);
  return JSON.parse(raw) as RunContext;
}

export const REPO_ROOT = ROOT;
