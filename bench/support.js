'use strict';
// What the benchmarks share: per-process CPU from /proc, a free port, and removing a run's database and Redis keys.
const { randomBytes } = require('node:crypto');
const { readdirSync, readFileSync } = require('node:fs');
const { createServer } = require('node:net');
const { Client } = require('pg');

/** A run's own database, Redis prefix and encryption key (BENCH_PG_URL, BENCH_REDIS_URL point elsewhere). */
function benchRun() {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const pgBase = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
  return {
    runId,
    pgBase,
    DATABASE_URL: `${pgBase}/gw_bench_${runId}`,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    PREFIX: `gwbench:${runId}`,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
}

/** CPU seconds (user + system) used so far by every process, from /proc (Linux); {} elsewhere. A PostgreSQL backend's `cmdline` names its database. */
function cpuSnapshot() {
  const tick = 100; // USER_HZ
  const snap = {};
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return snap;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = comm === 'postgres' ? readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
      snap[pid] = { comm, cmdline, seconds: (Number(fields[11]) + Number(fields[12])) / tick };
    } catch {
      /* gone */
    }
  }
  return snap;
}

async function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Deletes the run's Redis keys (under `prefix`) and drops its database. */
async function dropRun(redis, prefix, pgBase, database) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  const admin = new Client({ connectionString: `${pgBase}/postgres` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.end();
}

module.exports = { benchRun, cpuSnapshot, freePort, dropRun };
