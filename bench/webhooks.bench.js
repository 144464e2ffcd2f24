#!/usr/bin/env node
// Webhook delivery benchmark: the dispatcher (full delivery log in PostgreSQL) against two baselines
// measured in the same run on the same loopback receiver: a raw undici POST+HMAC loop (the limit) and
// a plain BullMQ worker doing POST+HMAC with no log (what a user would write by hand).
// Uses its own throwaway database and Redis prefix and removes both at the end.
'use strict';
const { fork, spawn } = require('node:child_process');
const { createHmac } = require('node:crypto');
const { createServer } = require('node:http');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
// 30 000: long enough that both sides run warm for seconds (sustained), not a sub-second sprint
const EVENTS = Number(process.env.BENCH_EVENTS ?? 30000);
/** the raw loop is cheap and swings from run to run: its figure is the median of this many runs */
const RAW_RUNS = 3;
const WARMUP_EVENTS = Math.min(2000, EVENTS);
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 5);
/** the latency run's rate (events/s); default: half the measured throughput. Fixed, it compares two builds at one rate. */
const LATENCY_RATE = Number(process.env.BENCH_LATENCY_RATE ?? 0);
const SECRET = 'bench-secret';

// ---------------------------------------------------------------- receiver (child process)
if (process.argv[2] === '--receiver') {
  const seen = new Map(); // path -> Set of request ids
  const latencies = [];
  let first = new Map();
  let last = new Map();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const path = req.url;
      const id = req.headers['x-webhook-request-id'];
      let set = seen.get(path);
      if (!set) seen.set(path, (set = new Set()));
      if (!set.has(id)) {
        set.add(id);
        if (!first.has(path)) first.set(path, now);
        last.set(path, now);
        if (path === '/latency') latencies.push(now - JSON.parse(Buffer.concat(chunks).toString()).timestamp);
      }
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (m) => {
    if (m.cmd === 'count') process.send({ count: seen.get(m.path)?.size ?? 0, first: first.get(m.path), last: last.get(m.path) });
    if (m.cmd === 'latencies') process.send({ latencies });
  });
  return;
}

// ---------------------------------------------------------------- orchestration
const { Pool } = require('undici');
const IORedis = require('ioredis');
const { Queue, Worker } = require('bullmq');
const { Client } = require('pg');
const dist = (p) => require(join(ROOT, 'dist', p));
const { migrate, newId, Db, poolSettings } = dist('libs/database/src');
const { EventPublisher } = dist('libs/events/src');
const { SecretBox } = dist('libs/crypto/src');
const { benchRun, cpuBreakdown, cpuSnapshot, freePort, median, nextMessage, nodeArgsFrom, ownCpu, percentile } = require('./support');

const { runId, DATABASE_URL, REDIS_URL, PREFIX, ENCRYPTION_KEY, cleanup } = benchRun();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fmt = (n) => n.toFixed(0).padStart(7);

function receiverCall(child, msg) {
  const answer = nextMessage(child, 'the receiver');
  child.send(msg);
  return answer;
}

async function waitForCount(child, path, n, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await receiverCall(child, { cmd: 'count', path });
    if (r.count >= n) return r;
    if (Date.now() > deadline) throw new Error(`${path}: only ${r.count}/${n} received within ${timeoutMs} ms`);
    await sleep(50);
  }
}

function envelope(i, orgId) {
  return { id: `evt_${runId}_${i}`, event: 'message.received', organizationId: orgId, sessionId: null, timestamp: Date.now(), payload: { text: `hello ${i}`, from: '4917600000000@s.whatsapp.net' } };
}

async function rawBaseline(port, events = EVENTS) {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY, keepAliveTimeout: 30000 });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < events) {
        const i = next++;
        const body = Buffer.from(JSON.stringify(envelope(i, 'org_raw')));
        const res = await pool.request({
          path: '/raw',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-webhook-request-id': `raw_${i}`, 'x-webhook-timestamp': String(Date.now()), 'x-webhook-hmac': createHmac('sha512', SECRET).update(body).digest('hex') },
          body,
        });
        await res.body.dump();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return events / seconds;
}

