#!/usr/bin/env node
// One organization's backlog against another's fresh events (issue 37): organization A publishes a backlog
// (BENCH_BACKLOG, 40 000 events) through the real path (outbox + stream) to a receiver that never answers
// (BENCH_A_MODE=hung, the default) or answers after 1 s (slow); organization B then publishes ~10 events/s
// (BENCH_B_RATE) for BENCH_B_SECONDS to a fast receiver. Prints B's event-to-receiver latency:
// `second org p99: <ms>`, with the backlog size. Events of B that never arrive within BENCH_WAIT_SECONDS count
// as not arrived (the p99 is then a lower bound, marked ">"). Own database and Redis prefix, removed at the end.
'use strict';
const { fork, spawn } = require('node:child_process');
const { createServer } = require('node:http');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 40000);
const A_MODE = process.env.BENCH_A_MODE ?? 'hung';
const B_RATE = Number(process.env.BENCH_B_RATE ?? 10);
const B_SECONDS = Number(process.env.BENCH_B_SECONDS ?? 30);
const WAIT_SECONDS = Number(process.env.BENCH_WAIT_SECONDS ?? 90);
/** BENCH_TRACE=1: every 250 ms, how far the dispatchers' group has read the event stream; B's latency by second */
const TRACE = process.env.BENCH_TRACE === '1';

// ---------------------------------------------------------------- receiver (child process)
if (process.argv[2] === '--receiver') {
  const mode = process.argv[3];
  const seen = new Map(); // path -> Set of request ids
  const latencies = [];
  const arrivals = []; // [publish timestamp, latency] of B's events, for BENCH_TRACE
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
        if (path === '/b') {
          const ts = JSON.parse(Buffer.concat(chunks).toString()).timestamp;
          latencies.push(now - ts);
          arrivals.push([ts, now - ts]);
        }
      }
      if (path !== '/a') return void res.writeHead(200).end();
      if (mode === 'slow') setTimeout(() => res.writeHead(200).end(), 1000);
      // hung: accepted, never answered (the dispatcher's timeout ends it)
    });
  });
  server.keepAliveTimeout = 60000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (m) => {
    if (m.cmd === 'count') process.send({ count: seen.get(m.path)?.size ?? 0 });
    if (m.cmd === 'latencies') process.send({ latencies, arrivals });
  });
  return;
}

// ---------------------------------------------------------------- orchestration
const IORedis = require('ioredis');
const { Client } = require('pg');
const dist = (p) => require(join(ROOT, 'dist', p));
const { migrate, newId, Db, poolSettings } = dist('libs/database/src');
const { EventPublisher } = dist('libs/events/src');
const { SecretBox } = dist('libs/crypto/src');
const { benchRun, freePort, nextMessage, percentile, sleep, waitUntil } = require('./support');

const { DATABASE_URL, REDIS_URL, PREFIX, ENCRYPTION_KEY, cleanup } = benchRun();

function receiverCall(child, msg) {
  const answer = nextMessage(child, 'the receiver');
  child.send(msg);
  return answer;
}

async function startDispatcher(opsPort) {
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/webhook-dispatcher/src/main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL,
      REDIS_URL,
      REDIS_KEY_PREFIX: PREFIX,
      SECRET_ENCRYPTION_KEY: ENCRYPTION_KEY,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      DISPATCHER_HEALTH_PORT: String(opsPort),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitUntil(() => fetch(`http://127.0.0.1:${opsPort}/readyz`).then((r) => r.ok, () => false), 'the dispatcher ready', 20000).catch((err) => {
    child.kill('SIGKILL');
    throw err;
  });
  return child;
}

/** Samples the dispatchers' group on the stream every 250 ms: how far behind the newest entry it reads. */
function traceStream(redis, key, epoch0, out) {
  let on = true;
  void (async () => {
    while (on) {
      const at = Date.now();
      const [groups, last] = await Promise.all([redis.xinfo('GROUPS', key).catch(() => []), redis.xrevrange(key, '+', '-', 'COUNT', 1).catch(() => [])]);
      const g = groups.map((fields) => Object.fromEntries(fields.reduce((acc, v, i, a) => (i % 2 ? acc : [...acc, [v, a[i + 1]]]), []))).find((x) => x.name === 'webhook-dispatcher');
      if (g) {
        const delivered = Number(String(g['last-delivered-id']).split('-')[0]);
        const newest = last[0] ? Number(last[0][0].split('-')[0]) : delivered;
        out.push({ t: at - epoch0, behindMs: Math.max(0, newest - delivered), lag: g.lag, pending: g.pending });
      }
      await sleep(250);
    }
  })();
  return { stop: () => (on = false) };
}

