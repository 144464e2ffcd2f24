// A PostgreSQL cluster and a Redis of a bench run's own (free ports, removed at the end), never the shared ones:
// PostgreSQL can be restarted (fast shutdown), Redis wiped. Linux, run as root (initdb runs as `postgres`).
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { chownSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { freePort, sleep } = require('./support');

const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A PostgreSQL cluster and a Redis of the run's own; PostgreSQL can be restarted, Redis wiped. */
class PrivateServers {
  /** `pgSettings`: more `name=value` settings for PostgreSQL (e.g. shared_preload_libraries=pg_stat_statements). */
  constructor({ pgSettings = [] } = {}) {
    this.pgSettings = pgSettings;
    this.uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    this.gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    this.dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-pg-'));
    chownSync(this.dataDir, this.uid, this.gid);
    this.pg = null;
    this.redis = null;
  }

  async start() {
    [this.pgPort, this.redisPort] = [await freePort(), await freePort()];
    execFileSync(join(PG_BIN, 'initdb'), ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], { uid: this.uid, gid: this.gid, cwd: this.dataDir, stdio: 'ignore' });
    await this.startPg();
    this.redis = spawn('redis-server', ['--port', String(this.redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await this.waitReady(() => execFileSync('redis-cli', ['-p', String(this.redisPort), 'ping'], { stdio: 'ignore' }));
  }

  get pgUrl() {
    return `postgres://postgres@127.0.0.1:${this.pgPort}`;
  }

  get redisUrl() {
    return `redis://127.0.0.1:${this.redisPort}`;
  }

  async startPg() {
    const settings = ['listen_addresses=127.0.0.1', 'max_connections=200', 'fsync=off', 'synchronous_commit=off', ...this.pgSettings];
    this.pg = spawn(join(PG_BIN, 'postgres'), ['-D', this.dataDir, '-p', String(this.pgPort), '-k', this.dataDir, ...settings.flatMap((x) => ['-c', x])], {
      uid: this.uid,
      gid: this.gid,
      stdio: 'ignore',
    });
    await this.waitReady(() => execFileSync(join(PG_BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(this.pgPort)], { stdio: 'ignore' }));
  }

  /** Fast shutdown (every connection ends with 57P01), then start again: an operator's restart. */
  async restartPg() {
    await stop(this.pg, 'SIGINT');
    await this.startPg();
  }

  async waitReady(probe) {
    for (let i = 0; ; i++) {
      try {
        probe();
        return;
      } catch {
        if (i > 300) throw new Error('a private server did not start');
        await sleep(100);
      }
    }
  }

  async destroy() {
    await Promise.all([stop(this.pg, 'SIGINT'), stop(this.redis, 'SIGTERM')]);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

function stop(child, signal) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const done = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  return done;
}

/**
 * A connection cut by a PostgreSQL restart outside any query (an idle pooled client's error event) is replaced on the
 * next query: not the run's failure. Anything else uncaught ends the run.
 */
function survivePgRestarts() {
  process.on('uncaughtException', (err) => {
    if (['57P01', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE'].includes(err.code) || /Connection terminated/.test(err.message)) return;
    console.error(err);
    process.exit(1);
  });
}

module.exports = { PrivateServers, stop, survivePgRestarts };
