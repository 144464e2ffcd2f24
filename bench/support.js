// Helpers the benchmarks share: CPU accounting per process (Linux /proc), percentiles, free ports, spawning the apps
// from dist/ and waiting for them, a failover's phases, and removing a run's throwaway database and Redis keys.
'use strict';
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
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

/** The machine's busy CPU seconds so far, every core (user, nice, system, irq, softirq, steal: /proc/stat), NaN elsewhere. */
function machineCpuSeconds() {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    return (user + nice + system + irq + softirq + steal) / 100;
  } catch {
    return NaN;
  }
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

/** Whether a cpuBreakdown name is a process outside the run (`other (…)`). */
const isOtherCpu = (name) => name.startsWith('other (');
/** A cpuBreakdown's entries of the run's own processes and servers, without `other (…)`. */
const ownCpu = (breakdown) => breakdown.filter(([name]) => !isOtherCpu(name));

/** A process's resident set (MB) and its CPU seconds so far (user + system), from /proc (Linux). */
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const cpuSeconds = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` every 200 ms until it answers truthy; throws `timed out: <what>` after `timeoutMs`. */
async function waitUntil(probe, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(200);
  }
}

/**
 * Spawns `entry` (a file under dist/, relative to the repository) with `env` over the bench's own environment, pushes
 * it onto `children` (the caller kills what is left there at the end) and resolves once `healthUrl` answers 200. Its
 * stderr goes to the bench's, or to `stderr` (a file descriptor).
 */
async function startApp(entry, env, healthUrl, timeoutMs, children, stderr = 'inherit', root = join(__dirname, '..')) {
  const child = spawn(process.execPath, [join(root, entry)], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', stderr] });
  children.push(child);
  await waitUntil(async () => {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}`);
    return fetch(healthUrl).then((r) => r.status === 200, () => false);
  }, `${entry} healthy`, timeoutMs);
  return child;
}

/**
 * The phone scans a session's QR on the simulator. A request on a kept-alive socket the simulator has just closed fails
 * without an answer (undici: "other side closed", seen on a loaded box): sent again, at most twice.
 */
