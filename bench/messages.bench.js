#!/usr/bin/env node
// Messaging benchmark: sustained accepted-and-sent messages per second through API → gateway → simulator with the
// message log (POST /sessions/{id}/messages → messages row → SendSignal → drain → sim send → markSent + message.sent),
// against a baseline measured in the same run: the same number of sends written straight to SimEngine connections in
// a loop, one connection per session, each one message at a time as a session sends (the limit).
// Everything runs from dist/ on this machine with its own throwaway database and Redis prefix, removed at the end.
'use strict';
const { fork, spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 3000);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 4);
/** POSTs in flight at once, spread over the sessions */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/**
 * POSTs before the measured ones, on each side (BENCH_WARMUP): the sustained rate is a warm process's. The pipeline's
 * processes hold far more code than the floor's and take longer to compile: API CPU per message fell 803 → 583 → 443
 * over its first three 3 000-message runs and then held (443–513), the floor's API 613 → 423 → 373 (session 15).
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 9000);
/**
 * Pairs of the pipeline and the floor measured in turns (BENCH_FLOOR_ROUNDS, 5): `vs floor` is the median pair's, as
 * one pair moved 0.63–0.75 between runs on an idle machine, and warm pairs of one run 0.65–0.80 on a busy one. The first
 * pair is the one the detail lines describe. bench:round-trips counts one pair.
 */
const FLOOR_ROUNDS = process.env.BENCH_ROUND_TRIPS === '1' ? 1 : Math.max(1, Number(process.env.BENCH_FLOOR_ROUNDS ?? 5));
/** Runs of the engine loop (`SimEngine send loop` is their median). */
const ENGINE_RUNS = 5;
/** messages per POST …/messages:batch in the bulk measurement (0 skips it), and batches in flight */
const BATCH = Number(process.env.BENCH_BATCH ?? 100);
const BATCH_CONCURRENCY = Number(process.env.BENCH_BATCH_CONCURRENCY ?? 4);
/**
 * Messages already in the log when the run starts, spread over the sessions, and as many rows in the floor's table, both
 * analyzed: a gateway in service has a history, and a fresh table's statistics (an empty table) give the plans of a new
 * install's first minute, cached for the connection's life (a seq scan of `messages` per recorded send), not a service's.
 */
const HISTORY = Number(process.env.BENCH_HISTORY ?? 20000);

const { Pool } = require('undici');
const IORedis = require('ioredis');
const { Client } = require('pg');
const dist = (p) => require(join(ROOT, 'dist', p));
const { migrate, newId } = dist('libs/database/src');
const { newApiKeyToken, sha256Hex } = dist('libs/crypto/src');
const { SimEngine } = dist('apps/gateway/src/engine/sim/sim.engine');
const { benchRun, cpuBreakdown, cpuSnapshot, freePort, median, nextMessage, nodeArgsFrom, ownCpu, percentile, seedMessageHistory } = require('./support');
const { createFloorTable } = require('./messages-floor');

const { runId, database, DATABASE_URL, REDIS_URL, PREFIX, ENCRYPTION_KEY, cleanup } = benchRun();
const TO = '15550009999@s.whatsapp.net';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fmt = (n) => n.toFixed(0).padStart(7);

