#!/usr/bin/env node
// Campaigns under faults and at scale (issue 43 items 3, 4 and 5; docs/benchmarks/campaigns.md), by hand, not part of
// npm test. Everything on a PostgreSQL and a Redis of the run's own (bench/private-servers.js: free ports, removed at
// the end), never the shared ones; processes from dist/ (`npm run bench:campaigns` builds first). Linux, as root.
//
// 1. Chaos: one campaign of CAMPAIGN_CHAOS_RECIPIENTS (2000) on a session of the simulator, three gateways. While it
//    runs: the gateway holding the session is SIGKILLed (the session fails over), the next holder is drained (SIGTERM),
//    PostgreSQL is restarted (fast shutdown) and the API is SIGKILLed and started again. Then, from the simulator's
//    received log: lost (recipients with no message), duplicated (recipients with more than one), re-sends the network
//    took as the same message id, the campaign's counts, and the gaps between arrivals against [minDelayMs, maxDelayMs].
//    Beside it, CAMPAIGN_CHAOS_SCHEDULED (100) scheduled sends on the same session, due one every
//    CAMPAIGN_CHAOS_SCHEDULED_EVERY_MS (2500) through the faults: each must arrive once.
// 2. Scale: CAMPAIGN_SCALE_CAMPAIGNS (20) campaigns of CAMPAIGN_SCALE_RECIPIENTS (10000) on as many sessions of one
//    gateway, and a probe session beside them. Measured in the same run: the gateway's CPU and the rows read from
//    campaign_recipients and campaigns per second with no campaign, with the campaigns idle (waiting for their
//    startAt) at 10 recipients each and at 10,000 each (the tick's cost must not depend on the pending recipients); then
//    CAMPAIGN_ROUNDS (20) rounds of CAMPAIGN_PROBES (100) single sends on the probe session, one every
//    CAMPAIGN_PROBE_EVERY_MS (100), POST → arrival at the simulator, with the campaigns paused and with them sending,
//    alternately, paused first in even rounds and sending first in odd ones (a shared machine's load drifts: both sides
//    see it); p99 over all rounds of each side (2,000 probes a side: the p99 is the 20th slowest), and
//    the ratio's spread: a bootstrap over the rounds (each round's two blocks, next to each other in time, drawn
//    together), its 2.5th–97.5th percentiles. Per round: the campaigns' messages per second, the CPU of the gateway,
//    the API, the simulator and PostgreSQL, the event loops' delay, PostgreSQL's backends running or waiting; then
//    where the slowest 1% of each side spent their time (in the API before the insert, or from the insert to the
//    arrival: the gateway's part). The campaigns' throughput and the gateway's CPU while they send.
// 3. CAMPAIGN_DIAGNOSE=1: after the rounds, CAMPAIGN_DIAGNOSE_MS (20000) of the campaigns sending alone, with the
//    gateway's CPU profile (its inspector) and PostgreSQL's statements by time (pg_stat_statements, nested included).
//
//   CAMPAIGN_CHAOS_RECIPIENTS (2000), CAMPAIGN_SCALE_CAMPAIGNS (20), CAMPAIGN_SCALE_RECIPIENTS (10000),
//   CAMPAIGN_SCALE_MIN_DELAY_MS / _MAX_DELAY_MS (1000 / 3000), CAMPAIGN_ROUNDS (20), CAMPAIGN_PROBES (100),
//   CAMPAIGN_PROBE_EVERY_MS (100), CAMPAIGN_IDLE_MS (20000), CAMPAIGN_SKIP_CHAOS / CAMPAIGN_SKIP_SCALE=1,
//   CAMPAIGN_DIAGNOSE=1, CAMPAIGN_DIAGNOSE_MS, CAMPAIGN_BENCH_LOG (the processes' stderr; $TMPDIR/campaigns-bench.log)
'use strict';
const { openSync, readdirSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Pool } = require('pg');
const { cpuSeconds, freePort, inspectorProfile, killChildren, percentile, profileSummary, sleep, startApp, waitUntil } = require('./support');
const { PrivateServers, stop, survivePgRestarts } = require('./private-servers');

const ROOT = join(__dirname, '..');
const dist = (p) => require(join(ROOT, 'dist', p));
const { migrate, newId } = dist('libs/database/src');
const { newApiKeyToken, sha256Hex } = dist('libs/crypto/src');

