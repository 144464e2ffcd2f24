#!/usr/bin/env node
// Event sink benchmark (CONTRACT 15, run by `npm run bench:webhooks` after the webhook part): deliveries per second
// through the dispatcher (outbox + stream → fan-out → publish with confirm → delivery log) to RabbitMQ and to NATS
// JetStream, each beside the bare client publishing the same envelopes with confirms at the same concurrency in the
// same run (`vs raw`). Own database, Redis prefix, exchange, queue and stream, all removed at the end.
'use strict';
const { spawn } = require('node:child_process');
const { join } = require('node:path');
const amqp = require('amqplib');
const { connect: natsConnect } = require('@nats-io/transport-node');
const { jetstream, jetstreamManager } = require('@nats-io/jetstream');
const { headers: natsHeaders } = require('@nats-io/nats-core');

const ROOT = join(__dirname, '..');
const dist = (p) => require(join(ROOT, 'dist', p));
const { migrate, newId, Db, poolSettings } = dist('libs/database/src');
const { EventPublisher } = dist('libs/events/src');
const { SecretBox } = dist('libs/crypto/src');
const { benchRun, cpuBreakdown, cpuSnapshot, freePort, machineCpuSeconds, sleep } = require('./support');

const EVENTS = Number(process.env.BENCH_SINK_EVENTS ?? 10000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
/** the three measurements of a broker alternate this many times (the machine's load moves between them) */
const ROUNDS = Number(process.env.BENCH_SINK_ROUNDS ?? 4);
const AMQP_URL = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672/';
/** BENCH_SINK_KINDS=amqp (or nats) runs one broker only */
const KINDS = (process.env.BENCH_SINK_KINDS ?? 'amqp,nats').split(',');
const NATS_SERVER = process.env.BENCH_NATS_SERVER ?? '127.0.0.1:4222';
const { runId, DATABASE_URL, REDIS_URL, PREFIX, ENCRYPTION_KEY, cleanup } = benchRun();
const NAME = `bench-sinks-${runId}`.replace(/[^A-Za-z0-9-]/g, '-');
const STREAM = NAME.replace(/-/g, '_').toUpperCase();
const fmt = (n) => n.toFixed(0).padStart(7);

/** user + system CPU seconds of a process so far (Linux), NaN elsewhere */
function cpuSeconds(pid) {
  try {
    const fields = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** µs of CPU per item, the machine's total first, then each process group (cpuBreakdown's names) */
function cpuPerItem(phase, items) {
  const us = (seconds) => ((seconds / items) * 1e6).toFixed(0);
  return [`machine ${us(phase.machine)}`, ...[...phase.groups].sort((a, b) => b[1] - a[1]).map(([name, seconds]) => `${name} ${us(seconds)}`)].join(', ');
}

/** write system calls of a process so far (Linux: its sockets' writes among them), NaN elsewhere */
function writeCalls(pid) {
  try {
    return Number(/syscw: (\d+)/.exec(require('node:fs').readFileSync(`/proc/${pid}/io`, 'utf8'))[1]);
  } catch {
    return NaN;
  }
}

/** `n` publishes, at most CONCURRENCY awaiting their confirm at once. */
async function inFlight(n, publishOne) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await publishOne(next++);
    }),
  );
}

// the bare clients publish what a sink publishes (docs/event-sinks.md, "The message"): the same bytes, properties and
// headers, persistent and mandatory with a publisher confirm; `js.publish` with the message id and the same headers
const ORG = 'org_bench';

async function rawAmqp(bodies, ids) {
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createConfirmChannel();
  const started = performance.now();
  await inFlight(bodies.length, (i) =>
    new Promise((resolve, reject) =>
      ch.publish(
        NAME,
        'wa.message.received',
        bodies[i],
        {
          messageId: ids[i], contentType: 'application/json', persistent: true, mandatory: true, type: 'message.received', timestamp: Math.floor(Date.now() / 1000),
          appId: 'whatsapp-gateway', headers: { 'wa-event': 'message.received', 'wa-organization-id': ORG, 'wa-session-id': '' },
        },
        (err) => (err ? reject(err) : resolve()),
      ),
    ),
  );
  const rate = bodies.length / ((performance.now() - started) / 1000);
  await conn.close();
  return rate;
}

