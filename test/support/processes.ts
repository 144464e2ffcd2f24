import { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Engine, engineEnv } from './engine';
import { spawnRegistered } from './process-registry';
import { REPO_ROOT } from './run-context';

/** The apps as the build output runs them (the same entry points as `npm run start:*`). */
export const APP_ENTRY = {
  api: 'dist/apps/api/src/main.js',
  gateway: 'dist/apps/gateway/src/main.js',
  dispatcher: 'dist/apps/webhook-dispatcher/src/main.js',
  sim: 'dist/apps/network-sim/src/main.js',
} as const;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface AppProcess {
  name: string;
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL (a crash) and wait for exit. */
  kill(): Promise<void>;
}

/**
 * Starts one app from dist/ with the run's environment (DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX, …)
 * plus `env`, and waits until `healthUrl` answers 200.
 */
export async function startApp(
  app: keyof typeof APP_ENTRY,
  env: Record<string, string>,
  healthUrl: string,
  // a gateway on the real engine starting beside others on a loaded 2-core CI machine has needed more than 20 s
  timeoutMs = 40000,
): Promise<AppProcess> {
  const child = spawnRegistered(
    process.execPath,
    [join(REPO_ROOT, APP_ENTRY[app])],
    { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    app,
  );
  let out = '';
  child.stdout!.on('data', (d) => (out = (out + d.toString()).slice(-200_000)));
  child.stderr!.on('data', (d) => (out = (out + d.toString()).slice(-200_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const handle: AppProcess = {
    name: app,
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 10000)))]);
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) {
        // 10 s of the run spent waiting: said, so a stop that lingers (a drain with nowhere to go) shows in the log
        process.stderr.write(`e2e: ${app} (pid ${child.pid}) did not exit within 10 s of SIGTERM; SIGKILLed\n`);
        child.kill('SIGKILL');
      }
      await exited;
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${app} exited with ${child.exitCode}:\n${out}`);
    try {
      const res = await fetch(healthUrl);
      if (res.status === 200) return handle;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await handle.kill();
  throw new Error(`${app} did not become healthy at ${healthUrl} within ${timeoutMs} ms:\n${out}`);
}

/**
 * `startApp` on a port `freePort` found, found again when the app exits because something took that port in between:
 * the operating system hands the same ports out as the local ends of outgoing connections (the suite's own clients,
 * a gateway's sockets), so a port free when probed can be taken before the app binds it (seen once in a clean-clone CI).
 */
export async function startAppOnFreePort(
  app: keyof typeof APP_ENTRY,
  env: (port: number) => Record<string, string>,
  healthUrl: (port: number) => string,
  timeoutMs?: number,
): Promise<{ proc: AppProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { proc: await startApp(app, env(port), healthUrl(port), timeoutMs), port };
    } catch (err) {
      if (attempt >= 3 || !/already in use/.test(String(err))) throw err;
    }
  }
}

/** Polls `probe` until it returns a truthy value or the time runs out. */
export async function waitFor<T>(probe: () => Promise<T> | T, timeoutMs = 10000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** A port something else holds (what a newcomer's other app on 3000 looks like), until `release`. */
export async function holdPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const port = (server.address() as { port: number }).port;
  return { port, release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Runs a Node script of the repository to its exit, with stdout and stderr interleaved as a user sees them. */
export function runToExit(script: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawnRegistered(process.execPath, [join(REPO_ROOT, script), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }, script);
    let output = '';
    child.stdout!.on('data', (d) => (output += d.toString()));
    child.stderr!.on('data', (d) => (output += d.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/**
 * The network simulator and one gateway on it (fast heartbeats), both from dist/. `engine` `sim` speaks the
 * simulator's own device protocol; `baileys` runs the real engine against its WhatsApp Web front door
 * (WHATSAPP_EMULATOR_URL, docs/testing.md). Omitted: the matrix pass's engine (E2E_ENGINE, support/engine.ts).
 */
export async function startSimGateway(
  gatewayId: string,
  env: { sim?: Record<string, string>; gateway?: Record<string, string>; engine?: Engine } = {},
): Promise<{ sim: AppProcess; simUrl: string; gateway: AppProcess; healthUrl: string; gatewayEnv: Record<string, string> }> {
  const simPort = await freePort();
  const simUrl = `http://127.0.0.1:${simPort}`;
  const sim = await startApp('sim', { SIM_PORT: String(simPort), ...env.sim }, `${simUrl}/healthz`);
  const healthPort = await freePort();
  // the same gateway again later (a restart under the same id) takes this environment with a new health port
  const gatewayEnv = { GATEWAY_ID: gatewayId, ...engineEnv(simUrl, { GATEWAY_HEARTBEAT_MS: '300', GATEWAY_TTL_MS: '2000', ...env.gateway }, env.engine) };
  const gateway = await startApp(
    'gateway',
    { ...gatewayEnv, GATEWAY_HEALTH_PORT: String(healthPort) },
    `http://127.0.0.1:${healthPort}/healthz`,
  ).catch(async (err) => {
    await sim.stop();
    throw err;
  });
  return { sim, simUrl, gateway, healthUrl: `http://127.0.0.1:${healthPort}`, gatewayEnv };
}

/** Throws, with the tail of its output, for the first of `procs` that has exited (a crash the test must name). */
export function assertRunning(...procs: AppProcess[]): void {
  for (const p of procs) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) {
      throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode}):\n${p.output().slice(-4000)}`);
    }
  }
}