const CHAOS_N = Number(process.env.CAMPAIGN_CHAOS_RECIPIENTS ?? 2000);
const CHAOS_SCHEDULED = Number(process.env.CAMPAIGN_CHAOS_SCHEDULED ?? 100);
const CHAOS_SCHEDULED_EVERY_MS = Number(process.env.CAMPAIGN_CHAOS_SCHEDULED_EVERY_MS ?? 2500);
const SCALE_CAMPAIGNS = Number(process.env.CAMPAIGN_SCALE_CAMPAIGNS ?? 20);
const SCALE_N = Number(process.env.CAMPAIGN_SCALE_RECIPIENTS ?? 10000);
const PROBES = Number(process.env.CAMPAIGN_PROBES ?? 100);
const ROUNDS = Number(process.env.CAMPAIGN_ROUNDS ?? 20);
const PROBE_EVERY_MS = Number(process.env.CAMPAIGN_PROBE_EVERY_MS ?? 100);
const IDLE_MS = Number(process.env.CAMPAIGN_IDLE_MS ?? 20000);
const DIAGNOSE = process.env.CAMPAIGN_DIAGNOSE === '1';
const DIAGNOSE_MS = Number(process.env.CAMPAIGN_DIAGNOSE_MS ?? 20000);
const LOG = process.env.CAMPAIGN_BENCH_LOG ?? join(tmpdir(), 'campaigns-bench.log');
const CHAOS_PACING = { minDelayMs: 20, maxDelayMs: 60, typing: false };
const SCALE_PACING = { minDelayMs: Number(process.env.CAMPAIGN_SCALE_MIN_DELAY_MS ?? 1000), maxDelayMs: Number(process.env.CAMPAIGN_SCALE_MAX_DELAY_MS ?? 3000), typing: false };

const t0 = Date.now();
const since = () => `${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s`;
const log = (line) => console.log(`${since()}  ${line}`);
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, min: s[0], p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] };
};
/**
 * The p99 ratio sending ÷ paused and its spread: `rounds` holds each round's two blocks of probes ({paused, sending}),
 * taken next to each other in time; a bootstrap draws whole rounds with replacement (the noise of a moment hits both
 * blocks of its round, and probes of one block are not independent), pools each side's probes and takes the ratio of
 * the p99s. Returns the 2.5th, 50th and 97.5th percentiles of 2,000 draws.
 */
function ratioSpread(rounds, draws = 2000) {
  let seed = 43;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const ratios = [];
  for (let b = 0; b < draws; b++) {
    const paused = [];
    const sending = [];
    for (let i = 0; i < rounds.length; i++) {
      const r = rounds[Math.floor(random() * rounds.length)];
      paused.push(...r.paused);
      sending.push(...r.sending);
    }
    const p99 = (xs) => percentile(xs.sort((a, b) => a - b), 99);
    ratios.push(p99(sending) / p99(paused));
  }
  ratios.sort((a, b) => a - b);
  return { low: percentile(ratios, 2.5), mid: percentile(ratios, 50), high: percentile(ratios, 97.5) };
}
const fmt = (o) => `min ${o.min} / p50 ${o.p50} / p99 ${o.p99} / max ${o.max} ms (${o.n})`;

/** The processes of one deployment on `databaseUrl`: simulator, gateways, API; an organization with a key. */
class Deployment {
  constructor(servers, database, prefix, children, stderr) {
    Object.assign(this, { servers, database, prefix, children, stderr });
    this.databaseUrl = `${servers.pgUrl}/${database}`;
    this.gateways = new Map();
    /** each gateway's health port (/metrics) */
    this.gatewayPorts = new Map();
  }

  env(extra) {
    return {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: this.servers.redisUrl,
      REDIS_KEY_PREFIX: this.prefix,
      SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      JWT_SECRET: 'bench-campaigns-jwt-secret-0123456789abcdef',
      ...extra,
    };
  }

  async start(gatewayIds) {
    await migrate(this.databaseUrl);
    this.pg = new Pool({ connectionString: this.databaseUrl, max: 2 });
    // the PostgreSQL restart ends its idle connections: replaced on the next query
    this.pg.on('error', () => undefined);
    this.orgId = newId('org');
    await this.pg.query(`INSERT INTO organizations (id, name) VALUES ($1, 'bench')`, [this.orgId]);
    this.token = newApiKeyToken();
    await this.pg.query(`INSERT INTO api_keys (id, organization_id, name, token_hash, token_hint, permissions) VALUES ($1, $2, 'bench', $3, $4, $5)`, [
      newId('key'), this.orgId, sha256Hex(this.token), this.token.slice(0, 8), ['*'],
    ]);
    const simPort = await freePort();
    this.simUrl = `http://127.0.0.1:${simPort}`;
    this.sim = await startApp('dist/apps/network-sim/src/main.js', this.env({ SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '600000' }), `${this.simUrl}/healthz`, 60000, this.children, this.stderr);
    for (const id of gatewayIds) await this.startGateway(id);
    await this.startApi();
  }