async function rawNats(bodies, ids) {
  const nc = await natsConnect({ servers: NATS_SERVER });
  const js = jetstream(nc);
  const started = performance.now();
  await inFlight(bodies.length, (i) => {
    const h = natsHeaders();
    h.set('Content-Type', 'application/json');
    h.set('Wa-Event', 'message.received');
    h.set('Wa-Organization-Id', ORG);
    return js.publish(`${NAME}.message.received`, bodies[i], { msgID: `raw-${ids[i]}`, headers: h });
  });
  const rate = bodies.length / ((performance.now() - started) / 1000);
  await nc.close();
  return rate;
}

/**
 * The dispatcher's own destination (AmqpDestination / NatsDestination from dist) alone in this process, without the
 * pipeline around it: where the sink code itself stands against the bare client.
 */
async function destinationAlone(kind, url, target, bodies, ids) {
  const { AmqpDestination } = dist('apps/webhook-dispatcher/src/sinks/amqp-destination');
  const { NatsDestination } = dist('apps/webhook-dispatcher/src/sinks/nats-destination');
  const options = { timeoutMs: 10000, allowPrivateTargets: true };
  const destination = kind === 'amqp' ? new AmqpDestination(options) : new NatsDestination(options);
  const sink = { id: `snk_alone_${kind}`, url, target };
  const started = performance.now();
  await inFlight(bodies.length, async (i) => {
    const r = await destination.deliver(sink, { eventId: `alone-${ids[i]}`, eventType: 'message.received', organizationId: ORG, sessionId: null, body: bodies[i], now: Date.now() });
    if (!r.confirmed) throw new Error(`${kind}: ${r.error}`);
  });
  const rate = bodies.length / ((performance.now() - started) / 1000);
  await destination.close();
  return rate;
}

