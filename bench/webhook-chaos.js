#!/usr/bin/env node
// Webhook chaos run (issue 37 item 5), by hand, not part of npm test: a producer publishes events to one organization
// with two webhooks (one receiver steady, one that hangs for CHAOS_HANG_MS: accepts and never answers, then answers
// again) while two dispatcher replicas run through the faults: dispatcher SIGKILL ×3 (each restarted), a PostgreSQL
// restart (fast shutdown) and a Redis wipe — on a PostgreSQL and a Redis of the run's own (free ports, removed at the
// end), never the shared ones. Prints sent / delivered / lost / duplicated per webhook, how long the hung receiver
// waited for its first delivery after it answered again, and the time to settle after the producer stops (every
// event answered 2xx at both receivers and every delivery row `delivered`). Needs `npm run build` first; Linux, run as
// root (initdb runs as `postgres`).
//   CHAOS_EVENTS (6000), CHAOS_RATE per second (40), CHAOS_HANG_MS (60000), CHAOS_SETTLE_LIMIT_MS (300000),
//   CHAOS_DISPATCHER_LOG (the dispatchers' stderr; $TMPDIR/webhook-chaos-dispatchers.log)
'use strict';
const { openSync } = require('node:fs');
const { createServer } = require('node:http');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const IORedis = require('ioredis');
const { Client } = require('pg');
const { freePort, killChildren, percentile, startApp } = require('./support');
const { PrivateServers, stop, survivePgRestarts } = require('./private-servers');

const ROOT = join(__dirname, '..');
const dist = (p) => require(join(ROOT, 'dist', p));
const EVENTS = Number(process.env.CHAOS_EVENTS ?? 6000);
const RATE = Number(process.env.CHAOS_RATE ?? 40);
const HANG_MS = Number(process.env.CHAOS_HANG_MS ?? 60000);
const SETTLE_LIMIT_MS = Number(process.env.CHAOS_SETTLE_LIMIT_MS ?? 300000);
/** the dispatchers' stderr (their error lines during the faults) */
const DISPATCHER_LOG = process.env.CHAOS_DISPATCHER_LOG ?? join(tmpdir(), 'webhook-chaos-dispatchers.log');
const PREFIX = 'chaos';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const since = (t0) => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

/** Two receivers in one server: `/steady` answers 200; `/hung` accepts and never answers while hanging. */
function startReceiver() {
  const ok = { '/steady': new Map(), '/hung': new Map() }; // request id -> 2xx answers given
  const firstOkAt = { '/steady': new Map(), '/hung': new Map() };
  const held = [];
  const state = { hanging: false, posts: 0, firstOkAfterHang: null, hangEndedAt: null };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      state.posts++;
      const path = req.url;
      if (path === '/hung' && state.hanging) return void held.push(res);
      const id = String(req.headers['x-webhook-request-id']);
      const now = Date.now();
      if (!ok[path].has(id)) firstOkAt[path].set(id, { at: now, timestamp: JSON.parse(Buffer.concat(chunks).toString()).timestamp });
      ok[path].set(id, (ok[path].get(id) ?? 0) + 1);
      if (path === '/hung' && state.hangEndedAt !== null && state.firstOkAfterHang === null) state.firstOkAfterHang = now;
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        ok,
        firstOkAt,
        state,
        hang: () => (state.hanging = true),
        // the held requests are never answered: their connections are cut, as a receiver restarted after a hang does
        answerAgain: () => {
          state.hanging = false;
          state.hangEndedAt = Date.now();
          for (const res of held.splice(0)) res.socket?.destroy();
        },
        close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
      }),
    ),
  );
}