async function waitUntil(probe, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const children = [];
async function startProcess(name, entry, env, healthUrl) {
  // BENCH_CPU_PROF=<dir>: every process writes a V8 CPU profile there (open it in Chrome DevTools)
  // BENCH_NODE_ARGS: more flags for every process (e.g. "--perf-basic-prof" to read it with `perf`)
  const prof = [
    ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ...nodeArgsFrom('BENCH_NODE_ARGS'),
  ];
  const child = spawn(process.execPath, [...prof, join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'test', DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX: PREFIX, SECRET_ENCRYPTION_KEY: ENCRYPTION_KEY, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push(child);
  await waitUntil(async () => (await fetch(healthUrl)).ok, 90000, `${name} to answer ${healthUrl}`);
  return child;
}

/** CPU seconds per message of a breakdown's own processes, all together. */
const ownCpuPerMessage = (breakdown, n) => ownCpu(breakdown).reduce((s, [, v]) => s + v, 0) / n;

function cpuLine(breakdown, n) {
  const parts = ownCpu(breakdown).filter(([, v]) => v >= 0.02).map(([k, v]) => `${k} ${((v / n) * 1e6).toFixed(0)}`);
  return `${parts.join(', ')}; total ${(ownCpuPerMessage(breakdown, n) * 1e6).toFixed(0)} µs per message (without "other")`;
}

/** An AuthStateStore in memory: the baseline's devices need their credential only while the bench runs. */
function memoryAuth(sessionId) {
  let creds = null;
  return {
    sessionId,
    readCreds: async () => creds,
    writeCreds: async (c) => void (creds = c),
    readKeys: async () => ({}),
    writeKeys: async () => undefined,
    clear: async () => void (creds = null),
  };
}

/**
 * The limit: SESSIONS SimEngine connections, each sending its share one message at a time in a loop, after the same
 * warm-up as every other side; the median of ENGINE_RUNS runs, as one run of a loop this short (~0.1 s) moved
 * 27 000–41 000 msgs/s within a run.
 */
async function engineBaseline(simUrl, total, roles) {
  const engine = new SimEngine({ simUrl });
  const logger = require('pino')({ level: 'silent' });
  const conns = [];
  for (let s = 0; s < SESSIONS; s++) {
    const sessionId = `bench-raw-${runId}-${s}`;
    let opened;
    const open = new Promise((r) => (opened = r));
    const conn = await engine.connect({
      sessionId,
      auth: memoryAuth(sessionId),
      logger,
      onEvent: async (e) => {
        if (e.type === 'qr') void fetch(`${simUrl}/sim/sessions/${sessionId}/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phoneNumber: `1555200000${s}` }) });
        if (e.type === 'open') opened();
      },
    });
    await open;
    conns.push(conn);
  }
  const send = (conn, i) => conn.send({ waMessageId: `3EB0${randomBytes(9).toString('hex').toUpperCase()}`, to: TO, content: { type: 'text', text: `raw ${i}` }, quoted: null, mentions: [] });
  // warm-up, as the pipeline gets one
  await Promise.all(conns.map(async (conn, s) => { for (let i = 0; i < WARMUP / SESSIONS; i++) await send(conn, `w${s}-${i}`); }));
  const rates = [];
  const cpuBefore = cpuSnapshot();
  for (let run = 0; run < ENGINE_RUNS; run++) {
    const started = performance.now();
    await Promise.all(conns.map(async (conn, s) => { for (let i = s; i < total; i += SESSIONS) await send(conn, `${run}-${i}`); }));
    rates.push(total / ((performance.now() - started) / 1000));
  }
  // CPU per message over the measured runs only (not the warm-up)
  const cpu = cpuBreakdown(cpuBefore, cpuSnapshot(), roles, database).map(([k, v]) => [k, v / ENGINE_RUNS]);
  await Promise.all(conns.map((c) => c.close()));
  return { rate: median(rates), cpu };
}

/** Stops `which` of the children (all by default): SIGTERM, then SIGKILL after 10 s. */
async function stopChildren(which = () => true) {
  // a child that already died never emits 'exit' again: only wait for live ones, and never longer than 10 s
  await Promise.all(
    children
      .filter((c) => c.exitCode === null && c.signalCode === null && which(c))
      .map((c) => {
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        const timer = setTimeout(() => c.kill('SIGKILL'), 10000);
        return exited.finally(() => clearTimeout(timer));
      }),
  );
}

/** The most a session accepts in any 60 s (the API's maximum ratePerMin, set on the bench's sessions). */
const RATE_PER_MIN = 10000;

async function main() {
  // every pipeline and bulk POST counts against its session's rate, and the run lasts about a minute: a configuration
  // that could pass the sessions' rates is refused here, before a 429 ends the run halfway
  const sends = WARMUP + MESSAGES * FLOOR_ROUNDS + (BATCH > 0 ? WARMUP + MESSAGES : 0);
  if (sends > SESSIONS * RATE_PER_MIN) {
    throw new Error(`${sends} sends over ${SESSIONS} sessions could pass their ${RATE_PER_MIN}/min rate: lower BENCH_WARMUP, BENCH_MESSAGES or BENCH_FLOOR_ROUNDS, or raise BENCH_SESSIONS`);
  }
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  const bound = setTimeout(() => {
    console.error('benchmark exceeded its time bound');
    for (const c of children) c.kill('SIGKILL');
    cleanup(redis).finally(() => process.exit(1));
  }, 480_000);
  let db = null;
  let pool = null;
  let sim = null;
  try {
    console.log(`messaging benchmark: ${MESSAGES} texts over ${SESSIONS} sessions, ${CONCURRENCY} POSTs in flight, sim engine, everything local`);
    await migrate(DATABASE_URL);
    db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    const orgId = newId('org');
    await db.query(`INSERT INTO organizations (id, name) VALUES ($1, 'bench')`, [orgId]);
    const token = newApiKeyToken();
    await db.query(`INSERT INTO api_keys (id, organization_id, name, token_hash, token_hint, permissions) VALUES ($1, $2, 'bench', $3, $4, $5)`, [
      newId('key'), orgId, sha256Hex(token), token.slice(0, 8), ['*'],
    ]);

    const simPort = await freePort();
    const simUrl = `http://127.0.0.1:${simPort}`;
    sim = await startProcess('simulator', 'dist/apps/network-sim/src/main.js', { SIM_PORT: String(simPort), SIM_HOST: '127.0.0.1', SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    const gwPort = await freePort();
    const gateway = await startProcess('gateway', 'dist/apps/gateway/src/main.js', {
      GATEWAY_ID: `bench-gw-${runId}`, GATEWAY_ENGINE: 'sim', NETWORK_SIM_URL: simUrl, GATEWAY_HEALTH_PORT: String(gwPort),
      // its SIGTERM drain (no other gateway to take the sessions) ends at once: the bench's SIGKILL after 10 s would
      // lose a profile's write, and the gateway stops before the simulator, so it has no reconnects to log
      GATEWAY_DRAIN_GRACE_MS: '1000',
    }, `http://127.0.0.1:${gwPort}/healthz`);
    const apiPort = await freePort();
    const api = await startProcess('api', 'dist/apps/api/src/main.js', {
      PORT: String(apiPort), API_OPS_PORT: String(await freePort()), JWT_SECRET: `bench-jwt-secret-${runId}-0123456789abcdef`, NETWORK_SIM_URL: simUrl,
      // per-session rates are set high on the sessions; the API-wide limits must not refuse the bench either
      RATE_LIMIT_CREDENTIAL_PER_MIN: '10000000', RATE_LIMIT_IP_PER_MIN: '10000000',
    }, `http://127.0.0.1:${apiPort}/healthz`);

    pool = new Pool(`http://127.0.0.1:${apiPort}`, { connections: CONCURRENCY, keepAliveTimeout: 30000 });
    const call = async (method, path, body) => {
      const res = await pool.request({ method, path, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
      const text = await res.body.text();
      return { status: res.statusCode, body: text ? JSON.parse(text) : null };
    };
    const sessions = [];
    for (let s = 0; s < SESSIONS; s++) {
      const created = await call('POST', '/api/v1/sessions', { label: `bench ${s}`, ratePerMin: RATE_PER_MIN, ratePerHour: 1000000 });
      if (created.status !== 201) throw new Error(`creating a session: ${created.status} ${JSON.stringify(created.body)}`);
      const id = created.body.id;
      await waitUntil(async () => (await (await fetch(`${simUrl}/sim/sessions/${id}`)).json()).qr, 15000, 'a QR');
      await fetch(`${simUrl}/sim/sessions/${id}/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phoneNumber: `1555100000${s}` }) });
      await waitUntil(async () => (await call('GET', `/api/v1/sessions/${id}`)).body.status === 'working', 15000, 'working');
      sessions.push(id);
    }

    await createFloorTable(db, HISTORY, TO);
    await seedMessageHistory(db, orgId, sessions, HISTORY, TO);
    const sentCount = async (tag) =>
      (await db.query(`SELECT count(*)::int AS n FROM messages WHERE status = 'sent' AND text LIKE $1`, [`${tag} %`])).rows[0].n;
    /**
     * Whether `table`'s send queue is empty, through its partial index of queued rows: the wait's probe, every 50 ms
     * inside the measured window, costs the queue's length and not the table's (a count over the whole table was
     * PostgreSQL CPU charged to the path measured). Every POST was answered first, so its row is there.
     */
    const drainedOf = (table) => async () =>
      (await db.query(`SELECT NOT EXISTS (SELECT 1 FROM ${table} WHERE status = 'queued') AS done`)).rows[0].done;
    /** Runs `n` calls of `one(i)`, `concurrency` at a time; returns each call's latency (ms). */
    const inFlight = async (n, concurrency, one) => {
      const latencies = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < n) {
            const i = next++;
            const t = performance.now();
            await one(i);
            latencies.push(performance.now() - t);
          }
        }),
      );
      return latencies;
    };
    /** POSTs `n` texts, CONCURRENCY at a time round-robin over the sessions; returns each POST's latency (ms). */
    const post = (tag, n) =>
      inFlight(n, CONCURRENCY, async (i) => {
        const res = await call('POST', `/api/v1/sessions/${sessions[i % SESSIONS]}/messages`, { to: TO, text: `${tag} ${i}` });
        if (res.status !== 202) throw new Error(`send answered ${res.status}: ${JSON.stringify(res.body)}`);
      });
    /** POSTs `n` texts in batches of BATCH (messages:batch), BATCH_CONCURRENCY batches in flight, round-robin over the sessions. */
    const postBatches = (tag, n) =>
      inFlight(Math.ceil(n / BATCH), BATCH_CONCURRENCY, async (b) => {
        const items = [];
        for (let i = b * BATCH; i < Math.min(n, (b + 1) * BATCH); i++) items.push({ to: TO, text: `${tag} ${i}` });
        const res = await call('POST', `/api/v1/sessions/${sessions[b % SESSIONS]}/messages:batch`, { messages: items });
        if (res.status !== 202) throw new Error(`batch send answered ${res.status}: ${JSON.stringify(res.body)}`);
        const refused = res.body.results.filter((r) => r.status !== 202);
        if (refused.length) throw new Error(`batch items refused: ${JSON.stringify(refused[0])}`);
      });

    const loadBefore = require('node:os').loadavg().map((l) => l.toFixed(2)).join(' ');
    await post('warmup', WARMUP);
    await waitUntil(drainedOf('messages'), 60000, 'the warm-up to be sent');

    const roles = { [process.pid]: 'bench (client)', [api.pid]: 'api', [gateway.pid]: 'gateway', [sim.pid]: 'simulator' };
    /** Runs `send` (POSTs of `tag` texts), waits for every row `sent` (`sentOf`); throughput, latencies and CPU. */
    /**
     * Transactions committed in the run's database (pg_stat_database: every autocommit statement is one, so this counts
     * the round trips that wrote or read PostgreSQL, minus the bench's own probes). Backends report their counts when
     * idle (at most every second), hence the pause before reading.
     */
    let ownQueries = 0;
    const pgTransactions = async () => {
      await sleep(1500);
      await db.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await db.query(`SELECT (xact_commit + xact_rollback)::bigint AS n FROM pg_stat_database WHERE datname = current_database()`);
      ownQueries += 2;
      return Number(rows[0].n);
    };
    /**
     * BENCH_ROUND_TRIPS=1 (bench/round-trips.js runs this on a private PostgreSQL with pg_stat_statements and a private
     * Redis): every statement and Redis command of the measured phase, per message, by text / command name.
     */
    const ROUND_TRIPS = process.env.BENCH_ROUND_TRIPS === '1';
    if (ROUND_TRIPS) await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const OWN_PROBE = /pg_stat|count\(\*\)::int AS n FROM (floor_)?messages|xact_commit/;
    const roundTripsStart = async () => {
      if (!ROUND_TRIPS) return;
      await db.query('SELECT pg_stat_statements_reset()');
      await redis.config('RESETSTAT');
    };
    const roundTripsEnd = async () => {
      if (!ROUND_TRIPS) return null;
      const { rows } = await db.query(`SELECT calls::int, total_exec_time::float8 AS ms, query FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY calls DESC`);
      const statements = rows.filter((r) => !OWN_PROBE.test(r.query)).map((r) => ({ perMessage: r.calls / MESSAGES, execUs: (r.ms * 1000) / MESSAGES, query: r.query.replace(/\s+/g, ' ').slice(0, 140) }));
      const info = await redis.info('commandstats');
      const commands = [...info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)].map(([, name, calls]) => ({ name, perMessage: Number(calls) / MESSAGES })).filter((c) => !['info', 'config'].includes(c.name)).sort((a, b) => b.perMessage - a.perMessage);
      return { statements, commands };
    };
    /** `drained`: the queue probe; `sentOf(tag)`: the rows of `tag` sent, checked once the window has closed. */
    const measure = async (tag, send, drained, sentOf, procRoles = roles) => {
      await roundTripsStart();
      const xactsBefore = await pgTransactions();
      const ownBefore = ownQueries;
      const cpuBefore = cpuSnapshot();
      const started = performance.now();
      const latencies = await send(tag, MESSAGES);
      const posted = performance.now();
      await waitUntil(async () => (ownQueries++, await drained()), 180000, `every ${tag} message to be sent`);
      const seconds = (performance.now() - started) / 1000;
      const cpu = cpuBreakdown(cpuBefore, cpuSnapshot(), procRoles, database);
      ownQueries++;
      const sent = await sentOf(tag);
      if (sent !== MESSAGES) throw new Error(`${sent} of ${MESSAGES} ${tag} messages sent`);
      const ownDuring = ownQueries - ownBefore;
      const xacts = (await pgTransactions()) - xactsBefore - ownDuring;
      latencies.sort((a, b) => a - b);
      const roundTrips = await roundTripsEnd();
      return { rate: MESSAGES / seconds, seconds, postSeconds: (posted - started) / 1000, latencies, cpu, pgPerMessage: xacts / MESSAGES, roundTrips };
    };
    const pipeline = await measure('bench', post, drainedOf('messages'), sentCount);
    const { rows: onNetwork } = await db.query(`SELECT count(*)::int AS n FROM messages WHERE text LIKE 'bench %' AND status = 'sent' AND sent_at IS NOT NULL`);

    let bulk = null;
    if (BATCH > 0) {
      await postBatches('bulkwarm', WARMUP);
      await waitUntil(drainedOf('messages'), 60000, 'the bulk warm-up to be sent');
      bulk = await measure('bulk', postBatches, drainedOf('messages'), sentCount);
    }

    // the floor (issue 24 item 1): the same client, messages and concurrency against a bare Express + prepared INSERT +
    // PUBLISH, and a consumer that drains, sends through SimEngine and records with one prepared UPDATE
    const floorEnv = { ...process.env, DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX: PREFIX };
    const floorSessions = Array.from({ length: SESSIONS }, (_, s) => `floor-${runId}-${s}`);
    const floorConsumer = fork(join(__dirname, 'messages-floor.js'), ['consumer'], { env: { ...floorEnv, FLOOR_SIM_URL: simUrl, FLOOR_SESSIONS: JSON.stringify(floorSessions) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(floorConsumer);
    await nextMessage(floorConsumer, 'the floor consumer');
    const floorApi = fork(join(__dirname, 'messages-floor.js'), ['api'], { env: floorEnv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(floorApi);
    const { port: floorPort } = await nextMessage(floorApi, 'the floor API');
    const floorPool = new Pool(`http://127.0.0.1:${floorPort}`, { connections: CONCURRENCY, keepAliveTimeout: 30000 });
    const floorPost = (tag, n) =>
      inFlight(n, CONCURRENCY, async (i) => {
        const res = await floorPool.request({ method: 'POST', path: `/sessions/${floorSessions[i % SESSIONS]}/messages`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ to: TO, text: `${tag} ${i}` }) });
        const text = await res.body.text();
        if (res.statusCode !== 202) throw new Error(`floor answered ${res.statusCode}: ${text}`);
        JSON.parse(text);
      });
    const floorSent = async (tag) => (await db.query(`SELECT count(*)::int AS n FROM floor_messages WHERE status = 'sent' AND text LIKE $1`, [`${tag} %`])).rows[0].n;
    await floorPost('warmup', WARMUP);
    await waitUntil(drainedOf('floor_messages'), 60000, 'the floor warm-up to be sent');
    const floorRoles = { [process.pid]: 'bench (client)', [floorApi.pid]: 'floor api', [floorConsumer.pid]: 'floor consumer', [sim.pid]: 'simulator' };
    const floor = await measure('bench', floorPost, drainedOf('floor_messages'), floorSent, floorRoles);
    // more pairs in turns, so that a neighbour's burst or the machine's drift hits both sides of a pair
    const pairs = [[pipeline.rate, floor.rate]];
    for (let r = 2; r <= FLOOR_ROUNDS; r++) {
      const again = await measure(`round${r}`, post, drainedOf('messages'), sentCount);
      const floorAgain = await measure(`floor${r}`, floorPost, drainedOf('floor_messages'), floorSent, floorRoles);
      pairs.push([again.rate, floorAgain.rate]);
    }
    await floorPool.close();
    floorApi.kill('SIGTERM');
    floorConsumer.kill('SIGTERM');

    // the limit, on the same simulator, after the pipeline has finished (so the two never share the CPU)
    const { rate: engine, cpu: engineCpu } = await engineBaseline(simUrl, MESSAGES, roles);

    const cores = require('node:os').cpus().length;
    console.log('');
    console.log(`load average before: ${loadBefore}; after: ${require('node:os').loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`SimEngine send loop             ${fmt(engine)} msgs/s   (the limit: ${SESSIONS} connections, one send at a time each)`);
    console.log(`floor (express+pg+redis+engine) ${fmt(floor.rate)} msgs/s   (first POST to last row sent: ${floor.seconds.toFixed(2)} s; POSTs took ${floor.postSeconds.toFixed(2)} s)`);
    console.log(`API → gateway → simulator       ${fmt(pipeline.rate)} msgs/s   (first POST to last row sent: ${pipeline.seconds.toFixed(2)} s; POSTs took ${pipeline.postSeconds.toFixed(2)} s; ${onNetwork[0].n} rows sent)`);
    if (bulk) console.log(`bulk (messages:batch × ${BATCH})    ${fmt(bulk.rate)} msgs/s   (first POST to last row sent: ${bulk.seconds.toFixed(2)} s; POSTs took ${bulk.postSeconds.toFixed(2)} s; ${BATCH_CONCURRENCY} batches in flight)`);
    console.log(`POST /messages latency: p50 ${percentile(pipeline.latencies, 50).toFixed(1)} ms, p99 ${percentile(pipeline.latencies, 99).toFixed(1)} ms (${pipeline.latencies.length} POSTs, ${CONCURRENCY} in flight)`);
    console.log(`floor POST latency:     p50 ${percentile(floor.latencies, 50).toFixed(1)} ms, p99 ${percentile(floor.latencies, 99).toFixed(1)} ms`);
    if (bulk) console.log(`POST /messages:batch latency: p50 ${percentile(bulk.latencies, 50).toFixed(1)} ms, p99 ${percentile(bulk.latencies, 99).toFixed(1)} ms (${bulk.latencies.length} batches)`);
    if (pipeline.cpu.length) {
      console.log(`CPU per message (${cores} cores; µs by process):`);
      console.log(`  pipeline: ${cpuLine(pipeline.cpu, MESSAGES)}`);
      if (bulk) console.log(`  bulk:     ${cpuLine(bulk.cpu, MESSAGES)}`);
      console.log(`  floor:    ${cpuLine(floor.cpu, MESSAGES)}`);
      console.log(`  engine:   ${cpuLine(engineCpu, MESSAGES)}`);
    }
    console.log(`PostgreSQL transactions (round trips) per message: pipeline ${pipeline.pgPerMessage.toFixed(2)}${bulk ? `, bulk ${bulk.pgPerMessage.toFixed(2)}` : ''}, floor ${floor.pgPerMessage.toFixed(2)}`);
    const roundTripLines = (name, r) => {
      if (!r) return;
      const total = (xs) => xs.reduce((n, x) => n + x.perMessage, 0).toFixed(2);
      console.log(`${name}: PostgreSQL statements per message ${total(r.statements)}; Redis commands per message ${total(r.commands)}`);
      for (const st of r.statements.filter((x) => x.perMessage >= 0.01 || x.execUs >= 1)) console.log(`  pg    ${st.perMessage.toFixed(3)}  ${st.execUs.toFixed(0).padStart(4)} µs  ${st.query}`);
      for (const c of r.commands.filter((x) => x.perMessage >= 0.01)) console.log(`  redis ${c.perMessage.toFixed(3)}  ${c.name}`);
    };
    roundTripLines('pipeline', pipeline.roundTrips);
    if (bulk) roundTripLines('bulk', bulk.roundTrips);
    roundTripLines('floor', floor.roundTrips);
    console.log(`vs engine: ${(pipeline.rate / engine).toFixed(2)}`);
    const ratios = pairs.map(([p, f]) => p / f);
    if (pairs.length > 1) {
      const rates = pairs.map(([p, f]) => `${p.toFixed(0)}/${f.toFixed(0)}`).join(', ');
      console.log(`pairs vs floor (pipeline ÷ floor, in turns): ${ratios.map((x) => x.toFixed(2)).join(', ')} (msgs/s: ${rates})`);
    }
    console.log(`vs floor: ${median(ratios).toFixed(2)}`);
    if (bulk) console.log(`bulk vs engine: ${(bulk.rate / engine).toFixed(2)}`);
    // issue 24 item 3's arithmetic, per run: the most the bulk path could reach on these cores at its measured CPU per
    // message (every process of the path busy 100 % of the time, no wait anywhere), and what that would be of the engine
    if (bulk?.cpu.length) {
      const bulkCpu = ownCpuPerMessage(bulk.cpu, MESSAGES);
      const ceiling = cores / bulkCpu;
      console.log(`bulk ceiling (${cores} cores ÷ ${(bulkCpu * 1e6).toFixed(0)} µs per message): ${ceiling.toFixed(0)} msgs/s, ${(ceiling / engine).toFixed(2)} of the engine loop`);
    }
  } finally {
    clearTimeout(bound);
    await pool?.close();
    await db?.end().catch(() => undefined);
    // the simulator last: a session whose network went first would retry (and log it) until its gateway stopped
    await stopChildren((c) => c !== sim);
    await stopChildren();
    await cleanup(redis);
    redis.disconnect();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