  async startGateway(id) {
    const port = await freePort();
    const inspect = DIAGNOSE ? await freePort() : null;
    const child = await startApp(
      'dist/apps/gateway/src/main.js',
      this.env({ GATEWAY_ID: id, GATEWAY_ENGINE: 'sim', NETWORK_SIM_URL: this.simUrl, GATEWAY_HEALTH_PORT: String(port), GATEWAY_HEARTBEAT_MS: '500', GATEWAY_TTL_MS: '3000', REBALANCE_MOVES_PER_MIN: '0', ...(inspect ? { NODE_OPTIONS: `--inspect=127.0.0.1:${inspect}` } : {}) }),
      `http://127.0.0.1:${port}/healthz`,
      60000,
      this.children,
      this.stderr,
    );
    this.gateways.set(id, child);
    this.gatewayPorts.set(id, port);
    if (inspect) (this.inspectPorts ??= new Map()).set(id, inspect);
    return child;
  }

  async startApi() {
    const port = await freePort();
    this.apiUrl = `http://127.0.0.1:${port}`;
    this.apiOpsPort = await freePort();
    this.api = await startApp(
      'dist/apps/api/src/main.js',
      this.env({ PORT: String(port), API_OPS_PORT: String(this.apiOpsPort), NETWORK_SIM_URL: this.simUrl, RATE_LIMIT_CREDENTIAL_PER_MIN: '10000000', RATE_LIMIT_IP_PER_MIN: '10000000', ...(process.env.CAMPAIGN_API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.CAMPAIGN_API_NODE_OPTIONS } : {}) }),
      `${this.apiUrl}/healthz`,
      60000,
      this.children,
      this.stderr,
    );
  }

  async call(method, path, body) {
    const res = await fetch(`${this.apiUrl}/api/v1${path}`, { method, headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  async pairedSession(label) {
    const created = await this.call('POST', '/sessions', { label, ratePerMin: 10000, ratePerHour: 1000000 });
    if (created.status !== 201) throw new Error(`creating a session: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.id;
    await waitUntil(async () => (await (await fetch(`${this.simUrl}/sim/sessions/${id}`)).json()).qr, 'a QR', 30000);
    await fetch(`${this.simUrl}/sim/sessions/${id}/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await waitUntil(async () => (await this.call('GET', `/sessions/${id}`)).body.status === 'working', 'the session working', 30000);
    return id;
  }

  async received(sessionId) {
    return (await (await fetch(`${this.simUrl}/sim/messages?sessionId=${sessionId}`)).json()).data;
  }

  async holder(sessionId) {
    return (await this.pg.query(`SELECT gateway_id, status FROM sessions WHERE id = $1`, [sessionId])).rows[0];
  }

  async createCampaign(sessionId, name, n, extra) {
    const csv = ['to,name', ...Array.from({ length: n }, (_, i) => `1555${String(1000000 + i)},${name} ${i}`)].join('\n');
    const res = await this.call('POST', `/sessions/${sessionId}/campaigns`, { name, message: { text: `${name}: hello {{name}}` }, recipientsCsv: csv, skipNotOnWhatsApp: false, ...extra });
    if (res.status !== 201) throw new Error(`creating campaign ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id;
  }

  async stop() {
    await this.pg?.end().catch(() => undefined);
  }
}

async function chaos(servers, children, stderr) {
  console.log(`\n== chaos: one campaign of ${CHAOS_N} recipients, pacing ${CHAOS_PACING.minDelayMs}–${CHAOS_PACING.maxDelayMs} ms, three gateways`);
  const d = new Deployment(servers, 'gw_campaigns_chaos', 'campaigns-chaos', children, stderr);
  await d.start(['gw-a', 'gw-b', 'gw-c']);
  const sessionId = await d.pairedSession('chaos');
  const campaignId = await d.createCampaign(sessionId, 'Chaos', CHAOS_N, { pacing: CHAOS_PACING });
  const started = Date.now();
  log(`campaign ${campaignId} created on ${(await d.holder(sessionId)).gateway_id}`);
  // scheduled sends due all through the faults, one every CHAOS_SCHEDULED_EVERY_MS, on the same session
  const scheduled = [];
  for (let i = 0; i < CHAOS_SCHEDULED; i++) {
    const res = await d.call('POST', `/sessions/${sessionId}/messages`, { to: `1555800${String(i).padStart(4, '0')}`, text: `Scheduled ${i}`, sendAt: started + 5000 + i * CHAOS_SCHEDULED_EVERY_MS });
    if (res.status !== 202 || res.body.status !== 'scheduled') throw new Error(`scheduling: ${res.status} ${JSON.stringify(res.body)}`);
    scheduled.push(res.body.waMessageId);
  }
  const arrived = async () => (await d.received(sessionId)).filter((m) => typeof m.text === 'string' && m.text.startsWith('Chaos: ')).length;
  const untilArrived = (k) => waitUntil(async () => (await arrived()) >= k, `${k} campaign messages at the simulator`, 600000);
  const workingElsewhere = (gone) =>
    waitUntil(async () => {
      const h = await d.holder(sessionId).catch(() => null);
      return h && h.status === 'working' && h.gateway_id !== gone;
    }, 'the session working on another gateway', 120000);

  await untilArrived(Math.floor(CHAOS_N * 0.15));
  const victim = (await d.holder(sessionId)).gateway_id;
  d.gateways.get(victim).kill('SIGKILL');
  log(`SIGKILL ${victim} at ${await arrived()} arrived`);
  await workingElsewhere(victim);
  log(`failed over to ${(await d.holder(sessionId)).gateway_id}; ${victim} started again`);
  await d.startGateway(victim);

  await untilArrived(Math.floor(CHAOS_N * 0.35));
  const drained = (await d.holder(sessionId)).gateway_id;
  const exited = new Promise((r) => d.gateways.get(drained).once('exit', r));
  d.gateways.get(drained).kill('SIGTERM');
  log(`drain (SIGTERM) ${drained} at ${await arrived()} arrived`);
  await exited;
  await workingElsewhere(drained);
  log(`drained to ${(await d.holder(sessionId)).gateway_id}; ${drained} started again`);
  await d.startGateway(drained);

  await untilArrived(Math.floor(CHAOS_N * 0.55));
  log(`PostgreSQL restart at ${await arrived()} arrived`);
  await servers.restartPg();
  log('PostgreSQL back');

  await untilArrived(Math.floor(CHAOS_N * 0.75));
  log(`API SIGKILL at ${await arrived()} arrived`);
  await stop(d.api, 'SIGKILL');
  await d.startApi();
  log('API started again');

  await waitUntil(async () => (await d.call('GET', `/sessions/${sessionId}/campaigns/${campaignId}`).catch(() => null))?.body?.status === 'completed', 'the campaign completed', 900000);
  const tookS = (Date.now() - started) / 1000;
  log(`completed after ${tookS.toFixed(1)} s`);

  const got = (await d.received(sessionId)).filter((m) => typeof m.text === 'string' && m.text.startsWith('Chaos: '));
  const perRecipient = new Map();
  for (const m of got) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
  const expected = Array.from({ length: CHAOS_N }, (_, i) => `1555${String(1000000 + i)}@s.whatsapp.net`);
  const lost = expected.filter((to) => !perRecipient.has(to)).length;
  const duplicated = [...perRecipient.values()].filter((c) => c > 1).length;
  const wrongText = got.filter((m) => m.text !== `Chaos: hello Chaos ${Number(m.to.slice(4, 11)) - 1000000}`).length;
  const resends = got.reduce((a, m) => a + (m.sends - 1), 0);
  const view = (await d.call('GET', `/sessions/${sessionId}/campaigns/${campaignId}`)).body;
  await waitUntil(async () => {
    const ids = new Set((await d.received(sessionId)).map((m) => m.id));
    return scheduled.every((id) => ids.has(id));
  }, 'every scheduled send at the simulator', 120000).catch(() => undefined);
  const all = await d.received(sessionId);
  const scheduledGot = all.filter((m) => typeof m.text === 'string' && m.text.startsWith('Scheduled '));
  const scheduledIds = new Set(scheduledGot.map((m) => m.id));
  const scheduledLost = scheduled.filter((id) => !scheduledIds.has(id)).length;
  // the network stores one message per id: a send twice would be the same text under another id
  const scheduledDup = scheduledGot.length - new Set(scheduledGot.map((m) => m.text)).size;
  const times = got.map((m) => m.timestamp).sort((a, b) => a - b);
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  const below = gaps.filter((g) => g < CHAOS_PACING.minDelayMs).length;
  const within = gaps.filter((g) => g >= CHAOS_PACING.minDelayMs && g <= CHAOS_PACING.maxDelayMs).length;
  const over = gaps.filter((g) => g > CHAOS_PACING.maxDelayMs).map((g) => g - CHAOS_PACING.maxDelayMs);
  console.log(`recipients ${CHAOS_N}: received ${got.length}, lost ${lost}, duplicated ${duplicated}, wrong text ${wrongText}; re-sends the network took as the same id: ${resends}`);
  console.log(`campaign counts ${JSON.stringify(view.counts)}`);
  console.log(`scheduled sends ${CHAOS_SCHEDULED} (due one every ${CHAOS_SCHEDULED_EVERY_MS} ms through the faults): received ${scheduledIds.size}, lost ${scheduledLost}, duplicated ${scheduledDup}`);
  console.log(`gaps between arrivals: ${fmt(stats(gaps))}; below minDelayMs ${below}; within [min, max] ${within} (${((100 * within) / gaps.length).toFixed(1)}%)`);
  console.log(`gaps above maxDelayMs ${over.length}, by ${fmt(stats(over))} (the step and the send after the delay, and the faults)`);
  console.log(`throughput ${(CHAOS_N / tookS).toFixed(1)} messages/s over the whole run, faults included`);
  await killChildren(children.splice(0));
  await d.stop();
  return { lost, duplicated, resends, counts: view.counts, gaps: stats(gaps), below, tookS, scheduledLost };
}

/**
 * CPU seconds of a PostgreSQL server: the postmaster with its ended children (cutime, cstime) and its live ones
 * (backends, checkpointer, walwriter…).
 */
function pgCpuSeconds(postmasterPid) {
  let total = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const f = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(name) === postmasterPid) total += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
      else if (Number(f[1]) === postmasterPid) total += (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

/**
 * Rows read so far from `campaign_recipients` and from `campaigns` (sequential + index fetches, pg_stat_user_tables of
 * the run's database). A busy backend publishes its counts at most once a second, an idle one within 10 s.
 */
async function tableReads(pg) {
  const rows = (await pg.query(
    `SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_user_tables WHERE relname IN ('campaign_recipients', 'campaigns')`,
  )).rows;
  const of = (name) => Number(rows.find((r) => r.relname === name)?.n ?? 0);
  return { recipients: of('campaign_recipients'), campaigns: of('campaigns') };
}

async function scale(servers, children, stderr) {
  console.log(`\n== scale: ${SCALE_CAMPAIGNS} campaigns × ${SCALE_N} recipients on ${SCALE_CAMPAIGNS} sessions of one gateway, a probe session beside them`);
  const d = new Deployment(servers, 'gw_campaigns_scale', 'campaigns-scale', children, stderr);
  await d.start(['gw-scale']);
  const gw = d.gateways.get('gw-scale');
  const probe = await d.pairedSession('probe');
  const sessions = [];
  for (let i = 0; i < SCALE_CAMPAIGNS; i++) sessions.push(await d.pairedSession(`campaign ${i}`));
  log(`${sessions.length + 1} sessions working`);

  // a probe: POST → 202 → its row's created_at (the accept statement's start, PostgreSQL's clock; one machine) →
  // arrival at the simulator; split into "API before the insert" and "insert → arrival" (the gateway's part)
  const probes = async (label) => {
    const sent = [];
    for (let i = 0; i < PROBES; i++) {
      const at = Date.now();
      const res = await d.call('POST', `/sessions/${probe}/messages`, { to: `1555900${String(i).padStart(4, '0')}`, text: `${label} ${i}` });
      if (res.status !== 202) throw new Error(`probe send: ${res.status} ${JSON.stringify(res.body)}`);
      sent.push({ id: res.body.waMessageId, at, answered: Date.now() });
      await sleep(Math.max(0, at + PROBE_EVERY_MS - Date.now()));
    }
    await waitUntil(async () => {
      const ids = new Set((await d.received(probe)).map((m) => m.id));
      return sent.every((s) => ids.has(s.id));
    }, `the ${label} probes at the simulator`, 120000);
    const byId = new Map((await d.received(probe)).map((m) => [m.id, m.timestamp]));
    const created = new Map(
      (await d.pg.query(`SELECT wa_message_id, (extract(epoch FROM created_at) * 1000)::float8 AS c FROM messages WHERE session_id = $1 AND wa_message_id = ANY($2)`, [probe, sent.map((s) => s.id)])).rows.map((r) => [
        r.wa_message_id,
        r.c,
      ]),
    );
    // the campaign work beside each probe: campaign messages stored (a step's commit) or taken by the network while
    // the probe was between its insert and its arrival (what the gateway had to do for the campaigns meanwhile)
    const from = Math.min(...sent.map((s) => s.at));
    const work = (
      await d.pg.query(
        `SELECT (extract(epoch FROM created_at) * 1000)::float8 AS c, (extract(epoch FROM sent_at) * 1000)::float8 AS s
           FROM messages WHERE campaign_id IS NOT NULL AND (created_at >= to_timestamp($1 / 1000.0) OR sent_at >= to_timestamp($1 / 1000.0))`,
        [from],
      )
    ).rows;
    const beside = (a, b) => work.filter((w) => (w.c >= a && w.c <= b) || (w.s !== null && w.s >= a && w.s <= b)).length;
    const each = sent.map((s) => {
      const arrived = byId.get(s.id);
      const c = created.get(s.id);
      return { total: arrived - s.at, api: Math.round(c - s.at), relay: Math.round(arrived - c), answer: s.answered - s.at, beside: beside(c, arrived) };
    });
    const values = each.map((e) => e.total);
    return { ...stats(values), values, each };
  };
  const metricsLag = async (port) => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const get = (name) => Number(text.match(new RegExp(`^gw_nodejs_eventloop_lag_${name}_seconds(?:\\{[^}]*\\})? (\\S+)`, 'm'))?.[1] ?? NaN) * 1000;
    // Node's histogram records the whole interval of its 10 ms timer (prom-client's default precision): the delay is beyond it
    return { p99: get('p99') - 10, max: get('max') - 10 };
  };
  // what each process and PostgreSQL did during a round: CPU, the event loops' delay (prom-client's histogram restarts
  // at each scrape), and PostgreSQL's backends sampled every 100 ms (waiting on a lock, an LWLock, I/O; running)
  const watch = async () => {
    const procs = { gateway: gw.pid, api: d.api.pid, sim: d.sim.pid };
    const cpu0 = Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, cpuSeconds(pid)]));
    const pg0 = pgCpuSeconds(servers.pg.pid);
    const gwPort = d.gatewayPorts.get('gw-scale');
    await metricsLag(gwPort);
    await metricsLag(d.apiOpsPort);
    const started = Date.now();
    const pgs = { samples: 0, lock: 0, lwlock: 0, io: 0, running: 0 };
    let on = true;
    const sampler = (async () => {
      while (on) {
        const r = (
          await d.pg.query(
            `SELECT count(*) FILTER (WHERE wait_event_type = 'Lock') AS lock, count(*) FILTER (WHERE wait_event_type = 'LWLock') AS lwlock,
                    count(*) FILTER (WHERE wait_event_type = 'IO') AS io, count(*) FILTER (WHERE wait_event_type IS NULL) AS running
               FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
          )
        ).rows[0];
        pgs.samples++;
        for (const k of ['lock', 'lwlock', 'io', 'running']) pgs[k] += Number(r[k]);
        await sleep(100);
      }
    })();
    return async () => {
      on = false;
      await sampler;
      const s = (Date.now() - started) / 1000;
      const cpu = Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, ((cpuSeconds(pid) - cpu0[k]) * 1000) / s]));
      cpu.pg = ((pgCpuSeconds(servers.pg.pid) - pg0) * 1000) / s;
      return { cpu, gwLag: await metricsLag(gwPort), apiLag: await metricsLag(d.apiOpsPort), pgs };
    };
  };
  const describeRound = (label, p, w, rate) =>
    console.log(
      `  ${label.padEnd(10)} p50 ${p.p50} / p99 ${p.p99} / max ${p.max} ms; campaigns ${rate.toFixed(1)} msg/s; CPU ms/s gateway ${w.cpu.gateway.toFixed(0)}, api ${w.cpu.api.toFixed(0)}, ` +
        `sim ${w.cpu.sim.toFixed(0)}, pg ${w.cpu.pg.toFixed(0)}; loop delay p99/max gateway ${w.gwLag.p99.toFixed(1)}/${w.gwLag.max.toFixed(1)}, api ${w.apiLag.p99.toFixed(1)}/${w.apiLag.max.toFixed(1)} ms; ` +
        `pg backends per sample: running ${(w.pgs.running / w.pgs.samples).toFixed(2)}, lock ${(w.pgs.lock / w.pgs.samples).toFixed(2)}, lwlock ${(w.pgs.lwlock / w.pgs.samples).toFixed(2)}, io ${(w.pgs.io / w.pgs.samples).toFixed(2)}`,
    );
  /** Where the slowest 1% of a side's probes spent their time, against the median of every probe. */
  const where = (label, each) => {
    const slow = [...each].sort((a, b) => b.total - a.total).slice(0, Math.max(1, Math.ceil(each.length / 100)));
    const med = (k) => percentile([...each].map((e) => e[k]).sort((a, b) => a - b), 50);
    const list = (k) => slow.map((e) => e[k]).join('/');
    console.log(
      `where the slowest ${slow.length} (${label}) went: total ${list('total')} ms = API before the insert ${list('api')} + insert → arrival ${list('relay')} ` +
        `(median of all: ${med('total')} = ${med('api')} + ${med('relay')}; the 202 answered after ${list('answer')}, median ${med('answer')}); ` +
        `campaign messages stored or sent during their insert → arrival ${list('beside')} (mean of all ${(each.reduce((n, e) => n + e.beside, 0) / each.length).toFixed(2)})`,
    );
  };

  const idle = async (label, ms) => {
    const cpu0 = cpuSeconds(gw.pid);
    const pg0 = await tableReads(d.pg);
    const started = Date.now();
    await sleep(ms);
    const s = (Date.now() - started) / 1000;
    const pg1 = await tableReads(d.pg);
    const out = { cpuMsPerS: ((cpuSeconds(gw.pid) - cpu0) * 1000) / s, recipientRowsPerS: (pg1.recipients - pg0.recipients) / s, campaignRowsPerS: (pg1.campaigns - pg0.campaigns) / s };
    console.log(`idle ${label.padEnd(40)} gateway CPU ${out.cpuMsPerS.toFixed(1)} ms/s; rows read per second: campaign_recipients ${out.recipientRowsPerS.toFixed(1)}, campaigns ${out.campaignRowsPerS.toFixed(1)}`);
    return out;
  };

  const idleNone = await idle('with no campaign', IDLE_MS);

  const small = [];
  const smallStart = Date.now() + 3600000;
  for (const s of sessions) small.push(await d.createCampaign(s, 'Small', 10, { startAt: smallStart, pacing: SCALE_PACING }));
  // the creations' own reads published before the window (an idle backend publishes within 10 s)
  await sleep(11000);
  const idleSmall = await idle(`${SCALE_CAMPAIGNS} campaigns × 10 recipients waiting`, IDLE_MS);
  for (let i = 0; i < sessions.length; i++) await d.call('POST', `/sessions/${sessions[i]}/campaigns/${small[i]}:cancel`);

  // the big ones start by themselves once the idle measurement is over
  const created0 = Date.now();
  const startAt = created0 + 75000 + IDLE_MS;
  const big = [];
  for (const s of sessions) big.push(await d.createCampaign(s, 'Big', SCALE_N, { startAt, pacing: SCALE_PACING }));
  log(`${SCALE_CAMPAIGNS} × ${SCALE_N} recipients created in ${((Date.now() - created0) / 1000).toFixed(1)} s`);
  await sleep(11000);
  const idleMs = startAt - Date.now() - 3000;
  if (idleMs < 5000) throw new Error('creating the campaigns took longer than their startAt allows');
  const idleBig = await idle(`${SCALE_CAMPAIGNS} campaigns × ${SCALE_N} recipients waiting`, Math.min(IDLE_MS, idleMs));
  await sleep(Math.max(0, startAt - Date.now() + 2000));

  // rounds of the probe with the campaigns paused (the baseline) and sending, alternately: a shared machine's load
  // drifts, and both sides of the ratio see the same drift
  const bigArrived = async () => {
    let n = 0;
    for (const s of sessions) n += (await d.received(s)).filter((m) => typeof m.text === 'string' && m.text.startsWith('Big: ')).length;
    return n;
  };
  const all = async (what) => {
    for (let i = 0; i < sessions.length; i++) await d.call('POST', `/sessions/${sessions[i]}/campaigns/${big[i]}:${what}`);
  };
  const base = [];
  const loadedLat = [];
  /** per round, its two blocks' latencies (the bootstrap's unit) */
  const blocks = [];
  const baseEach = [];
  const loadedEach = [];
  let sentDuring = 0;
  let activeS = 0;
  let cpuMs = 0;
  const pausedRound = async (round) => {
    await all('pause');
    await sleep(1000);
    const p0 = await bigArrived();
    const t = Date.now();
    const done = await watch();
    const paused = await probes(`baseline${round}`);
    const w = await done();
    describeRound(`paused ${round}`, paused, w, ((await bigArrived()) - p0) / ((Date.now() - t) / 1000));
    base.push(...paused.values);
    baseEach.push(...paused.each);
    (blocks[round] ??= {}).paused = paused.values;
  };
  const sendingRound = async (round) => {
    await all('resume');
    await sleep(2000);
    const a0 = await bigArrived();
    const cpu0 = cpuSeconds(gw.pid);
    const t = Date.now();
    const done = await watch();
    const sending = await probes(`loaded${round}`);
    const w = await done();
    const roundS = (Date.now() - t) / 1000;
    const roundSent = (await bigArrived()) - a0;
    describeRound(`sending ${round}`, sending, w, roundSent / roundS);
    loadedLat.push(...sending.values);
    loadedEach.push(...sending.each);
    (blocks[round] ??= {}).sending = sending.values;
    activeS += roundS;
    sentDuring += roundSent;
    cpuMs += (cpuSeconds(gw.pid) - cpu0) * 1000;
  };
  // paused first in even rounds, sending first in odd ones: neither side always follows the other
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      await pausedRound(round);
      await sendingRound(round);
    } else {
      await sendingRound(round);
      await pausedRound(round);
    }
  }
  where('paused', baseEach);
  where('sending', loadedEach);
  const baseline = stats(base);
  const loaded = stats(loadedLat);
  console.log(`single send on the probe session, campaigns paused:  ${fmt(baseline)}`);
  console.log(`single send on the probe session, campaigns sending: ${fmt(loaded)}`);
  const spread = ratioSpread(blocks);
  console.log(
    `p99 ratio sending / paused ${(loaded.p99 / baseline.p99).toFixed(2)} (goal ≤ 1.2; bootstrap over the ${ROUNDS} rounds: 95% in ` +
      `${spread.low.toFixed(2)}–${spread.high.toFixed(2)}, median ${spread.mid.toFixed(2)}), p50 ratio ${(loaded.p50 / baseline.p50).toFixed(2)}`,
  );
  console.log(`campaigns sent ${sentDuring} messages in ${activeS.toFixed(1)} s: ${(sentDuring / activeS).toFixed(1)}/s (pacing ${SCALE_PACING.minDelayMs}–${SCALE_PACING.maxDelayMs} ms allows ≤ ${((SCALE_CAMPAIGNS * 1000) / SCALE_PACING.minDelayMs).toFixed(1)}/s); gateway CPU ${(cpuMs / activeS).toFixed(0)} ms/s, ${(cpuMs / Math.max(1, sentDuring + ROUNDS * PROBES)).toFixed(2)} ms per message sent`);
  if (DIAGNOSE) {
    // the campaigns alone, sending: the gateway's CPU profile and PostgreSQL's statements (pg_stat_statements, nested
    // ones included: the triggers' statements are counted on their own and inside the statement that fired them)
    // the last round may have ended paused (an odd round count's order): sending again first
    await all('resume');
    await sleep(2000);
    await d.pg.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await d.pg.query('SELECT pg_stat_statements_reset()');
    const a0 = await bigArrived();
    const profiler = await inspectorProfile(d.inspectPorts.get('gw-scale'));
    const pg0 = pgCpuSeconds(servers.pg.pid);
    const started = Date.now();
    await sleep(DIAGNOSE_MS);
    const profile = await profiler.stop();
    const s = (Date.now() - started) / 1000;
    const n = (await bigArrived()) - a0;
    console.log(`\n-- diagnosis: ${n} campaign messages in ${s.toFixed(1)} s; PostgreSQL CPU ${(((pgCpuSeconds(servers.pg.pid) - pg0) * 1000) / Math.max(1, n)).toFixed(2)} ms per message`);
    const top = await d.pg.query(
      `SELECT calls, round(total_exec_time::numeric, 1) AS ms, round((total_exec_time / calls)::numeric, 3) AS mean, toplevel, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) AS q
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 25`,
    );
    for (const r of top.rows) console.log(`${String(r.ms).padStart(9)} ms ${String(r.calls).padStart(6)} calls ${String(r.mean).padStart(8)} ms ${r.toplevel ? 'top ' : 'nest'} ${r.q}`);
    const summary = profileSummary(profile, 30);
    console.log(`gateway profile: ${summary.totalMs.toFixed(0)} ms sampled`);
    for (const row of summary.rows) console.log(row);
  }
  const view = (await d.call('GET', `/sessions/${sessions[0]}/campaigns/${big[0]}`)).body;
  console.log(`one of them after the rounds: ${JSON.stringify(view.counts)}`);
  for (let i = 0; i < sessions.length; i++) await d.call('POST', `/sessions/${sessions[i]}/campaigns/${big[i]}:cancel`);
  await killChildren(children.splice(0));
  await d.stop();
  return { baseline, loaded, idleNone, idleSmall, idleBig, sentDuring, activeS, cpuMs };
}

async function main() {
  const servers = new PrivateServers(DIAGNOSE ? { pgSettings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all'] } : {});
  const children = [];
  const stderr = openSync(LOG, 'a');
  console.log(`campaigns benchmark; the processes' stderr goes to ${LOG}`);
  try {
    await servers.start();
    if (process.env.CAMPAIGN_SKIP_CHAOS !== '1') await chaos(servers, children, stderr);
    if (process.env.CAMPAIGN_SKIP_SCALE !== '1') await scale(servers, children, stderr);
  } finally {
    await killChildren(children);
    await servers.destroy();
  }
}

survivePgRestarts();

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
