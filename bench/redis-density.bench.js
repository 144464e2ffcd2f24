#!/usr/bin/env node
// Redis work of an idle gateway per session held (issue 36, item 3): one gateway (sim engine) holding BENCH_SESSIONS
// (1000) paired, idle sessions, against a Redis server of the bench's own (a private redis-server on a free port, so
// INFO commandstats counts this gateway and nothing else on the machine). After the fleet settles the counters are
// reset (CONFIG RESETSTAT), BENCH_WINDOW_MS (30 000) pass, and every command Redis ran is summed, scripts' inner
// commands included; the bench's own INFO/CONFIG are left out. Prints
//   redis commands/s per 1,000 idle sessions: <n>
// and the top commands. A metrics scrape per BENCH_SCRAPE_MS (10 000) runs during the window, as Prometheus would.
// BENCH_ROOT: another checkout's built dist/ (a "before" figure: BENCH_ROOT=/path/to/a/checkout/of/main).
'use strict';
const { spawn } = require('node:child_process');
const { join } = require('node:path');
const support = require('./support');
const { scan } = support;
const { sleep, freePort, startApp, killChildren } = support;

const ROOT = process.env.BENCH_ROOT ?? join(__dirname, '..');
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 30000);
const SCRAPE_MS = Number(process.env.BENCH_SCRAPE_MS ?? 10000);
const STEP_TIMEOUT_MS = Number(process.env.BENCH_STEP_TIMEOUT_MS ?? 240000);
const run = support.benchRun();

const { Client } = require('pg');
const IORedis = require('ioredis');
const { migrate } = require(join(ROOT, 'dist/libs/database/src/data-source.js'));

const children = [];
const waitUntil = (probe, what) => support.waitUntil(probe, what, STEP_TIMEOUT_MS);

async function privateRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d.toString()));
  await waitUntil(() => out.includes('Ready to accept connections'), 'the private redis-server');
  const redis = new IORedis(`redis://127.0.0.1:${port}`);
  redis.on('error', () => undefined);
  return { url: `redis://127.0.0.1:${port}`, redis };
}

/** calls per command since the last RESETSTAT, from INFO commandstats */
async function commandCalls(redis) {
  const text = await redis.info('commandstats');
  const calls = new Map();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1], Number(m[2]));
  for (const own of ['info', 'config|resetstat', 'config']) calls.delete(own);
  return calls;
}

let privateClient = null;

async function main() {
  const { url: REDIS_URL, redis } = await privateRedis();
  privateClient = redis;
  await migrate(run.DATABASE_URL);
  const pg = new Client({ connectionString: run.DATABASE_URL });
  pg.on('error', () => undefined);
  await pg.connect();
  const base = { DATABASE_URL: run.DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX: run.PREFIX, LOG_LEVEL: 'warn', NODE_ENV: 'test', SECRET_ENCRYPTION_KEY: run.ENCRYPTION_KEY, JWT_SECRET: 'bench-jwt-secret-0123456789abcdef0123' };
  const simPort = await freePort();
  const simUrl = `http://127.0.0.1:${simPort}`;
  await startApp('dist/apps/network-sim/src/main.js', { ...base, SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '600000' }, `${simUrl}/healthz`, 30000, children, 'inherit', ROOT);

  await pg.query(`INSERT INTO organizations (id, name) VALUES ('org_bench', 'bench')`);
  await pg.query(
    `INSERT INTO sessions (id, organization_id, label, status, gateway_id)
     SELECT 'ses_d' || lpad(g::text, 8, '0'), 'org_bench', 'bench', 'starting', 'gw-density' FROM generate_series(1, $1::int) AS g`,
    [SESSIONS],
  );
  const healthPort = await freePort();
  const env = { GATEWAY_ID: 'gw-density', GATEWAY_ENGINE: 'sim', NETWORK_SIM_URL: simUrl, GATEWAY_HEALTH_PORT: String(healthPort), GATEWAY_CAPACITY: String(SESSIONS), REBALANCE_MOVES_PER_MIN: '0' };
  await startApp('dist/apps/gateway/src/main.js', { ...base, ...env }, `http://127.0.0.1:${healthPort}/healthz`, STEP_TIMEOUT_MS, children, 'inherit', ROOT);
  const count = async (status) => Number((await pg.query(`SELECT count(*) AS n FROM sessions WHERE status = $1`, [status])).rows[0].n);
  await waitUntil(async () => (await count('scan_qr_code')) === SESSIONS || null, 'every session showing a QR');
  const ids = (await pg.query(`SELECT id FROM sessions ORDER BY id`)).rows.map((r) => r.id);
  for (let i = 0; i < ids.length; i += 100) {
    await Promise.all(ids.slice(i, i + 100).map((id) => scan(simUrl, id)));
  }
  await waitUntil(async () => (await count('working')) === SESSIONS || null, 'every session working');
  await sleep(10000);

  await redis.config('RESETSTAT');
  const started = Date.now();
  const scrape = () => fetch(`http://127.0.0.1:${healthPort}/metrics`).then((r) => r.text()).catch(() => '');
  while (Date.now() - started < WINDOW_MS) {
    await scrape();
    await sleep(Math.min(SCRAPE_MS, Math.max(0, WINDOW_MS - (Date.now() - started))));
  }
  const calls = await commandCalls(redis);
  const seconds = (Date.now() - started) / 1000;
  const total = [...calls.values()].reduce((a, b) => a + b, 0);
  const perSecond = total / seconds;
  console.log(`redis density bench: one gateway (sim engine) holding ${SESSIONS} idle working sessions, ${seconds.toFixed(0)} s window, a metrics scrape every ${SCRAPE_MS / 1000} s (${ROOT})`);
  console.log(`  redis commands/s: ${perSecond.toFixed(1)}`);
  console.log(`redis commands/s per 1,000 idle sessions: ${((perSecond * 1000) / SESSIONS).toFixed(1)}`);
  const top = [...calls.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
  console.log(`  top: ${top.map(([name, n]) => `${name} ${(n / seconds).toFixed(1)}/s`).join(', ')}`);
  await redis.quit();
  await pg.end();
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    privateClient?.disconnect();
    await killChildren(children);
    const admin = new Client({ connectionString: `${run.pgBase}/postgres` });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${run.database}" WITH (FORCE)`);
    await admin.end();
  });
