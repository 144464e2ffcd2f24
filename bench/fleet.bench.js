#!/usr/bin/env node
// Fleet benchmark: BENCH_SESSIONS (10 000) simulated sessions across BENCH_GATEWAYS (5) gateway processes on this
// machine (sim engine), printing
//   - the simulator's own cost per connected device (baseline: bare device sockets opened by a plain loop),
//   - RSS per idle session of a gateway (its RSS holding its share, minus an empty gateway's),
//   - the time to place and connect every session (rows placed directly in PostgreSQL round-robin, which is what
//     placement by free capacity gives on equal empty gateways; the API path is a POST per session and only adds its
//     own latency), and to pair them (working),
//   - the failover time of one gateway's sessions after a SIGKILL (to all `working` on the others), killed just after
//     one of its heartbeats (the worst case: its leases live a whole TTL after the kill), with where the time went:
//     the moves, the targets' `starting` and `working` (first / p50 / last, from the outbox and the rows).
// Asserts nothing. Uses its own database and Redis prefix and removes both at the end.
// Over the failover it also prints the CPU each process spent per adopted session (/proc utime+stime, kill → last
// `working`: the 4 targets together, the simulator, PostgreSQL's backends of the bench's database, Redis) and the
// PostgreSQL transactions per adopted session (pg_stat_database, less the idle fleet's rate measured just before).
// BENCH_PROFILE=<dir>: a CPU profile of one target gateway over the failover (its inspector), written to <dir> and
// summarised (self time by function).
// BENCH_ENGINES (sim,baileys): which engines run; baileys is bench/fleet-real-engine.js (its own sizes and header).
'use strict';
const { join } = require('node:path');
const support = require('./support');
const { scan, rssMb, cpuSeconds, cpuSnapshot, cpuBreakdown, isOtherCpu, ownCpu, sleep, freePort, startApp, killChildren, killAfterHeartbeat, failoverPhases, formatPhases } = support;

// BENCH_ROOT: another checkout's built dist/ (a "before" figure in the same session: BENCH_ROOT=/path/to/main)
const ROOT = process.env.BENCH_ROOT ?? join(__dirname, '..');
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10000);
const GATEWAYS = Number(process.env.BENCH_GATEWAYS ?? 5);
const BASELINE_DEVICES = Number(process.env.BENCH_BASELINE_DEVICES ?? Math.min(SESSIONS, 2000));
const STEP_TIMEOUT_MS = Number(process.env.BENCH_STEP_TIMEOUT_MS ?? 240000);
const PROFILE_DIR = process.env.BENCH_PROFILE;
// scans (pairings) in flight at once during the setup: fewer keep a loaded box's gateways within their lease TTL
const PAIR_BATCH = Number(process.env.BENCH_PAIR_BATCH ?? 100);
const PG_BASE = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN = `${Date.now().toString(36)}${process.pid}`;
const DATABASE_URL = `${PG_BASE}/gw_bench_fleet_${RUN}`;
const PREFIX = `bench:fleet:${RUN}`;

const { Client } = require('pg');
const IORedis = require('ioredis');
const { WebSocket: WsClient } = require('ws');
const { migrate } = require(join(ROOT, 'dist/libs/database/src/data-source.js'));

const children = [];
const waitUntil = (probe, what, timeoutMs = STEP_TIMEOUT_MS) => support.waitUntil(probe, what, timeoutMs);

