import { spawn } from 'node:child_process';
import { createServer, Server } from 'node:net';
import { join } from 'node:path';
import { APP_ENTRY } from './support/processes';
import { REPO_ROOT } from './support/run-context';

/** Each app started on a port something else holds prints one line naming the variable to change, and exits. */
describe('a port in use', () => {
  let taken: Server;
  let port: number;

  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  const runApp = (entry: string, env: Record<string, string>) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [join(REPO_ROOT, entry)], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => (output += d.toString()));
      child.stderr.on('data', (d) => (output += d.toString()));
      child.once('exit', (code) => resolve({ code, output }));
    });

  it.each([
    { app: 'api', entry: APP_ENTRY.api, variable: 'PORT' },
    { app: 'gateway', entry: APP_ENTRY.gateway, variable: 'GATEWAY_HEALTH_PORT' },
    { app: 'webhook dispatcher', entry: APP_ENTRY.dispatcher, variable: 'DISPATCHER_HEALTH_PORT' },
    { app: 'network simulator', entry: APP_ENTRY.sim, variable: 'SIM_PORT' },
  ])('$app: one line naming $variable, nothing else, exit 1', async ({ app, entry, variable }) => {
    const { code, output } = await runApp(entry, {
      [variable]: String(port),
      GATEWAY_ID: `gw-port-in-use-${process.pid}`,
      GATEWAY_ENGINE: 'sim',
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}:port-in-use-${process.pid}`,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([`${app}: port ${port} is already in use; set ${variable} to a free port (or stop what listens there)`]);
  }, 30000);
});
