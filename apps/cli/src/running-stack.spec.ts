import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgetRunningStack, readRunningStack, recordRunningStack, stackStateFile, useRunningStack } from './running-stack';

describe('the running stack record (npm start / npm run demo → the admin CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-stack-'));
  const file = join(dir, 'nested', 'running-stack.json');
  const stack = { pid: process.pid, demo: true, env: { DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:5432/gateway_demo_1', REDIS_KEY_PREFIX: 'gwdemo-1' } };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lives in the checkout\'s tmp/ unless STACK_STATE_FILE names another', () => {
    expect(stackStateFile({})).toMatch(/\/tmp\/running-stack\.json$/);
    expect(stackStateFile({ STACK_STATE_FILE: file })).toBe(file);
  });

  it('fills the stores of a live stack into an environment without DATABASE_URL, keeping what the user set', () => {
    recordRunningStack(stack, file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const env: NodeJS.ProcessEnv = { REDIS_KEY_PREFIX: 'mine', STACK_STATE_FILE: file };
    expect(useRunningStack(env)).toEqual(stack);
    expect(env).toMatchObject({ DATABASE_URL: stack.env.DATABASE_URL, REDIS_KEY_PREFIX: 'mine' });
    expect(env.REDIS_URL).toBeUndefined();
  });

  it('is not used when DATABASE_URL is set, when its script is gone, or when unreadable', () => {
    recordRunningStack(stack, file);
    const env: NodeJS.ProcessEnv = { DATABASE_URL: 'postgres://me@db/x', STACK_STATE_FILE: file };
    expect(useRunningStack(env)).toBeNull();
    expect(env.DATABASE_URL).toBe('postgres://me@db/x');
    expect(readRunningStack(file, () => false)).toBeNull();
    expect(readRunningStack(join(dir, 'missing.json'))).toBeNull();
  });

  it('is removed by the run that wrote it, not by another', () => {
    recordRunningStack(stack, file);
    forgetRunningStack(process.pid + 1, file);
    expect(existsSync(file)).toBe(true);
    forgetRunningStack(process.pid, file);
    expect(existsSync(file)).toBe(false);
  });
});