async function scan(simUrl, id) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(`${simUrl}/sim/sessions/${id}/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

/**
 * The next IPC message of a forked child; rejects when the child exits first, so a child that failed at its first line
 * (a module moved) ends the bench and its cleanup instead of leaving it waiting with its other children alive.
 */
function nextMessage(child, what) {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`${what} had exited (${child.signalCode ?? child.exitCode})`));
    const onExit = (code, signal) => {
      child.off('message', onMessage);
      reject(new Error(`${what} exited (${signal ?? code}) before answering`));
    };
    const onMessage = (message) => {
      child.off('exit', onExit);
      resolve(message);
    };
    child.once('message', onMessage);
    child.once('exit', onExit);
  });
}

/** SIGKILLs every child still running and waits for their exits. */
async function killChildren(children) {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null)));
}

/**
 * SIGKILLs a gateway just after one of its heartbeats (the registry hash `<prefix>:gateways`): the worst case, its
 * leases live a whole TTL after the kill, and a repeatable one. Resolves with the kill's Date and a function reading
 * the victim's last heartbeat (epoch ms) afterwards.
 */
async function killAfterHeartbeat(redis, prefix, gatewayId, child) {
  const lastBeat = async () => JSON.parse((await redis.hget(`${prefix}:gateways`, gatewayId)) ?? '{}').lastHeartbeatAt;
  const beatBefore = await lastBeat();
  await waitUntil(async () => (await lastBeat()) !== beatBefore, `a heartbeat of ${gatewayId}`, 30000);
  const killedAt = new Date();
  child.kill('SIGKILL');
  return { killedAt, lastBeat };
}

/**
 * Where a failover's time went, from the rows and the outbox (ms after `killedAtMs`): the moves (`session.status`
 * with reason `failover` after the kill: a gateway the setup lost was failed over too), the moved sessions' first `starting`/`reconnecting` after the kill, and their
 * `last_connected_at` (first / p50 / p90 / last). Formatted by `formatPhases`.
 */
async function failoverPhases(pg, orphanIds, killedAtMs) {
  return (await pg.query(
    `WITH moved AS (SELECT (envelope->>'timestamp')::bigint AS t FROM events WHERE type = 'session.status' AND envelope->'payload'->>'reason' = 'failover'
                   AND (envelope->>'timestamp')::bigint >= $2),
          started AS (SELECT session_id, min((envelope->>'timestamp')::bigint) AS t FROM events
                      WHERE type = 'session.status' AND session_id = ANY($1) AND (envelope->>'timestamp')::bigint >= $2
                        AND envelope->'payload'->>'status' IN ('starting', 'reconnecting') GROUP BY session_id),
          working AS (SELECT (extract(epoch FROM last_connected_at) * 1000)::bigint AS t FROM sessions WHERE id = ANY($1))
     SELECT (SELECT min(t) FROM moved) - $2 AS moved_first, (SELECT max(t) FROM moved) - $2 AS moved_last,
            (SELECT min(t) FROM started) - $2 AS start_first, (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY t) FROM started) - $2 AS start_p50,
            (SELECT max(t) FROM started) - $2 AS start_last,
            (SELECT min(t) FROM working) - $2 AS working_first, (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY t) FROM working) - $2 AS working_p50,
            (SELECT percentile_disc(0.9) WITHIN GROUP (ORDER BY t) FROM working) - $2 AS working_p90, (SELECT max(t) FROM working) - $2 AS working_last`,
    [orphanIds, killedAtMs],
  )).rows[0];
}

/** `failoverPhases` as one line, seconds after the kill. */
function formatPhases(phases, lastBeatMs) {
  const s = (ms) => (ms === null || ms === undefined || Number.isNaN(ms) ? '-' : `${(Number(ms) / 1000).toFixed(1)}`);
  return (
    `s after the kill (last heartbeat ${s(lastBeatMs)}): moved ${s(phases.moved_first)}–${s(phases.moved_last)}; ` +
    `starting first/p50/last ${s(phases.start_first)}/${s(phases.start_p50)}/${s(phases.start_last)}; ` +
    `working first/p50/p90/last ${s(phases.working_first)}/${s(phases.working_p50)}/${s(phases.working_p90)}/${s(phases.working_last)}`
  );
}

/**
 * A CPU profile of a running node process over its inspector (started with `--inspect=127.0.0.1:<port>`), between
 * `start()` and the `stop()` it resolves with: only the phase being measured, not the process's whole life.
 */
async function inspectorProfile(port) {
  const { WebSocket } = require('ws');
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let nextId = 1;
  const answers = new Map();
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString());
    answers.get(msg.id)?.(msg);
  });
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      const id = nextId++;
      answers.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call('Profiler.enable');
  await call('Profiler.setSamplingInterval', { interval: 500 });
  await call('Profiler.start');
  return {
    async stop() {
      const { result } = await call('Profiler.stop');
      ws.close();
      return result.profile;
    },
  };
}

/** Self time of a V8 CPU profile by function (`name file:line`), the `top` heaviest with their share. */
function profileSummary(profile, top = 40) {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byNode.get(profile.samples[i]);
    const f = n.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*\/dist\//, '')}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return { totalMs: total / 1000, rows: [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}% ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`) };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The middle value of `xs` (unsorted; the upper one of the two middles for an even count). */
const median = (xs) => percentile([...xs].sort((a, b) => a - b), 50);

/** Extra Node flags for the processes a bench starts, from the environment variable `name` (space-separated). */
const nodeArgsFrom = (name) => (process.env[name] ?? '').split(' ').filter(Boolean);

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

/**
 * A history in `messages` before a run: `count` outbound messages already read, spread over `sessions` (a gateway in
 * service has one, and statistics of an empty table give the plans of a new install's first minute), then ANALYZE.
 * `db`: a connected pg client on the run's database.
 */
async function seedMessageHistory(db, organizationId, sessions, count, chatJid) {
  await db.query(
    `INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, type, text, status, created_at, updated_at, sent_at)
     SELECT 'msg_history_' || s.k || '_' || i, $1, s.id, 'HISTORY' || i, 'out', $2, 'text', 'history ' || i, 'read', now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
       FROM unnest($3::text[]) WITH ORDINALITY AS s(id, k), generate_series(1, $4::int) AS i`,
    [organizationId, chatJid, sessions, Math.ceil(count / sessions.length)],
  );
  await db.query('ANALYZE');
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
    /** the run's throwaway database (its name, as a PostgreSQL backend's title shows it) */
    database,
    DATABASE_URL: `${pgBase}/${database}`,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    PREFIX,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    cleanup: (redis) => dropRun(redis, PREFIX, pgBase, database),
  };
}

module.exports = {
  benchRun,
  seedMessageHistory,
  cpuSnapshot,
  cpuBreakdown,
  machineCpuSeconds,
  isOtherCpu,
  ownCpu,
  percentile,
  median,
  nodeArgsFrom,
  freePort,
  dropRun,
  rssMb,
  cpuSeconds,
  sleep,
  waitUntil,
  startApp,
  scan,
  killChildren,
  nextMessage,
  killAfterHeartbeat,
  failoverPhases,
  formatPhases,
  inspectorProfile,
  profileSummary,
};