async function bullmqBaseline(port, child) {
  const connection = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  const workerConnection = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  const prefix = `${PREFIX}:plain`;
  const queue = new Queue('plain-webhooks', { connection, prefix });
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY, keepAliveTimeout: 30000 });
  const worker = new Worker(
    'plain-webhooks',
    async (job) => {
      const body = Buffer.from(JSON.stringify(job.data));
      const res = await pool.request({
        path: '/bullmq',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-webhook-request-id': job.data.id, 'x-webhook-timestamp': String(Date.now()), 'x-webhook-hmac': createHmac('sha512', SECRET).update(body).digest('hex') },
        body,
      });
      await res.body.dump();
      if (res.statusCode >= 300) throw new Error(`status ${res.statusCode}`);
    },
    { connection: workerConnection, prefix, concurrency: CONCURRENCY, removeOnComplete: { count: 0 }, autorun: true },
  );
  const started = performance.now();
  for (let i = 0; i < EVENTS; i += 500) {
    await queue.addBulk(Array.from({ length: Math.min(500, EVENTS - i) }, (_, k) => ({ name: 'post', data: envelope(i + k, 'org_bullmq'), opts: { removeOnComplete: true, attempts: 3 } })));
  }
  await waitForCount(child, '/bullmq', EVENTS, 120000);
  const seconds = (performance.now() - started) / 1000;
  await worker.close();
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await pool.close();
  connection.disconnect();
  workerConnection.disconnect();
  return EVENTS / seconds;
}

