import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Where `npm start` / `npm run demo` (scripts/start.js) say which stores their apps use, so the admin CLI run beside
 * them reaches the same database without the user typing a URL: the embedded PostgreSQL has a password, and a demo
 * has a database of its own. This module owns the file (its place and shape); start.js writes it through here.
 */
export const STACK_VARIABLES = ['DATABASE_URL', 'REDIS_URL', 'REDIS_KEY_PREFIX'] as const;
type StackVariable = (typeof STACK_VARIABLES)[number];

export interface RunningStack {
  /** the start script's pid: a file whose process is gone names no running stack */
  pid: number;
  demo: boolean;
  env: Partial<Record<StackVariable, string>>;
}

/** `tmp/running-stack.json` of the checkout (the nearest package.json above this file), or STACK_STATE_FILE. */
export function stackStateFile(env: NodeJS.ProcessEnv = process.env): string {
  if (env.STACK_STATE_FILE) return env.STACK_STATE_FILE;
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'tmp', 'running-stack.json');
}

/** Records the stack this process runs (readable by its user only: the URL may carry the embedded server's password). */
export function recordRunningStack(stack: RunningStack, file = stackStateFile()): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(stack)}\n`, { mode: 0o600 });
}

/** Removes the record, if it is still this process's (another run may have written its own since). */
export function forgetRunningStack(pid: number, file = stackStateFile()): void {
  if (readRunningStack(file, () => true)?.pid === pid) rmSync(file, { force: true });
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The running stack's record, or null: no file, an unreadable one, or one whose start script is gone. */
export function readRunningStack(file = stackStateFile(), alive: (pid: number) => boolean = isAlive): RunningStack | null {
  let stack: RunningStack;
  try {
    stack = JSON.parse(readFileSync(file, 'utf8')) as RunningStack;
  } catch {
    return null;
  }
  if (!Number.isInteger(stack?.pid) || typeof stack.env !== 'object' || stack.env === null || !alive(stack.pid)) return null;
  return stack;
}

/**
 * With DATABASE_URL unset, the running stack's stores go into `env` (a variable set by the user is kept); returns
 * the stack used, or null. The CLI then works on the database the banner names.
 */
export function useRunningStack(env: NodeJS.ProcessEnv, stack = readRunningStack(stackStateFile(env))): RunningStack | null {
  if (env.DATABASE_URL || !stack) return null;
  for (const name of STACK_VARIABLES) {
    const value = stack.env[name];
    if (typeof value === 'string' && !env[name]) env[name] = value;
  }
  return stack;
}
