/*
 * Every process an e2e test starts, registered so that none outlives its test file, whatever the test did.
 *
 * A child is spawned in a process group of its own (`detached`), so killing the group takes its children too. (The
 * start script runs its apps in groups of their own; they stop by themselves when it dies: scripts/exit-with-parent.js.) Each registration is kept twice: in the test file's global (the e2e environment,
 * test/support/e2e-environment.js, SIGKILLs every group still alive once the file's own hooks have run, even after a
 * failed or timed-out test) and as a pid file in the run's directory (global-teardown sweeps those, in case a worker
 * died before its environment could). A spawn anywhere in test/ goes through `spawnRegistered` or
 * `execFileRegistered`, or hands its child (spawned with `detached: true`) to `registerProcess`.
 */
import { ChildProcess, execFile, ExecFileOptions, spawn, SpawnOptions } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The key the e2e environment reads the live registrations from: pid → its name and pid file. */
export const REGISTRY_GLOBAL = '__gwE2eProcesses';

interface Registration {
  name: string;
  pidFile: string | null;
}

function live(): Map<number, Registration> {
  const g = globalThis as unknown as Record<string, Map<number, Registration> | undefined>;
  return (g[REGISTRY_GLOBAL] ??= new Map());
}

/** The run's pid directory (one per `npm test` run, from its run id). */
export function pidDirectory(runId: string): string {
  return join(tmpdir(), 'gw-e2e-processes', runId);
}

function runPidDirectory(): string | null {
  const raw = process.env.GW_TEST_RUN;
  return raw ? pidDirectory((JSON.parse(raw) as { runId: string }).runId) : null;
}

/** Tracks `child` (spawned with `detached: true`) until it exits. */
export function registerProcess(child: ChildProcess, name: string): void {
  const pid = child.pid;
  if (pid === undefined) return; // it never started: `error` is emitted instead
  const dir = runPidDirectory();
  const pidFile = dir ? join(dir, String(pid)) : null;
  if (dir && pidFile) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(pidFile, name);
  }
  live().set(pid, { name, pidFile });
  child.once('exit', () => {
    live().delete(pid);
    if (pidFile) rmSync(pidFile, { force: true });
  });
}

/** `spawn` in a process group of its own, registered. */
export function spawnRegistered(command: string, args: string[], options: SpawnOptions, name = command): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  registerProcess(child, name);
  return child;
}

/** `promisify(execFile)` (rejects with `code`, `stdout`, `stderr` on a non-zero exit), registered. */
export function execFileRegistered(file: string, args: string[], options: ExecFileOptions = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // execFile hands its options to spawn, `detached` included
    const child = execFile(file, args, { ...options, encoding: 'utf8', detached: true } as ExecFileOptions, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { stdout, stderr }));
      else resolve({ stdout: String(stdout), stderr: String(stderr) });
    });
    registerProcess(child, file);
  });
}

/** SIGKILLs a registered process group; false when it was already gone. */
export function killGroup(pid: number): boolean {
  try {
    process.kill(-pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/** global-teardown's sweep: every group the run's pid files still name (a worker that died left them). */
export function killLeftovers(runId: string): string[] {
  const dir = pidDirectory(runId);
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return []; // no process of this run registered a pid file
  }
  const killed = files.filter((f) => killGroup(Number(f)));
  rmSync(dir, { recursive: true, force: true });
  return killed;
}
