// Helpers the benchmarks share: CPU accounting per process (Linux /proc), percentiles, free ports, and removing a
// run's throwaway database and Redis keys.
'use strict';
const { randomBytes } = require('node:crypto');
const { createServer } = require('node:http');
const { Client } = require('pg');

/** CPU seconds (user + system) used so far by every process, from /proc (Linux); {} elsewhere. */
function cpuSnapshot() {
  const { readdirSync, readFileSync } = require('node:fs');
  const tick = 100; // USER_HZ
  const snap = {};
  let pids;
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
      // a PostgreSQL backend's cmdline names its database
      const cmdline = comm === 'postgres' ? readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
      snap[pid] = { comm, cmdline, seconds: (Number(fields[11]) + Number(fields[12])) / tick };
    } catch {
      /* gone */
    }
  }
  return snap;
}

/**
 * Where the CPU went between two snapshots: the bench's own processes by role, everything else by name. With
 * `database`, only the PostgreSQL backends of that database count as `postgres` (others: `other (postgres)`).
 */
function cpuBreakdown(before, after, roles, database) {
  const out = {};
  for (const [pid, a] of Object.entries(after)) {
    const used = a.seconds - (before[pid]?.seconds ?? 0);
    if (used <= 0) continue;
    const shared = a.comm === 'redis-server' || (a.comm === 'postgres' && (!database || a.cmdline.includes(` ${database} `)));
    const name = roles[pid] ?? (shared ? a.comm : `other (${a.comm})`);
    out[name] = (out[name] ?? 0) + used;
  }
  return Object.entries(out).sort((x, y) => y[1] - x[1]);
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Deletes every Redis key of the run's prefix (SCAN + DEL, never FLUSHALL) and drops its database. */
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

/** A run's throwaway database and Redis prefix (BENCH_PG_URL, BENCH_REDIS_URL), and how to remove both. */
function benchRun() {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const pgBase = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const database = `gw_bench_${runId}`;
  const PREFIX = `gwbench:${runId}`;
  return {
    runId,
    pgBase,
    DATABASE_URL: `${pgBase}/${database}`,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    PREFIX,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    cleanup: (redis) => dropRun(redis, PREFIX, pgBase, database),
  };
}

module.exports = { benchRun, cpuSnapshot, cpuBreakdown, percentile, freePort, dropRun };
