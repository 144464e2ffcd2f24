#!/usr/bin/env node
// API hot-path benchmark: authed GET /api/v1/webhooks/{id} (with an API key, then with a login JWT) against a bare
// Express 5 hello, in the same run, through autocannon with the same connections and duration. Prints
// `vs express: <ratio>` (the worse of key and JWT) on a line of its own, and where the CPU went (API, PostgreSQL).
// Issue 24 item 5: `vs floor` against NestJS + one Redis call + the read (the floor of its own parts), measured in
// turns, and the split of that distance: the floor's route inside the whole API app, then the GET against that route.
// Issue 40: an authed PATCH of a webhook with its audit entry (written by the change's own statement) against the same
// PATCH on an API started with AUDIT_LOG_ENABLED=false, measured in turns: `audit cost on PATCH: <ratio>`.
// BENCH_API_AUDIT_ONLY=1 runs that comparison alone.
// Uses its own throwaway database and Redis prefix and removes both at the end.
'use strict';
const { fork, spawn } = require('node:child_process');
const { createHash, randomBytes } = require('node:crypto');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** Rounds of floor-then-API-key measured in turns for `vs floor` (the first is the main run's pair). */
const FLOOR_ROUNDS = Math.max(1, Number(process.env.BENCH_FLOOR_ROUNDS ?? 3));
/** Rounds of audited-then-unaudited PATCH measured in turns. */
const AUDIT_ROUNDS = Math.max(1, Number(process.env.BENCH_AUDIT_ROUNDS ?? 3));
const AUDIT_ONLY = process.env.BENCH_API_AUDIT_ONLY === '1';

/** The floor's read: the webhook row, as the API reads it, one named prepared statement (both floors run it). */
const FLOOR_READ = { name: 'floor_webhook', text: 'SELECT * FROM webhooks WHERE id = $1 AND organization_id = $2' };
/** The floor's one Redis call: RateWindows' script on one key, with a window that never refuses. */
const floorHit = (windows, n) =>
  windows.tryAcceptAll([{ key: `${process.env.REDIS_KEY_PREFIX}:nest-floor`, windows: [{ limit: 1e9, windowMs: 1000 }] }], `${process.pid}.${n}`);

/** A child's app listening on a free port, which it tells the parent; a failure to start ends the child. */
function listenAndReport(ready) {
  ready
    .then(async (app) => {
      await app.listen(0, '127.0.0.1');
      process.send({ port: app.getHttpServer().address().port });
    })
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}

// ---------------------------------------------------------------- bare Express 5 (child process)
if (process.argv[2] === '--express') {
  const express = require('express');
  const app = express();
  app.get('/hello', (_req, res) => res.json({ hello: 'world' }));
  const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  return;
}

// ---------------------------------------------------------------- bare NestJS 11 on Express (child process): the framework's own floor
// `--nest redis`: plus the one Redis call per request that item 4's cross-replica rate limits need (RateWindows' script)
if (process.argv[2] === '--nest') {
  require('reflect-metadata');
  // a clean exit on SIGTERM, so a run under `node --cpu-prof` writes the floor's profile too
  process.once('SIGTERM', () => process.exit(0));
  const withRedis = process.argv.includes('redis');
  const withPg = process.argv.includes('pg');
  const { Controller, Get, Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  let pool = null;
  class HelloController {
    async hello() {
      if (!pool) return { hello: 'world' };
      // the webhook row, as the API reads it: one named prepared statement on a pg pool
      const { rows } = await pool.query({ ...FLOOR_READ, values: [process.env.FLOOR_WEBHOOK_ID, process.env.FLOOR_ORG_ID] });
      return rows[0];
    }
  }
  Get('hello')(HelloController.prototype, 'hello', Object.getOwnPropertyDescriptor(HelloController.prototype, 'hello'));
  Controller()(HelloController);
  class HelloModule {}
  Module({ controllers: [HelloController] })(HelloModule);
  listenAndReport(
    NestFactory.create(HelloModule, { logger: false }).then(async (app) => {
      if (withPg) pool = new (require('pg').Pool)({ connectionString: process.env.DATABASE_URL, max: 10 });
      if (withRedis) {
        const { createRedis, RateWindows } = require(join(ROOT, 'dist/libs/redis/src'));
        const windows = new RateWindows(createRedis(process.env.REDIS_URL));
        let n = 0;
        app.use((req, res, next) => {
          floorHit(windows, ++n).then(() => next(), next);
        });
      }
      return app;
    }),
  );
  return;
}

// ---------------------------------------------------------------- the floor's route inside the whole API app (child process)
// The API process as main.js builds it (every module, middleware, guard, pipe and filter), plus one public route,
// /floor, that does the floor's work: the one Redis call and the prepared read, through the app's own Redis client
// and pool. It is public and outside the API prefix (no credential, no API-wide limits, no duration metric) and the
// request line is off (LOG_LEVEL warn); what still runs is what runs before any route (the request id, input
// hardening) and the global guard's public check. What it costs over the standalone floor is the app's weight.
if (process.argv[2] === '--in-app') {
  require('reflect-metadata');
  process.once('SIGTERM', () => process.exit(0));
  const { Controller, Get, RequestMethod } = require('@nestjs/common');
  const api = (p) => require(join(ROOT, 'dist/apps/api/src', p));
  const { AppModule } = api('app.module');
  const { API_PREFIX, createApiApp } = api('bootstrap');
  const { Public } = api('common/auth.decorators');
  const { REDIS_CLIENT } = require(join(ROOT, 'dist/libs/infra/src'));
  const { RateWindows } = require(join(ROOT, 'dist/libs/redis/src'));
  const { Db, preparedStatement } = require(join(ROOT, 'dist/libs/database/src'));
  const statement = preparedStatement(FLOOR_READ.name, FLOOR_READ.text);
  let db = null;
  let windows = null;
  let n = 0;
  class FloorController {
    async floor() {
      await floorHit(windows, ++n);
      const rows = await db.prepared(statement, [process.env.FLOOR_WEBHOOK_ID, process.env.FLOOR_ORG_ID]);
      return rows[0];
    }
  }
  Get('floor')(FloorController.prototype, 'floor', Object.getOwnPropertyDescriptor(FloorController.prototype, 'floor'));
  Public()(FloorController);
  Controller()(FloorController);
  const forRoot = AppModule.forRoot.bind(AppModule);
  AppModule.forRoot = (overrides) => {
    const module = forRoot(overrides);
    return { ...module, controllers: [...(module.controllers ?? []), FloorController] };
  };
  listenAndReport(
    createApiApp().then(async (app) => {
      db = app.get(Db);
      windows = new RateWindows(app.get(REDIS_CLIENT));
      const probe = (path) => ({ path, method: RequestMethod.GET });
      app.setGlobalPrefix(API_PREFIX, { exclude: [probe('healthz'), probe('readyz'), probe('floor')] });
      return app;
    }),
  );
  return;
}

const autocannon = require('autocannon');
const { Client } = require('pg');
const { benchRun, cpuBreakdown, cpuSnapshot, freePort, isOtherCpu, median, nextMessage, nodeArgsFrom } = require('./support');
const dist = (p) => require(join(ROOT, 'dist', p));
const { migrate, newId } = dist('libs/database/src');
const { SecretBox } = dist('libs/crypto/src');
const { signAccessToken } = dist('apps/api/src/auth/access-token');

const { database, DATABASE_URL, REDIS_URL, PREFIX, ENCRYPTION_KEY, cleanup: dropRun } = benchRun();
const JWT_SECRET = randomBytes(32).toString('hex');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * CPU between two snapshots: the bench's own processes by role, this run's PostgreSQL backends and Redis by name
 * (support's cpuBreakdown), everything else together as `other`.
 */
function cpuSplit(before, after, roles) {
  const out = {};
  for (const [k, used] of cpuBreakdown(before, after, roles, database)) {
    const name = isOtherCpu(k) ? 'other' : k;
    out[name] = (out[name] ?? 0) + used;
  }
  return out;
}

/** `request`: method and body beside the GET default. */
function load(url, headers, duration, request = {}) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, duration, ...request }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** Warm-up, then the measured run; returns req/s, p99 latency and the CPU split of the measured run. */
async function measure(name, url, headers, roles, request = {}) {
  await load(url, headers, WARMUP, request);
  const before = cpuSnapshot();
  const r = await load(url, headers, DURATION, request);
  const cpu = cpuSplit(before, cpuSnapshot(), roles);
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx responses, ${r.errors} errors`);
  const rps = r.requests.total / DURATION;
  const perRequestUs = (k) => (((cpu[k] ?? 0) / r.requests.total) * 1e6).toFixed(0);
  console.log(
    `${name.padEnd(14)} ${rps.toFixed(0).padStart(6)} req/s  p99 ${String(r.latency.p99).padStart(3)} ms  ` +
      `CPU s: ${Object.entries(cpu).filter(([, v]) => v >= 0.05).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}` +
      `  (µs/request: ${Object.values(roles).filter((k) => k !== 'autocannon').map((k) => `${k} ${perRequestUs(k)}`).join(', ')}` +
      (Object.values(roles).includes('api') ? `, postgres ${perRequestUs('postgres')})` : ')'),
  );
  const server = Object.values(roles).find((k) => k !== 'autocannon');
  return { rps, serverUs: ((cpu[server] ?? 0) / r.requests.total) * 1e6 };
}

/** The API's environment, as the bench runs it (main.js, or the in-app floor's child). */
function apiEnv(port, opsPort, extra = {}) {
  return {
    ...process.env,
    ...extra,
    NODE_ENV: 'test',
    PORT: String(port),
    // a free ops port: the default (3003) is taken by any other API on the machine
    API_OPS_PORT: String(opsPort),
    // the benchmark measures the hot path, not the per-credential / per-IP limits (they would refuse it at once)
    RATE_LIMIT_CREDENTIAL_PER_MIN: '10000000',
    RATE_LIMIT_IP_PER_MIN: '10000000',
    DATABASE_URL,
    REDIS_URL,
    REDIS_KEY_PREFIX: PREFIX,
    SECRET_ENCRYPTION_KEY: ENCRYPTION_KEY,
    JWT_SECRET,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  };
}

/** BENCH_API_NODE_ARGS: e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the API. */
async function startApi(port, nodeArgs, opsPort, extraEnv = {}) {
  const child = spawn(process.execPath, [...nodeArgs, join(ROOT, 'dist/apps/api/src/main.js')], {
    cwd: ROOT,
    env: apiEnv(port, opsPort, extraEnv),
    // the request log goes where a deployment's would: out of the process, here to /dev/null
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch {
      /* not yet */
    }
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error('api did not become healthy');
}

async function cleanup() {
  const IORedis = require('ioredis');
  const redis = new IORedis(REDIS_URL);
  await dropRun(redis);
  redis.disconnect();
}

/**
 * Issue 40: PATCH /webhooks/{id} on `api` (audited, the entry folded into the change's statement) and on `unaudited`
 * (AUDIT_LOG_ENABLED=false), in turns; each PATCHes its own webhook. Prints each round and the median ratio.
 */
async function auditCost(apiPort, unauditedPort, webhooks, keyToken, roles) {
  const headers = { authorization: `Bearer ${keyToken}`, 'content-type': 'application/json' };
  const patch = { method: 'PATCH', body: JSON.stringify({ active: true, events: ['message.received'] }) };
  const urls = [`http://127.0.0.1:${apiPort}/api/v1/webhooks/${webhooks[0]}`, `http://127.0.0.1:${unauditedPort}/api/v1/webhooks/${webhooks[1]}`];
  for (const url of urls) {
    const check = await fetch(url, { method: 'PATCH', headers, body: patch.body });
    if (check.status !== 200) throw new Error(`PATCH ${url} answered ${check.status}: ${await check.text()}`);
  }
  const rounds = [];
  for (let i = 0; i < AUDIT_ROUNDS; i++) {
    const audited = await measure('PATCH audited', urls[0], headers, roles.audited, patch);
    const bare = await measure('PATCH unaudited', urls[1], headers, roles.unaudited, patch);
    rounds.push({ rps: audited.rps / bare.rps, cpu: bare.serverUs / audited.serverUs });
  }
  const show = (xs) => xs.map((x) => x.toFixed(2)).join(', ');
  console.log(`audit rounds (audited ÷ unaudited): req/s ${show(rounds.map((r) => r.rps))}; CPU per request (unaudited ÷ audited) ${show(rounds.map((r) => r.cpu))}`);
  console.log(`audit cost on PATCH: ${median(rounds.map((r) => r.rps)).toFixed(2)} (CPU ${median(rounds.map((r) => r.cpu)).toFixed(2)})`);
}

async function main() {
  let api = null;
  let unaudited = null;
  let nestPg = null;
  let inApp = null;
  const express = fork(__filename, ['--express'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const nest = fork(__filename, ['--nest'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const nestRedis = fork(__filename, ['--nest', 'redis'], { env: { ...process.env, REDIS_URL, REDIS_KEY_PREFIX: PREFIX }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    console.log(`API hot-path benchmark: ${CONNECTIONS} connections, ${DURATION} s each after ${WARMUP} s of warm-up`);
    await migrate(DATABASE_URL);
    const db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    const orgId = newId('org');
    const userId = newId('usr');
    const keyToken = `gwk_${randomBytes(32).toString('base64url')}`;
    const webhookId = newId('whk');
    const patchedWebhooks = [newId('whk'), newId('whk')];
    await db.query(`INSERT INTO organizations (id, name) VALUES ($1, 'bench')`, [orgId]);
    await db.query(`INSERT INTO users (id, organization_id, email, password_hash, role) VALUES ($1, $2, 'bench@example.test', 'x', 'admin')`, [userId, orgId]);
    await db.query(`INSERT INTO api_keys (id, organization_id, name, token_hash, token_hint, permissions) VALUES ($1, $2, 'bench', $3, $4, $5)`, [
      newId('key'),
      orgId,
      createHash('sha256').update(keyToken).digest('hex'),
      keyToken.slice(0, 8),
      ['webhooks:manage'],
    ]);
    await db.query(
      `INSERT INTO webhooks (id, organization_id, url, events, retry_policy, secret_encrypted) VALUES ($1, $2, 'https://example.com/hook', $3, $4::jsonb, $5)`,
      [webhookId, orgId, ['message.received'], JSON.stringify({ policy: 'exponential', delaySeconds: 2, attempts: 15 }), new SecretBox([Buffer.from(ENCRYPTION_KEY, 'base64')]).encrypt('bench-secret')],
    );
    for (const id of patchedWebhooks) {
      await db.query(`INSERT INTO webhooks (id, organization_id, url, events, retry_policy) VALUES ($1, $2, 'https://example.com/patched', $3, $4::jsonb)`, [
        id,
        orgId,
        ['message.received'],
        JSON.stringify({ policy: 'exponential', delaySeconds: 2, attempts: 15 }),
      ]);
    }
    await db.end();
    if (AUDIT_ONLY) {
      const [auditedPort, unauditedPort] = [await freePort(), await freePort()];
      api = await startApi(auditedPort, [], await freePort());
      unaudited = await startApi(unauditedPort, [], await freePort(), { AUDIT_LOG_ENABLED: 'false' });
      const bench = { [process.pid]: 'autocannon' };
      await auditCost(auditedPort, unauditedPort, patchedWebhooks, keyToken, { audited: { ...bench, [api.pid]: 'api' }, unaudited: { ...bench, [unaudited.pid]: 'api' } });
      return;
    }
    const jwt = signAccessToken({ sub: userId, org: orgId, role: 'admin' }, JWT_SECRET, 3600);
    nestPg = fork(__filename, ['--nest', 'redis', 'pg'], {
      env: { ...process.env, REDIS_URL, REDIS_KEY_PREFIX: PREFIX, DATABASE_URL, FLOOR_WEBHOOK_ID: webhookId, FLOOR_ORG_ID: orgId },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const { port: nestPgPort } = await nextMessage(nestPg, 'the Nest + PostgreSQL app');
    inApp = fork(__filename, ['--in-app'], {
      env: { ...apiEnv(0, await freePort()), LOG_LEVEL: 'warn', FLOOR_WEBHOOK_ID: webhookId, FLOOR_ORG_ID: orgId },
      execArgv: nodeArgsFrom('BENCH_API_NODE_ARGS'),
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const { port: inAppPort } = await nextMessage(inApp, 'the in-app API');

    const { port: expressPort } = await nextMessage(express, 'the Express app');
    const { port: nestPort } = await nextMessage(nest, 'the Nest app');
    const { port: nestRedisPort } = await nextMessage(nestRedis, 'the Nest + Redis app');
    const apiPort = await freePort();
    api = await startApi(apiPort, nodeArgsFrom('BENCH_API_NODE_ARGS'), await freePort());
    const url = `http://127.0.0.1:${apiPort}/api/v1/webhooks/${webhookId}`;
    const check = await fetch(url, { headers: { authorization: `Bearer ${keyToken}` } });
    if (check.status !== 200) throw new Error(`GET ${url} answered ${check.status}: ${await check.text()}`);

    const bench = { [process.pid]: 'autocannon' };
    const bare = (await measure('express hello', `http://127.0.0.1:${expressPort}/hello`, {}, { ...bench, [express.pid]: 'express' })).rps;
    // not the target's baseline: where the floor is, what a NestJS app answers before any work of ours
    const nestHello = (await measure('nest hello', `http://127.0.0.1:${nestPort}/hello`, {}, { ...bench, [nest.pid]: 'nest' })).rps;
    nest.kill('SIGTERM');
    const nestRedisHello = (await measure('nest + redis', `http://127.0.0.1:${nestRedisPort}/hello`, {}, { ...bench, [nestRedis.pid]: 'nest' })).rps;
    nestRedis.kill('SIGTERM');
    const floorUrl = `http://127.0.0.1:${nestPgPort}/hello`;
    const floorRoles = { ...bench, [nestPg.pid]: 'nest' };
    const nestPgFirst = await measure('nest+redis+pg', floorUrl, {}, floorRoles);
    const nestPgHello = nestPgFirst.rps;
    // both credentials warm before either is measured: the first run must not pay the API's JIT warm-up alone
    await load(url, { authorization: `Bearer ${jwt}` }, WARMUP);
    const keyHeaders = { authorization: `Bearer ${keyToken}` };
    const apiRoles = { ...bench, [api.pid]: 'api' };
    const keyFirst = await measure('api (API key)', url, keyHeaders, apiRoles);
    const withKey = keyFirst.rps;
    const withJwt = (await measure('api (JWT)', url, { authorization: `Bearer ${jwt}` }, apiRoles)).rps;
    // issue 24 item 5 on a shared machine: the floor and the API key measured in turns, so a neighbour's burst hits
    // both sides of a round; the ratio is the median round's, in throughput and in server CPU per request
    // and the floor's route inside the whole API app (no behaviour of ours per request): what the app's weight alone
    // costs against the standalone floor, and what our per-request work costs against that
    const inAppUrl = `http://127.0.0.1:${inAppPort}/floor`;
    const inAppRoles = { ...bench, [inApp.pid]: 'api' };
    const inAppOf = async (floor, key) => {
      const m = await measure('floor in the API', inAppUrl, {}, inAppRoles);
      return { weight: m.rps / floor.rps, ours: key.rps / m.rps, weightCpu: floor.serverUs / m.serverUs, oursCpu: m.serverUs / key.serverUs };
    };
    await load(inAppUrl, {}, WARMUP);
    const rounds = [{ rps: withKey / nestPgHello, cpu: nestPgFirst.serverUs / keyFirst.serverUs, ...(await inAppOf(nestPgFirst, keyFirst)) }];
    for (let i = 1; i < FLOOR_ROUNDS; i++) {
      const floor = await measure('nest+redis+pg', floorUrl, {}, floorRoles);
      const key = await measure('api (API key)', url, keyHeaders, apiRoles);
      rounds.push({ rps: key.rps / floor.rps, cpu: floor.serverUs / key.serverUs, ...(await inAppOf(floor, key)) });
    }
    // stopped and gone before the database is dropped under its pool (and, under --cpu-prof, its profile written)
    await Promise.all([nestPg, inApp].map((child) => new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM'))));
    const unauditedPort = await freePort();
    unaudited = await startApi(unauditedPort, [], await freePort(), { AUDIT_LOG_ENABLED: 'false' });
    await auditCost(apiPort, unauditedPort, patchedWebhooks, keyToken, { audited: apiRoles, unaudited: { ...bench, [unaudited.pid]: 'api' } });
    console.log(`ratios: API key ${(withKey / bare).toFixed(2)}, JWT ${(withJwt / bare).toFixed(2)}`);
    // where the floor of any API built as the design says lies: NestJS alone, then with the one Redis call per request
    console.log(
      `floors: bare NestJS ${(nestHello / bare).toFixed(2)}, NestJS + one Redis rate-limit call ${(nestRedisHello / bare).toFixed(2)}, ` +
        `+ the webhook read from PostgreSQL ${(nestPgHello / bare).toFixed(2)}`,
    );
    console.log(`vs express: ${(Math.min(withKey, withJwt) / bare).toFixed(2)}`);
    // issue 24 item 5: the authed GET (API key) against the floor of its own parts (NestJS + one Redis call + the read)
    const show = (xs) => xs.map((x) => x.toFixed(2)).join(', ');
    console.log(`rounds vs floor: req/s ${show(rounds.map((r) => r.rps))}; CPU per request (floor ÷ API) ${show(rounds.map((r) => r.cpu))}`);
    console.log(`vs floor (CPU): ${median(rounds.map((r) => r.cpu)).toFixed(2)}`);
    console.log(`vs floor: ${median(rounds.map((r) => r.rps)).toFixed(2)}`);
    // the split of that distance: the floor's own route inside the API app, against the standalone floor (the app's
    // weight), and the API key GET against that route (what our per-request behaviour costs)
    console.log(
      `floor in the API app vs floor: ${median(rounds.map((r) => r.weight)).toFixed(2)} (CPU ${median(rounds.map((r) => r.weightCpu)).toFixed(2)}); ` +
        `API key GET vs floor in the API app: ${median(rounds.map((r) => r.ours)).toFixed(2)} (CPU ${median(rounds.map((r) => r.oursCpu)).toFixed(2)})`,
    );
  } finally {
    api?.kill('SIGTERM');
    unaudited?.kill('SIGTERM');
    express.kill('SIGTERM');
    nest.kill('SIGTERM');
    nestRedis.kill('SIGTERM');
    nestPg?.kill('SIGTERM');
    inApp?.kill('SIGTERM');
    await cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
