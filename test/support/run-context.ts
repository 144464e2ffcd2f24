import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One throwaway database and Redis key prefix per `npm test` run, shared by every e2e file of the run.
 * global-setup writes it to tmp/test-run.json; each worker reads it back (see env.ts).
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
const FILE = join(ROOT, 'tmp', 'test-run.json');

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
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  writeFileSync(FILE, JSON.stringify(ctx));
}

export function loadRunContext(): RunContext {
  if (!existsSync(FILE)) throw new Error('tmp/test-run.json missing: run e2e tests through jest (global-setup)');
  return JSON.parse(readFileSync(FILE, 'utf8')) as RunContext;
}

export const REPO_ROOT = ROOT;