async function main() {
  const IORedis = require('ioredis');
  const { Client } = require('pg');
  
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  let dispatcher = null;
  // a queue that takes everything, purged between runs; a stream over the bench's subjects
  const admin = await amqp.connect(AMQP_URL);
  const ach = await admin.createChannel();
  await ach.assertExchange(NAME, 'topic', { durable: true });
  await ach.assertQueue(NAME, { durable: true });
  await ach.bindQueue(NAME, NAME, '#');
  const anc = await natsConnect({ servers: NATS_SERVER });
  const jsm = await jetstreamManager(anc);
  await jsm.streams.add({ name: STREAM, subjects: [`${NAME}.>`] });
  try {
    console.log(`event sink benchmark: ${EVENTS} events per broker in ${ROUNDS} alternating rounds, concurrency ${CONCURRENCY}, RabbitMQ ${AMQP_URL.replace(/:[^:@/]*@/, ':***@')}, JetStream ${NATS_SERVER}`);
    await migrate(DATABASE_URL);
    const db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    // one organization per sink, so the other sink's events are not its deliveries (a switched-off sink's are recorded parked)
    const orgs = { amqp: newId('org'), nats: newId('org') };
    for (const id of Object.values(orgs)) await db.query(`INSERT INTO organizations (id, name) VALUES ($1, 'bench')`, [id]);
    const box = new SecretBox([Buffer.from(ENCRYPTION_KEY, 'base64')]);
    const sink = async (kind, url, target, orgId = orgs[kind]) => {
      const id = newId('snk');
      const u = new URL(url);
      const password = decodeURIComponent(u.password);
      u.password = '';
      await db.query(
        `INSERT INTO webhooks (id, organization_id, url, events, retry_policy, secret_encrypted, kind, target, active) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::jsonb, true)`,
        [id, orgId, u.toString(), ['message.received'], JSON.stringify({ policy: 'exponential', delaySeconds: 2, attempts: 15 }), password ? box.encrypt(password) : null, kind, JSON.stringify(target)],
      );
      return id;
    };
    const targets = {
      amqp: { url: AMQP_URL, target: { exchange: NAME, routingKey: 'wa.{event}' } },
      nats: { url: `nats://${NATS_SERVER}`, target: { subject: `${NAME}.{event}` } },
    };
    const sinks = {
      amqp: await sink('amqp', targets.amqp.url, targets.amqp.target),
      nats: await sink('nats', targets.nats.url, targets.nats.target),
    };
    const port = await freePort();
    // BENCH_DISPATCHER_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, to see where the dispatcher's time goes
    const nodeArgs = (process.env.BENCH_DISPATCHER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    dispatcher = spawn(process.execPath, [...nodeArgs, join(ROOT, 'dist/apps/webhook-dispatcher/src/main.js')], {
      cwd: ROOT,
      env: {
        ...process.env, NODE_ENV: 'test', DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX: PREFIX, SECRET_ENCRYPTION_KEY: ENCRYPTION_KEY,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', DISPATCHER_CONCURRENCY: String(CONCURRENCY), DISPATCHER_WEBHOOK_CONCURRENCY: String(CONCURRENCY),
        DISPATCHER_HEALTH_PORT: String(port), LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    for (let i = 0; i < 300 && !(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)); i++) await sleep(100);
    // the publisher writes through the data layer (libs/database's Db), as the apps' does
    const ds = Db.open(poolSettings(DATABASE_URL, { max: 4 }));
    const publisher = new EventPublisher(ds, redis, PREFIX);
    const build = (orgId, i) => publisher.build({ event: 'message.received', organizationId: orgId, sessionId: null, payload: { text: `hello ${i}`, from: '4917600000000@s.whatsapp.net' } });
    const delivered = async (id) => (await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND status = 'delivered'`, [id])).rows[0].n;

    // where a delivery's time goes: the publish as the dispatcher timed it, and PostgreSQL's work per delivery
    const detail = async () => {
      await db.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
      const [t] = (await db.query(`SELECT sum(n_tup_ins)::int AS ins, sum(n_tup_upd)::int AS upd FROM pg_stat_user_tables WHERE relname IN ('deliveries', 'delivery_attempts')`)).rows;
      const [x] = (await db.query(`SELECT xact_commit::int AS commits FROM pg_stat_database WHERE datname = current_database()`)).rows;
      const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
      const metric = (name) => text.split('\n').filter((l) => l.startsWith(name) && l.includes('outcome="success"')).reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
      const cpu = cpuSeconds(dispatcher.pid);
      return { ...t, ...x, cpu, writes: writeCalls(dispatcher.pid), at: performance.now(), seconds: metric('gw_webhook_attempt_duration_seconds_sum'), attempts: metric('gw_webhook_attempt_duration_seconds_count') };
    };
    const describe = (d) => {
      const per = (k) => (d[k] / EVENTS).toFixed(2);
      const mean = d.attempts > 0 ? (d.seconds / d.attempts) * 1000 : NaN;
      return `dispatcher CPU ${((d.cpu / EVENTS) * 1e6).toFixed(0)} µs per delivery (busy ${((d.cpu / d.wall) * 100).toFixed(0)}% of one core); publish-to-confirm ${mean.toFixed(1)} ms mean; per delivery: rows inserted ${per('ins')}, updated ${per('upd')}, commits ${per('commits')}, write calls ${per('writes')}; in flight ${(d.busyMs / (d.wall * 1000)).toFixed(1)} on average; events published into the outbox and stream in ${((d.publishMs / (d.wall * 1000)) * 100).toFixed(0)}% of the time`;
    };
    const results = {};
    let offset = 0;
    for (const kind of KINDS) {
      const envelopes = Array.from({ length: EVENTS }, (_, k) => build(orgs[kind], offset + k));
      offset += EVENTS;
      const bodies = envelopes.map((e) => Buffer.from(JSON.stringify(e)));
      const ids = envelopes.map((e) => e.id);
      // warm-ups: the bare client, the destination alone, the dispatcher on a few hundred events
      // (other ids than the measured run's: JetStream would answer a repeated id as a duplicate without storing it)
      await (kind === 'amqp' ? rawAmqp : rawNats)(bodies.slice(0, Math.min(1000, EVENTS)), ids.map((id) => `warm-${id}`));
      await destinationAlone(kind, targets[kind].url, targets[kind].target, bodies.slice(0, Math.min(1000, EVENTS)), ids.map((id) => `warm-${id}`));
      const warm = Array.from({ length: 300 }, (_, k) => build(orgs[kind], -1 - k - offset));
      await publisher.publishEnvelopes(warm);
      let expected = warm.length;
      while ((await delivered(sinks[kind])) < expected) await sleep(20);
      // ROUNDS rounds, each the bare client, the destination alone and the dispatcher on the next slice of events: the
      // three meet the same load from the machine's other users, which a run of one after the other does not
      const seconds = { raw: 0, alone: 0, full: 0 };
      // the whole machine's CPU over each phase: its busy total and every process's share, by role or name
      const cpu = { raw: { machine: 0, groups: new Map() }, alone: { machine: 0, groups: new Map() }, full: { machine: 0, groups: new Map() } };
      const roles = { [dispatcher.pid]: 'dispatcher', [process.pid]: 'bench' };
      const machineNow = () => ({ machine: machineCpuSeconds(), snap: cpuSnapshot() });
      const addCpu = (phase, a, b) => {
        phase.machine += b.machine - a.machine;
        for (const [name, used] of cpuBreakdown(a.snap, b.snap, roles)) phase.groups.set(name, (phase.groups.get(name) ?? 0) + used);
      };
      const d = { ins: 0, upd: 0, commits: 0, writes: 0, cpu: 0, wall: 0, seconds: 0, attempts: 0, busyMs: 0, publishMs: 0 };
      const size = Math.ceil(EVENTS / ROUNDS);
      for (let from = 0; from < EVENTS; from += size) {
        const slice = (a) => a.slice(from, from + size);
        const n = slice(bodies).length;
        const r0 = machineNow();
        seconds.raw += n / (await (kind === 'amqp' ? rawAmqp : rawNats)(slice(bodies), slice(ids)));
        const r1 = machineNow();
        addCpu(cpu.raw, r0, r1);
        seconds.alone += n / (await destinationAlone(kind, targets[kind].url, targets[kind].target, slice(bodies), slice(ids)));
        addCpu(cpu.alone, r1, machineNow());
        const a = await detail();
        const f0 = machineNow();
        const started = performance.now();
        const startedAt = Date.now();
        for (let i = from; i < from + n; i += 500) await publisher.publishEnvelopes(envelopes.slice(i, Math.min(from + n, i + 500)));
        d.publishMs += performance.now() - started;
        expected += n;
        const before = performance.now() + 300_000;
        while ((await delivered(sinks[kind])) < expected) {
          if (performance.now() > before) throw new Error(`${kind}: not every delivery confirmed`);
          await sleep(20);
        }
        seconds.full += (performance.now() - started) / 1000;
        addCpu(cpu.full, f0, machineNow());
        const b = await detail();
        // publishes in flight over the round (a full pipeline keeps CONCURRENCY busy)
        const [flight] = (await db.query(
          `SELECT coalesce(sum(a.duration_ms), 0)::float AS busy FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1 AND a.started_at >= to_timestamp($2 / 1000.0)`,
          [sinks[kind], startedAt],
        )).rows;
        for (const k of ['ins', 'upd', 'commits', 'writes', 'cpu', 'seconds', 'attempts']) d[k] += b[k] - a[k];
        d.wall += (b.at - a.at) / 1000;
        d.busyMs += flight.busy;
      }
      results[kind] = { raw: EVENTS / seconds.raw, alone: EVENTS / seconds.alone, full: EVENTS / seconds.full, detail: describe(d), cpu };
      await ach.purgeQueue(NAME);
    }
    console.log('');
    for (const [kind, label] of [['amqp', 'RabbitMQ, publisher confirms'], ['nats', 'JetStream, publish acks']].filter(([k]) => KINDS.includes(k))) {
      const { raw, alone, full } = results[kind];
      console.log(`${label.padEnd(30)} raw client ${fmt(raw)}/s   sink destination alone ${fmt(alone)}/s (${(alone / raw).toFixed(2)})   dispatcher, full delivery log ${fmt(full)}/s   vs raw: ${(full / raw).toFixed(2)}`);
      console.log(`${''.padEnd(30)} ${results[kind].detail}`);
      const { cpu } = results[kind];
      for (const [what, phase, rate] of [['raw publish', cpu.raw, raw], ['publish of the destination alone', cpu.alone, alone], ['delivery', cpu.full, full]]) {
        console.log(`${''.padEnd(30)} machine CPU µs per ${what}: ${cpuPerItem(phase, EVENTS)} (${((phase.machine / (EVENTS / rate)) * 100).toFixed(0)}% of a core)`);
      }
    }
    await ds.close();
    await db.end();
  } finally {
    if (dispatcher && dispatcher.exitCode === null) {
      const exited = new Promise((r) => dispatcher.once('exit', r));
      dispatcher.kill('SIGTERM');
      await exited;
    }
    await ach.deleteQueue(NAME).catch(() => undefined);
    await ach.deleteExchange(NAME).catch(() => undefined);
    await admin.close().catch(() => undefined);
    await jsm.streams.delete(STREAM).catch(() => undefined);
    await anc.close().catch(() => undefined);
    await cleanup(redis);
    redis.disconnect();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