function startProcess(entry, env, healthUrl, timeoutMs = 30000) {
  const base = { DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX: PREFIX, LOG_LEVEL: 'warn', NODE_ENV: 'test', SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'), JWT_SECRET: 'bench-jwt-secret-0123456789abcdef0123' };
  return startApp(entry, { ...base, ...env }, healthUrl, timeoutMs, children, 'inherit', ROOT);
}

async function startGateway(id, simUrl, env = {}) {
  const port = await freePort();
  const inspectPort = PROFILE_DIR ? await freePort() : null;
  if (inspectPort) env = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:${inspectPort}`, ...env };
  const child = await startProcess(
    'dist/apps/gateway/src/main.js',
    { GATEWAY_ID: id, GATEWAY_ENGINE: 'sim', NETWORK_SIM_URL: simUrl, GATEWAY_HEALTH_PORT: String(port), GATEWAY_CAPACITY: String(SESSIONS), SUPERVISOR_ENABLED: 'true', REBALANCE_MOVES_PER_MIN: '0', ...env },
    `http://127.0.0.1:${port}/healthz`,
    // a gateway serves health once it has resumed what is placed on it
    STEP_TIMEOUT_MS,
  );
  return { id, child, inspectPort };
}

async function main() {
  await migrate(DATABASE_URL);
  const pg = new Client({ connectionString: DATABASE_URL });
  // the database is dropped under it at the end, whatever happened before
  pg.on('error', () => undefined);
  await pg.connect();
  const simPort = await freePort();
  const simUrl = `http://127.0.0.1:${simPort}`;
  const sim = await startProcess('dist/apps/network-sim/src/main.js', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '600000' }, `${simUrl}/healthz`);

  // ---- baseline: the simulator's cost per connected device, sockets opened by a plain loop
  const simRss0 = rssMb(sim.pid);
  const simCpu0 = cpuSeconds(sim.pid);
  const bare = [];
  const tBare = Date.now();
  for (let i = 0; i < BASELINE_DEVICES; i++) {
    const ws = new WsClient(`ws://127.0.0.1:${simPort}/device?sessionId=ses_bare${String(i).padStart(8, '0')}`);
    bare.push(new Promise((resolve, reject) => {
      ws.once('open', () => ws.send(JSON.stringify({ type: 'hello', credential: null })));
      ws.once('message', () => resolve(ws));
      ws.once('error', reject);
    }));
    if (i % 200 === 199) await Promise.all(bare.slice(i - 199, i + 1));
  }
  const sockets = await Promise.all(bare);
  const bareMs = Date.now() - tBare;
  await sleep(1000);
  const simPerDeviceKb = ((rssMb(sim.pid) - simRss0) * 1024) / BASELINE_DEVICES;
  const simCpuPerDeviceMs = ((cpuSeconds(sim.pid) - simCpu0) * 1000) / BASELINE_DEVICES;
  for (const ws of sockets) ws.terminate();

  // ---- an empty gateway's RSS, the zero of the per-session figure
  const probe = await startGateway('gw-probe', simUrl);
  await sleep(3000);
  const emptyRss = rssMb(probe.child.pid);
  probe.child.kill('SIGTERM');
  await new Promise((r) => probe.child.once('exit', r));

  // ---- place: rows spread round-robin over the gateways, which resume them at start
  const ids = Array.from({ length: GATEWAYS }, (_, i) => `gw-bench-${i + 1}`);
  await pg.query(`INSERT INTO organizations (id, name) VALUES ('org_bench', 'bench')`);
  for (let i = 0; i < SESSIONS; i += 1000) {
    const n = Math.min(1000, SESSIONS - i);
    await pg.query(
      `INSERT INTO sessions (id, organization_id, label, status, gateway_id)
       SELECT 'ses_b' || lpad(g::text, 8, '0'), 'org_bench', 'bench', 'starting', ($2::text[])[1 + (g % $3::int)]
       FROM generate_series($1::int, $1::int + $4 - 1) AS g`,
      [i, ids, GATEWAYS, n],
    );
  }
  const count = async (sql, args = []) => Number((await pg.query(sql, args)).rows[0].n);
  const tPlace = Date.now();
  const gateways = await Promise.all(ids.map((id) => startGateway(id, simUrl)));
  await waitUntil(async () => (await count(`SELECT count(*) AS n FROM sessions WHERE status = 'scan_qr_code'`)) === SESSIONS, 'every session connected (QR shown)');
  const placeMs = Date.now() - tPlace;

  // ---- pair every device (the phone scans): working
  const tPair = Date.now();
  const sessionIds = (await pg.query(`SELECT id FROM sessions ORDER BY id`)).rows.map((r) => r.id);
  for (let i = 0; i < sessionIds.length; i += PAIR_BATCH) {
    await Promise.all(sessionIds.slice(i, i + PAIR_BATCH).map((id) => scan(simUrl, id)));
  }
  await waitUntil(async () => (await count(`SELECT count(*) AS n FROM sessions WHERE status = 'working'`)) === SESSIONS, 'every session working');
  const pairMs = Date.now() - tPair;
  await sleep(5000);
  const rss = gateways.map((g) => rssMb(g.child.pid));
  const perSessionKb = ((rss.reduce((a, b) => a + b, 0) / rss.length - emptyRss) * 1024) / (SESSIONS / GATEWAYS);
  const simPerSessionKb = ((rssMb(sim.pid) - simRss0) * 1024) / SESSIONS;

  // ---- failover: SIGKILL one gateway, time until its sessions are all working on the others
  const victim = gateways[0];
  const orphans = await count(`SELECT count(*) AS n FROM sessions WHERE gateway_id = $1`, [victim.id]);
  const orphanIds = (await pg.query(`SELECT id FROM sessions WHERE gateway_id = $1`, [victim.id])).rows.map((r) => r.id);
  const registry = new IORedis(REDIS_URL);
  // PostgreSQL transactions of the bench's database (flushed by idle backends within ~10 s) and each process's CPU: the
  // idle fleet's rates are measured after the failover and subtracted, so what is left is the adoptions' own cost
  const xacts = async () => Number((await pg.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0].n);
  const roles = { [sim.pid]: 'simulator', [process.pid]: 'bench (its probes)', [victim.child.pid]: 'victim' };
  for (const g of gateways.slice(1)) roles[g.child.pid] = `gateways (${gateways.length - 1} targets)`;
  const database = `gw_bench_fleet_${RUN}`;
  await sleep(11000);
  const x0 = await xacts();
  const tx0 = Date.now();
  const profiled = PROFILE_DIR ? await support.inspectorProfile(gateways[1].inspectPort) : null;
  const cpu0 = cpuSnapshot();
  // killed just after a heartbeat: the worst case (its leases live a whole TTL after the kill) and a repeatable one
  const { killedAt, lastBeat } = await killAfterHeartbeat(registry, PREFIX, victim.id, victim.child);
  await waitUntil(
    async () => (await count(`SELECT count(*) AS n FROM sessions WHERE gateway_id <> $1 AND status = 'working' AND last_connected_at >= $2`, [victim.id, killedAt])) === orphans,
    `the ${orphans} sessions of ${victim.id} working elsewhere`,
  );
  const failoverMs = Date.now() - killedAt.getTime();
  const cpu1 = cpuSnapshot();
  const tCpu1 = Date.now();
  const profile = profiled ? await profiled.stop() : null;
  await sleep(11000);
  const x1 = await xacts();
  const tx1 = Date.now();
  const cpuIdle0 = cpuSnapshot();
  await sleep(11000);
  const idleMs = Date.now() - tx1;
  const idleX = (await xacts()) - x1;
  const cpuIdle = new Map(cpuBreakdown(cpuIdle0, cpuSnapshot(), roles, database));
  const xPerAdoption = (x1 - x0 - (idleX * (tx1 - tx0)) / idleMs) / orphans;
  const cpu = cpuBreakdown(cpu0, cpu1, roles, database).map(([name, sec]) => [name, sec - ((cpuIdle.get(name) ?? 0) * (tCpu1 - tx0)) / idleMs]);
  const victimBeat = await lastBeat();
  registry.disconnect();
  // where the time went, from the rows and the outbox (epoch ms, relative to the kill)
  const k = killedAt.getTime();
  const phases = await failoverPhases(pg, orphanIds, k);

  console.log(`fleet bench: ${SESSIONS} sessions on ${GATEWAYS} gateway processes (sim engine), ${require('node:os').cpus().length} cores`);
  console.log(`  baseline  simulator, ${BASELINE_DEVICES} bare device sockets: ${simPerDeviceKb.toFixed(1)} KB RSS and ${simCpuPerDeviceMs.toFixed(2)} ms CPU per device (opened in ${bareMs} ms)`);
  console.log(`  simulator with all ${SESSIONS} sessions paired: ${simPerSessionKb.toFixed(1)} KB RSS per device`);
  console.log(`  gateway   empty ${emptyRss.toFixed(0)} MB RSS; holding ${SESSIONS / GATEWAYS} idle working sessions ${(rss.reduce((a, b) => a + b, 0) / rss.length).toFixed(0)} MB: ${perSessionKb.toFixed(1)} KB RSS per idle session`);
  console.log(`  place + connect all ${SESSIONS} (gateways started to every QR shown): ${(placeMs / 1000).toFixed(1)} s; pair all to working: ${(pairMs / 1000).toFixed(1)} s`);
  console.log(`  failover  SIGKILL of ${victim.id} holding ${orphans}: all working on the others ${(failoverMs / 1000).toFixed(1)} s after the kill`);
  console.log(`            ${formatPhases(phases, victimBeat - k)}`);
  const movedToLast = Number(phases.working_last) - Number(phases.moved_first);
  console.log(`            ${orphans} adoptions in ${(movedToLast / 1000).toFixed(1)} s from the move to the last working: ${((1000 * orphans) / movedToLast).toFixed(0)} adoptions/s`);
  const ours = ownCpu(cpu).filter(([name]) => name !== 'victim' && name !== 'bench (its probes)');
  const others = cpu.filter(([name]) => isOtherCpu(name)).reduce((a, [, sec]) => a + sec, 0);
  const perAdoption = (sec) => ((sec * 1e6) / orphans).toFixed(0);
  console.log(`            CPU per adoption, less the idle fleet's (kill → last working, µs): ${ours.map(([name, sec]) => `${name} ${perAdoption(sec)}`).join(', ')} = ${perAdoption(ours.reduce((a, [, sec]) => a + sec, 0))} (other processes on the box: ${(others).toFixed(1)} s of CPU meanwhile)`);
  console.log(`            PostgreSQL transactions per adoption: ${xPerAdoption.toFixed(2)} (less the idle fleet's ${((1000 * idleX) / idleMs).toFixed(1)}/s)`);
  if (profile) {
    const file = join(PROFILE_DIR, `fleet-failover-${gateways[1].id}-${RUN}.cpuprofile`);
    require('node:fs').mkdirSync(PROFILE_DIR, { recursive: true });
    require('node:fs').writeFileSync(file, JSON.stringify(profile));
    const { totalMs, rows } = support.profileSummary(profile);
    console.log(`  profile of ${gateways[1].id} over the failover (${totalMs.toFixed(0)} ms sampled, self time): ${file}`);
    for (const row of rows) console.log(`    ${row}`);
  }
  console.log(`  load average ${require('node:os').loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await pg.end();
}

async function cleanup() {
  await killChildren(children);
  const admin = new Client({ connectionString: `${PG_BASE}/postgres` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "gw_bench_fleet_${RUN}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  const redis = new IORedis(REDIS_URL);
  for (const pattern of [`${PREFIX}:*`, `bull:${PREFIX}*`, `${PREFIX}*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  }
  redis.disconnect();
}

const ENGINES = (process.env.BENCH_ENGINES ?? 'sim,baileys').split(',');
(ENGINES.includes('sim') ? main().finally(cleanup) : Promise.resolve())
  .then(() => (ENGINES.includes('baileys') ? require('./fleet-real-engine').run() : undefined))
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
