#!/usr/bin/env node
// Round trips per message (issue 24 item 2): runs bench/messages.bench.js against a PostgreSQL cluster and a Redis of
// its own (free ports, removed at the end) — PostgreSQL with pg_stat_statements preloaded, Redis with nothing else on
// it — so every statement and every Redis command of the measured phase is counted per message, whatever else the
// machine runs. Counts do not depend on load; the times it prints do. Linux, run as root (initdb runs as `postgres`).
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { chownSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { freePort } = require('./support');

const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-round-trips-pg-'));
  chownSync(dataDir, uid, gid);
  const [pgPort, redisPort] = [await freePort(), await freePort()];
  const children = [];
  try {
    execFileSync(join(PG_BIN, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], { uid, gid, cwd: dataDir, stdio: 'ignore' });
    const settings = ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all', 'max_connections=200', 'fsync=on'];
    children.push(spawn(join(PG_BIN, 'postgres'), ['-D', dataDir, '-p', String(pgPort), '-k', dataDir, ...settings.flatMap((x) => ['-c', x])], { uid, gid, stdio: 'ignore' }));
    children.push(spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
    for (let i = 0; ; i++) {
      try {
        execFileSync(join(PG_BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(pgPort)], { stdio: 'ignore' });
        execFileSync('redis-cli', ['-p', String(redisPort), 'ping'], { stdio: 'ignore' });
        break;
      } catch {
        if (i > 300) throw new Error('the private PostgreSQL or Redis did not start');
        await sleep(100);
      }
    }
    const bench = spawn(process.execPath, [join(__dirname, 'messages.bench.js')], {
      stdio: 'inherit',
      env: {
        ...process.env,
        BENCH_PG_URL: `postgres://postgres@127.0.0.1:${pgPort}`,
        BENCH_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        BENCH_ROUND_TRIPS: '1',
        BENCH_MESSAGES: process.env.BENCH_MESSAGES ?? '1000',
      },
    });
    process.exitCode = await new Promise((r) => bench.once('exit', (code) => r(code ?? 1)));
  } finally {
    for (const c of children) c.kill('SIGINT');
    await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
