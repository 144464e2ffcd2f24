import { ChildProcess, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import IORedis from 'ioredis';
import { migrate } from '../../libs/database/src/data-source';
import { freePort, waitFor } from './processes';
import { spawnRegistered } from './process-registry';

/**
 * A PostgreSQL and a Redis of one test file's own, on free ports, for outage tests: stopping, killing and restarting
 * them never touches the shared 127.0.0.1:5432 / 6379 the rest of the suite runs on. Both run as children of the jest
 * worker (PostgreSQL as the `postgres` user: initdb refuses root) and die with it: `stopAll()` in afterAll, and a
 * synchronous SIGKILL on the worker's exit for a file that times out before its afterAll runs.
 */

/** scripts/local-services.js, shared with `npm start`: the embedded PostgreSQL's binaries, and running them as root. */
interface LocalServices {
  postgresBinaries(): PgBinaries | null;
  reachableBinaries(binaries: PgBinaries, user: ServerUser, log: (line: string) => void): PgBinaries;
  serverUser(): ServerUser;
}
interface PgBinaries {
  initdb: string;
  postgres: string;
}
/** as root, the `postgres` user (initdb refuses root); otherwise nothing: the server runs as ourselves */
interface ServerUser {
  uid?: number;
  gid?: number;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the script is plain Node, shared with `npm start`
const local = require('../../scripts/local-services') as LocalServices;

/**
 * The PostgreSQL binaries of the private servers: TEST_PG_BIN's folder when set (`embedded`: the embedded ones),
 * otherwise the system's newest `/usr/lib/postgresql/<version>/bin`, otherwise the embedded PostgreSQL that npm installs
 * for `npm start` (scripts/local-services.js): a machine with Node and redis-server alone runs these suites too. As root
 * in a private directory, the embedded binaries are copied where the `postgres` user can run them, as `npm start` does.
 */
function pgBinaries(user: ServerUser): PgBinaries {
  const chosen = process.env.TEST_PG_BIN;
  if (chosen && chosen !== 'embedded') return { initdb: join(chosen, 'initdb'), postgres: join(chosen, 'postgres') };
  if (!chosen) {
    const root = '/usr/lib/postgresql';
    const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
    const newest = versions.sort((a, b) => Number(a) - Number(b)).at(-1);
    if (newest) return { initdb: join(root, newest, 'bin', 'initdb'), postgres: join(root, newest, 'bin', 'postgres') };
  }
  const embedded = local.postgresBinaries();
  if (!embedded) throw new Error('no PostgreSQL binaries: neither /usr/lib/postgresql/<version>/bin nor the embedded PostgreSQL (npm ci installs it); set TEST_PG_BIN');
  return local.reachableBinaries(embedded, user, (line) => process.stderr.write(`${line}\n`));
}

/** Every private child alive, so the worker's exit can kill what a failed teardown left behind. */
const alive = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  alive.add(child);
  child.once('exit', () => alive.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of alive) c.kill('SIGKILL');
    });
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Sends `signal`, waits for the exit; SIGKILL when it has not exited after `graceMs`. */
async function terminate(child: ChildProcess | null, signal: NodeJS.Signals, graceMs = 10_000): Promise<void> {
  if (!child) return;
  const done = exited(child);
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await done;
}

function capture(child: ChildProcess): () => string {
  let out = '';
  const append = (d: Buffer) => (out = (out + d.toString()).slice(-100_000));
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => out;
}

/** One server process of the file's own: started, stopped and restarted on the same port, its output kept. */
abstract class PrivateServer {
  private child: ChildProcess | null = null;
  private log: () => string = () => '';

  constructor(
    readonly port: number,
    private readonly what: string,
    /** how it is asked to shut down */
    private readonly stopSignal: NodeJS.Signals,
  ) {}

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  output(): string {
    return this.log();
  }

  protected abstract launch(): ChildProcess;
  /** true once the server serves (a refused or failed probe is false) */
  protected abstract serves(): Promise<boolean>;