async function startDispatcher(opsPort) {
  // BENCH_DISPATCHER_NODE_ARGS: e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the dispatcher
  const child = spawn(process.execPath, [...nodeArgsFrom('BENCH_DISPATCHER_NODE_ARGS'), join(ROOT, 'dist/apps/webhook-dispatcher/src/main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL,
      REDIS_URL,
      REDIS_KEY_PREFIX: PREFIX,
      SECRET_ENCRYPTION_KEY: ENCRYPTION_KEY,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      DISPATCHER_CONCURRENCY: String(CONCURRENCY),
      DISPATCHER_HEALTH_PORT: String(opsPort),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${opsPort}/readyz`)).ok) return child;
    } catch {
      /* not yet */
    }
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error('dispatcher did not become ready');
}

/** µs of CPU per delivery spent by the bench's own processes, PostgreSQL and Redis (not "other"). */
function cpuPerDelivery(breakdown) {
  return (ownCpu(breakdown).reduce((n, [, v]) => n + v, 0) / EVENTS) * 1e6;
}

function cpuLine(breakdown) {
  const total = breakdown.reduce((n, [, v]) => n + v, 0);
  const parts = breakdown.filter(([, v]) => v >= 0.05).map(([k, v]) => `${k} ${v.toFixed(2)}`);
  return `${parts.join(', ')}; total ${total.toFixed(2)} s, ${cpuPerDelivery(breakdown).toFixed(0)} µs per delivery without "other"`;
}

async function main() {
  const receiver = fork(__filename, ['--receiver'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await nextMessage(receiver, 'the receiver');
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  let dispatcher = null;
  const bound = setTimeout(() => {
    console.error('benchmark exceeded its time bound');
    process.exitCode = 1;
    dispatcher?.kill('SIGKILL');
    receiver.kill('SIGKILL');
    cleanup(redis).finally(() => process.exit(1));
  }, 170_000);
  try {
    console.log(`webhook delivery benchmark: ${EVENTS} events, concurrency ${CONCURRENCY}, loopback receiver (separate process)`);
    await migrate(DATABASE_URL);

    // warm-up, then the limit: raw undici POST+HMAC
    // BENCH_SKIP_BASELINES=1 is for profiling the dispatcher alone; it prints no ratio
    const skip = process.env.BENCH_SKIP_BASELINES === '1';
    const baseRoles = { [process.pid]: 'bench (client/worker)', [receiver.pid]: 'receiver' };
    if (!skip) await rawBaseline(port, WARMUP_EVENTS);
    let snap = cpuSnapshot();
    const rawRuns = [];
    for (let r = 0; r < (skip ? 0 : RAW_RUNS); r++) rawRuns.push(await rawBaseline(port, EVENTS));
    const raw = skip ? NaN : median(rawRuns);
    // CPU per delivery over all raw runs together
    const rawCpu = cpuBreakdown(snap, (snap = cpuSnapshot()), baseRoles).map(([k, v]) => [k, v / Math.max(1, RAW_RUNS)]);
    const bull = skip ? NaN : await bullmqBaseline(port, receiver);
    const bullCpu = cpuBreakdown(snap, cpuSnapshot(), baseRoles);

    // the dispatcher: outbox + stream → fan-out → delivery rows + jobs → signed POST → attempt log
    const db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    const orgId = newId('org');
    await db.query(`INSERT INTO organizations (id, name) VALUES ($1, 'bench')`, [orgId]);
    const box = new SecretBox([Buffer.from(ENCRYPTION_KEY, 'base64')]);
    const hook = async (path) => {
      const id = newId('whk');
      await db.query(
        `INSERT INTO webhooks (id, organization_id, url, events, retry_policy, secret_encrypted) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
        [id, orgId, `http://127.0.0.1:${port}${path}`, ['message.received'], JSON.stringify({ policy: 'exponential', delaySeconds: 2, attempts: 15 }), box.encrypt(SECRET)],
      );
      return id;
    };
    dispatcher = await startDispatcher(await freePort());
    // the publisher writes through the data layer (libs/database's Db), as the apps' does
    const ds = Db.open(poolSettings(DATABASE_URL, { max: 4 }));
    const publisher = new EventPublisher(ds, redis, PREFIX);
    const build = (i) => publisher.build({ event: 'message.received', organizationId: orgId, sessionId: null, payload: { text: `hello ${i}`, from: '4917600000000@s.whatsapp.net' } });

    // warm-up, as for the raw loop: JIT, connection pools and caches, on a webhook of its own. The measured webhook is
    // made only after it: one made before and switched off would get the warm-up's events parked, and re-enabling it
    // would resume them inside the measured run (extra rows and statements that are not the delivery path)
    const warmHook = await hook('/warmup');
    await redis.publish(`${PREFIX}:webhooks:changed`, warmHook);
    await sleep(300);
    await publisher.publishEnvelopes(Array.from({ length: WARMUP_EVENTS }, (_, k) => build(-1 - k)));
    await waitForCount(receiver, '/warmup', WARMUP_EVENTS, 60000);
    await db.query(`UPDATE webhooks SET active = false WHERE id = $1`, [warmHook]);
    const throughputHook = await hook('/dispatcher');
    await redis.publish(`${PREFIX}:webhooks:changed`, warmHook);
    await redis.publish(`${PREFIX}:webhooks:changed`, throughputHook);
    await sleep(300);

    const roles = { [process.pid]: 'bench (publisher)', [receiver.pid]: 'receiver', [dispatcher.pid]: 'dispatcher' };
    const cpuBefore = cpuSnapshot();
    const started = performance.now();
    for (let i = 0; i < EVENTS; i += 500) {
      await publisher.publishEnvelopes(Array.from({ length: Math.min(500, EVENTS - i) }, (_, k) => build(i + k)));
    }
    const published = performance.now();
    await waitForCount(receiver, '/dispatcher', EVENTS, 150000);
    // the clock stops when the log is complete too: every delivery row delivered, one attempt row each
    for (let i = 0; i < 1000; i++) {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND status = 'delivered'`, [throughputHook]);
      if (rows[0].n >= EVENTS) break;
      await sleep(10);
    }
    const seconds = (performance.now() - started) / 1000;
    const full = EVENTS / seconds;
    const cpu = cpuBreakdown(cpuBefore, cpuSnapshot(), roles);
    const publishSeconds = (published - started) / 1000;
    const { rows: logged } = await db.query(
      `SELECT (SELECT count(*)::int FROM deliveries WHERE webhook_id = $1 AND status = 'delivered') AS delivered,
              (SELECT count(*)::int FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1) AS attempts`,
      [throughputHook],
    );

    // latency at a steady rate of half the measured throughput (queueing delay of a saturated run says little)
    await db.query(`UPDATE webhooks SET active = false WHERE id = $1`, [throughputHook]);
    await hook('/latency');
    await db.query(`UPDATE webhooks SET active = false WHERE url LIKE '%/dispatcher'`);
    await redis.publish(`${PREFIX}:webhooks:changed`, throughputHook);
    await sleep(300);
    // the new webhook is picked up by the cache refresh; make sure with a notification per id
    const { rows: hooks } = await db.query(`SELECT id FROM webhooks WHERE url LIKE '%/latency'`);
    await redis.publish(`${PREFIX}:webhooks:changed`, hooks[0].id);
    await sleep(300);
    const rate = LATENCY_RATE > 0 ? LATENCY_RATE : Math.max(50, Math.floor(full / 2));
    const tickMs = 20;
    const perTick = Math.max(1, Math.round((rate * tickMs) / 1000));
    const total = Math.floor(rate * LATENCY_SECONDS);
    let sent = 0;
    const t0 = performance.now();
    while (sent < total) {
      const batch = Array.from({ length: Math.min(perTick, total - sent) }, (_, k) => build(EVENTS + sent + k));
      await publisher.publishEnvelopes(batch);
      sent += batch.length;
      const due = t0 + (sent / rate) * 1000;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
    }
    await waitForCount(receiver, '/latency', total, 60000);
    const { latencies } = await receiverCall(receiver, { cmd: 'latencies' });
    latencies.sort((a, b) => a - b);

    console.log('');
    console.log(`raw undici POST+HMAC loop      ${fmt(raw)} deliveries/s   (the limit; median of ${rawRuns.map((r) => r.toFixed(0)).join(', ')})`);
    console.log(`plain BullMQ worker, no log    ${fmt(bull)} deliveries/s`);
    console.log(`dispatcher, full delivery log  ${fmt(full)} deliveries/s   (${logged[0].delivered} delivery rows delivered, ${logged[0].attempts} attempt rows; publishing took ${publishSeconds.toFixed(1)} s)`);
    console.log(`event-to-delivery latency at ${rate}/s: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms (${latencies.length} events)`);
    if (cpu.length) {
      console.log(`CPU seconds per run (${require('node:os').cpus().length} cores; "other" is whatever else ran on the machine meanwhile):`);
      if (!skip) {
        console.log(`  raw:        ${cpuLine(rawCpu)} (per run)`);
        console.log(`  bullmq:     ${cpuLine(bullCpu)}`);
      }
      console.log(`  dispatcher: ${cpuLine(cpu)}`);
    }
    if (!skip) {
      console.log(`vs bullmq: ${(full / bull).toFixed(2)}`);
      // the same comparison in CPU: what a logged delivery costs the machine against a bare POST+HMAC
      if (cpu.length) console.log(`CPU per delivery, raw ÷ dispatcher: ${(cpuPerDelivery(rawCpu) / cpuPerDelivery(cpu)).toFixed(2)}`);
      console.log(`vs raw: ${(full / raw).toFixed(2)}`);
    }

    await ds.close();
    await db.end();
  } finally {
    clearTimeout(bound);
    // a dispatcher that already died would never emit 'exit' again, and cleanup would hang
    if (dispatcher && dispatcher.exitCode === null && dispatcher.signalCode === null) {
      const exited = new Promise((r) => dispatcher.once('exit', r));
      dispatcher.kill('SIGTERM');
      await exited;
    }
    receiver.kill();
    await cleanup(redis);
    redis.disconnect();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