async function main() {
  const servers = new PrivateServers();
  const children = [];
  const t0 = Date.now();
  let receiver = null;
  try {
    await servers.start();
    const database = 'gw_webhook_chaos';
    const admin = new Client({ connectionString: `${servers.pgUrl}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    const DATABASE_URL = `${servers.pgUrl}/${database}`;
    const { migrate, newId, Db, poolSettings } = dist('libs/database/src');
    const { EventPublisher } = dist('libs/events/src');
    const { RETRY_POLICY_DEFAULTS } = dist('libs/contracts/src');
    await migrate(DATABASE_URL);

    receiver = await startReceiver();
    const db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    const orgId = newId('org');
    await db.query(`INSERT INTO organizations (id, name) VALUES ($1, 'chaos')`, [orgId]);
    const hooks = {};
    for (const path of ['/steady', '/hung']) {
      hooks[path] = newId('whk');
      // the API's default retry policy (exponential from 2 s, 15 attempts)
      await db.query(`INSERT INTO webhooks (id, organization_id, url, events, retry_policy) VALUES ($1, $2, $3, $4, $5::jsonb)`, [
        hooks[path],
        orgId,
        `http://127.0.0.1:${receiver.port}${path}`,
        ['message.received'],
        JSON.stringify(RETRY_POLICY_DEFAULTS),
      ]);
    }
    await db.end();

    const env = {
      NODE_ENV: 'test',
      DATABASE_URL,
      REDIS_URL: servers.redisUrl,
      REDIS_KEY_PREFIX: PREFIX,
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      LOG_LEVEL: 'error',
    };
    const ports = [await freePort(), await freePort()];
    const dispatchers = [null, null];
    /** each replica's start in progress: a kill waits for it (a restart on a loaded machine can take tens of seconds) */
    const starting = [null, null];
    const stderr = openSync(DISPATCHER_LOG, 'w');
    const startDispatcher = async (i) => {
      const url = `http://127.0.0.1:${ports[i]}/healthz`;
      dispatchers[i] = await startApp('dist/apps/webhook-dispatcher/src/main.js', { ...env, DISPATCHER_HEALTH_PORT: String(ports[i]) }, url, 120000, children, stderr);
    };
    await Promise.all([startDispatcher(0), startDispatcher(1)]);
    // the restart goes on beside the next faults, which keep their times (all within the producer's run)
    const killAndRestart = async (i) => {
      await starting[i];
      console.log(`${since(t0)}: SIGKILL dispatcher ${i + 1}`);
      await stop(dispatchers[i], 'SIGKILL');
      starting[i] = startDispatcher(i).then(() => console.log(`${since(t0)}: dispatcher ${i + 1} restarted`));
    };
    // the publisher writes through the data layer (libs/database's Db), as the apps' does
    const ds = Db.open(poolSettings(DATABASE_URL, { max: 4 }));
    // the pool's idle connections end with 57P01 in the restart: the pool replaces them
    const redis = new IORedis(servers.redisUrl, { maxRetriesPerRequest: null });
    const publisher = new EventPublisher(ds, redis, PREFIX);

    // the producer: EVENTS at RATE per second in batches of a tenth of a second; a batch is retried until its outbox
    // insert commits (during the PostgreSQL restart), and counted sent then
    const sent = [];
    const producerStart = Date.now();
    const durationMs = (EVENTS / RATE) * 1000;
    const at = (fraction) => producerStart + fraction * durationMs;
    const faults = [
      [at(0.08), () => killAndRestart(0)],
      [at(0.25), () => killAndRestart(1)],
      [at(0.4), async () => {
        console.log(`${since(t0)}: PostgreSQL restart`);
        await servers.restartPg();
        console.log(`${since(t0)}: PostgreSQL back`);
      }],
      [at(0.55), async () => {
        console.log(`${since(t0)}: Redis wiped (FLUSHALL on the run's own Redis)`);
        await redis.flushall();
      }],
      [at(0.7), () => killAndRestart(0)],
    ];
    // one fault at a time, each at its time (or once the one before is over)
    const faultRuns = [faults.reduce((prev, [when, run]) => prev.then(() => sleep(Math.max(0, when - Date.now()))).then(run), Promise.resolve())];
    // the receiver's hang runs beside them, for HANG_MS from 15 % of the run
    const hangRun = sleep(Math.max(0, at(0.15) - Date.now())).then(async () => {
      console.log(`${since(t0)}: /hung receiver hangs for ${HANG_MS / 1000} s`);
      receiver.hang();
      await sleep(HANG_MS);
      console.log(`${since(t0)}: /hung receiver answers again`);
      receiver.answerAgain();
    });
    const batch = Math.max(1, Math.round(RATE / 10));
    for (let i = 0; i < EVENTS; i += batch) {
      const due = producerStart + (i / RATE) * 1000;
      if (due > Date.now()) await sleep(due - Date.now());
      const envelopes = Array.from({ length: Math.min(batch, EVENTS - i) }, (_, k) =>
        publisher.build({ event: 'message.received', organizationId: orgId, sessionId: null, payload: { n: i + k } }),
      );
      for (;;) {
        try {
          await publisher.publishEnvelopes(envelopes);
          break;
        } catch (err) {
          // committed, its answer lost in the restart: the rows are there
          if (err.code === '23505') break;
          await sleep(200);
        }
      }
      sent.push(...envelopes);
    }
    const producerStoppedAt = Date.now();
    console.log(`${since(t0)}: producer stopped after ${sent.length} events`);
    await Promise.all([...faultRuns, hangRun, ...starting]);

    // settled: every event answered 2xx at both receivers and every delivery row delivered
    const check = new Client({ connectionString: DATABASE_URL });
    await check.connect();
    let settledAt = null;
    while (Date.now() - producerStoppedAt < SETTLE_LIMIT_MS) {
      const arrived = sent.every((e) => receiver.ok['/steady'].has(e.id) && receiver.ok['/hung'].has(e.id));
      if (arrived) {
        const [row] = (await check.query(`SELECT count(*) FILTER (WHERE status = 'delivered')::int AS delivered, count(*)::int AS rows FROM deliveries`)).rows;
        if (row.delivered === sent.length * 2 && row.rows === sent.length * 2) {
          settledAt = Date.now();
          break;
        }
      }
      await sleep(250);
    }
    const [states] = (await check.query(`SELECT json_object_agg(status, n) AS s FROM (SELECT status, count(*)::int AS n FROM deliveries GROUP BY status) x`)).rows;
    await check.end();

    console.log(`\nwebhook chaos run: ${EVENTS} events at ${RATE}/s to 2 webhooks, 2 dispatcher replicas`);
    for (const path of ['/steady', '/hung']) {
      const ok = receiver.ok[path];
      const lost = sent.filter((e) => !ok.has(e.id)).length;
      let duplicated = 0;
      for (const n of ok.values()) duplicated += n - 1;
      console.log(`${path.padEnd(8)} sent ${sent.length}  delivered ${ok.size}  lost ${lost}  duplicated ${duplicated} (${((duplicated / sent.length) * 100).toFixed(3)} %)`);
    }
    const hungEnd = receiver.state.hangEndedAt;
    if (hungEnd) {
      const first = receiver.state.firstOkAfterHang;
      console.log(`/hung answered again: first delivery ${first ? `${((first - hungEnd) / 1000).toFixed(1)} s` : 'never'} after`);
      const after = [...receiver.firstOkAt['/hung'].values()].filter((f) => f.timestamp >= hungEnd).map((f) => f.at - f.timestamp).sort((a, b) => a - b);
      if (after.length) console.log(`/hung events published after it answered again: ${after.length}, wait p50 ${percentile(after, 50)} ms, p99 ${percentile(after, 99)} ms, max ${after[after.length - 1]} ms`);
    }
    console.log(`POSTs received ${receiver.state.posts}; delivery rows by status ${JSON.stringify(states.s)}`);
    console.log(settledAt ? `settled ${((settledAt - producerStoppedAt) / 1000).toFixed(1)} s after the producer stopped` : `NOT settled within ${SETTLE_LIMIT_MS / 1000} s of the producer stopping`);
    await ds.close();
    redis.disconnect();
  } finally {
    await killChildren(children);
    await receiver?.close();
    await servers.destroy();
  }
}

survivePgRestarts();

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