  /** Starts the server and waits until it serves. */
  async start(): Promise<void> {
    if (this.running) return;
    const child = this.launch();
    track(child);
    this.child = child;
    this.log = capture(child);
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${this.what} exited with ${child.exitCode}:\n${this.log()}`);
        return this.serves().catch(() => false);
      },
      30_000,
      `${this.what} on ${this.port} to serve`,
    );
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    await terminate(child, this.stopSignal);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
}

export class PrivatePostgres extends PrivateServer {
  private constructor(
    port: number,
    private readonly dataDir: string,
    private readonly user: ServerUser,
    private readonly bin: PgBinaries,
  ) {
    // fast shutdown (SIGINT): every client connection ends with 57P01, as in an operator's restart
    super(port, 'the private PostgreSQL', 'SIGINT');
  }

  /** A fresh cluster (initdb, trust auth) in a temporary directory owned by `postgres`, started. */
  static async create(): Promise<PrivatePostgres> {
    const user = local.serverUser();
    const bin = pgBinaries(user);
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-private-pg-'));
    const pg = new PrivatePostgres(await freePort(), dataDir, user, bin);
    try {
      if (user.uid !== undefined && user.gid !== undefined) chownSync(dataDir, user.uid, user.gid);
      execFileSync(bin.initdb, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], { ...user, cwd: dataDir, stdio: 'ignore' });
      await pg.start();
      return pg;
    } catch (err) {
      await pg.destroy();
      throw err;
    }
  }

  /** postgres://… of `database` on this server. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  protected launch(): ChildProcess {
    const settings = ['listen_addresses=127.0.0.1', 'fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=200'];
    return spawnRegistered(
      this.bin.postgres,
      ['-D', this.dataDir, '-p', String(this.port), '-k', this.dataDir, ...settings.flatMap((s) => ['-c', s])],
      { ...this.user, cwd: this.dataDir, stdio: ['ignore', 'pipe', 'pipe'] },
      'private postgres',
    );
  }

  /** Accepting connections, not merely listening (57P03 while it starts up). */
  protected async serves(): Promise<boolean> {
    const client = new Client({ connectionString: this.url(), connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Stops the server and deletes its data directory. */
  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** An empty Redis without persistence (no RDB, no AOF): a restart loses everything, the worst case. */
export class PrivateRedis extends PrivateServer {
  private constructor(port: number) {
    super(port, 'the private Redis', 'SIGTERM');
  }

  static async create(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  protected launch(): ChildProcess {
    return spawnRegistered('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] }, 'private redis');
  }

  protected async serves(): Promise<boolean> {
    const probe = new IORedis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } finally {
      probe.disconnect();
    }
  }
}

export interface PrivateServices {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  databaseUrl: string;
  /** stops both (and deletes PostgreSQL's data): for afterAll */
  stopAll(): Promise<void>;
}

/**
 * Starts a private PostgreSQL (migrated, like global-setup does for the shared one) and Redis, and points this jest
 * worker at them: DATABASE_URL and REDIS_URL, which the seed helpers and every process the file spawns read.
 */
export async function startPrivateServices(database = 'gw_outages'): Promise<PrivateServices> {
  const [pgStarted, redisStarted] = await Promise.allSettled([PrivatePostgres.create(), PrivateRedis.create()]);
  const pg = pgStarted.status === 'fulfilled' ? pgStarted.value : null;
  const redis = redisStarted.status === 'fulfilled' ? redisStarted.value : null;
  const databaseUrl = pg?.url(database) ?? '';
  try {
    if (!pg || !redis) throw pgStarted.status === 'rejected' ? pgStarted.reason : (redisStarted as PromiseRejectedResult).reason;
    await migrate(databaseUrl);
  } catch (err) {
    // afterAll has nothing to stop yet: what did start stops here
    await Promise.all([pg?.destroy(), redis?.stop()]);
    throw err;
  }
  process.env.DATABASE_URL = databaseUrl;
  process.env.REDIS_URL = redis.url;
  return {
    pg,
    redis,
    databaseUrl,
    stopAll: async () => {
      await Promise.all([pg.destroy(), redis.stop()]);
    },
  };
}