function printTrace(trace, arrivals, epoch0) {
  console.log('trace: t (s since the backlog started) | group read position behind the newest entry (ms) | lag (entries) | pending');
  for (const x of trace.filter((_, i) => i % 2 === 0).slice(0, 80)) console.log(`  ${(x.t / 1000).toFixed(2)} | ${x.behindMs} | ${x.lag} | ${x.pending}`);
  const bySecond = new Map();
  for (const [ts, lat] of arrivals) {
    const s = Math.floor((ts - epoch0) / 1000);
    bySecond.set(s, Math.max(bySecond.get(s) ?? 0, lat));
  }
  console.log('B latency by publish second (s since the backlog started: max ms):', [...bySecond].sort((a, b) => a[0] - b[0]).map(([s, l]) => `${s}:${l}`).join(' '));
}

async function main() {
  const receiver = fork(__filename, ['--receiver', A_MODE], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await nextMessage(receiver, 'the receiver');
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  let dispatcher = null;
  const bound = setTimeout(() => {
    console.error('benchmark exceeded its time bound');
    dispatcher?.kill('SIGKILL');
    receiver.kill('SIGKILL');
    cleanup(redis).finally(() => process.exit(1));
  }, (B_SECONDS + WAIT_SECONDS + 240) * 1000);
  try {
    console.log(`backlog benchmark: ${BACKLOG} events of organization A (${A_MODE} receiver), then organization B at ${B_RATE}/s for ${B_SECONDS} s`);
    await migrate(DATABASE_URL);
    const db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    const box = new SecretBox([Buffer.from(ENCRYPTION_KEY, 'base64')]);
    const org = async (name) => {
      const id = newId('org');
      await db.query(`INSERT INTO organizations (id, name) VALUES ($1, $2)`, [id, name]);
      return id;
    };
    const hook = async (orgId, path, event) => {
      await db.query(
        `INSERT INTO webhooks (id, organization_id, url, events, retry_policy, secret_encrypted) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
        [newId('whk'), orgId, `http://127.0.0.1:${port}${path}`, [event], JSON.stringify({ policy: 'exponential', delaySeconds: 2, attempts: 15 }), box.encrypt('bench-secret')],
      );
    };
    const orgA = await org('backlog A');
    const orgB = await org('fresh B');
    await hook(orgA, '/a', 'message.ack');
    await hook(orgB, '/b', 'message.received');
    dispatcher = await startDispatcher(await freePort());
    // the publisher writes through the data layer (libs/database's Db), as the apps' does
    const ds = Db.open(poolSettings(DATABASE_URL, { max: 4 }));
    const publisher = new EventPublisher(ds, redis, PREFIX);
    const build = (organizationId, event, i) => publisher.build({ event, organizationId, sessionId: null, payload: { i } });

    const t0 = performance.now();
    const epoch0 = Date.now();
    const trace = [];
    const tracer = TRACE ? traceStream(redis, `${PREFIX}:events`, epoch0, trace) : null;
    for (let i = 0; i < BACKLOG; i += 1000) {
      await publisher.publishEnvelopes(Array.from({ length: Math.min(1000, BACKLOG - i) }, (_, k) => build(orgA, 'message.ack', i + k)));
    }
    console.log(`backlog published in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const total = Math.round(B_RATE * B_SECONDS);
    const b0 = performance.now();
    for (let sent = 0; sent < total; sent++) {
      await publisher.publishEnvelopes([build(orgB, 'message.received', sent)]);
      const wait = b0 + ((sent + 1) / B_RATE) * 1000 - performance.now();
      if (wait > 0) await sleep(wait);
    }
    const aAtEnd = (await receiverCall(receiver, { cmd: 'count', path: '/a' })).count;
    const deadline = Date.now() + WAIT_SECONDS * 1000;
    let arrived = 0;
    while ((arrived = (await receiverCall(receiver, { cmd: 'count', path: '/b' })).count) < total && Date.now() < deadline) await sleep(200);
    const { latencies, arrivals } = await receiverCall(receiver, { cmd: 'latencies' });
    if (tracer) {
      tracer.stop();
      printTrace(trace, arrivals, epoch0);
    }
    latencies.sort((a, b) => a - b);
    // events that never arrived are later than any that did: the figure is then a lower bound
    const missing = total - latencies.length;
    const p = (q) => (Math.ceil((total * q) / 100) > latencies.length ? `> ${WAIT_SECONDS * 1000}` : String(percentile(latencies, q)));
    console.log('');
    console.log(`second org p99: ${p(99)} ms (backlog ${BACKLOG} events of the first org at a ${A_MODE} receiver; p50 ${p(50)} ms, max ${missing ? `> ${WAIT_SECONDS * 1000}` : latencies[latencies.length - 1]} ms; ${arrived}/${total} arrived)`);
    console.log(`first org: ${aAtEnd} of ${BACKLOG} events at its receiver when the second org stopped publishing`);
    await ds.close();
    await db.end();
  } finally {
    clearTimeout(bound);
    if (dispatcher && dispatcher.exitCode === null && dispatcher.signalCode === null) {
      const exited = new Promise((r) => dispatcher.once('exit', r));
      // a hung receiver holds POSTs open: close it first so the dispatcher stops at once
      receiver.kill();
      dispatcher.kill('SIGTERM');
      const timer = setTimeout(() => dispatcher.kill('SIGKILL'), 30000);
      await exited;
      clearTimeout(timer);
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
