#!/usr/bin/env node
// Fleet benchmark on the real engine (issue 18 item 5): Baileys gateways against the simulator's WhatsApp Web front
// door (docs/network-sim.md), every figure beside the emulator's own cost measured in the same run, so the reader can
// subtract the stand-in. Run by `npm run bench:fleet` after the sim part (BENCH_ENGINES=baileys for this part alone),
// or directly: `node bench/fleet-real-engine.js`. Prints
//   - an empty Baileys gateway's RSS and boot CPU (the zero of the per-session figures),
//   - pairing: every session paired through the QR flow (the emulator has no way to register a device with pre-made
//     credentials), BENCH_REAL_PAIR_CONCURRENCY at a time; gateway and emulator CPU per pairing,
//   - at each checkpoint (BENCH_REAL_CHECKPOINTS, default BENCH_REAL_SESSIONS), once the gateway is quiet: its RSS per
//     connected idle session (minus the empty gateway's, and the slope between checkpoints), the emulator's RSS per
//     device, and both processes' idle CPU,
//   - inbound: one text per session from an emulated contact (a Signal `pkmsg`: the contact starts its session), then
//     BENCH_REAL_MESSAGES_PER_SESSION - 1 more (`msg`), each counted once as `message.received` in the outbox; gateway
//     CPU per message decrypted (the whole inbound path: decrypt, spool, event, receipt) raw and net of its idle rate,
//     beside the emulator's per message encrypted,
//   - reconnect rounds (BENCH_REAL_RECONNECT_ROUNDS, default 0): a `stream-error-515` on every session, all working
//     again, that many times; then idle CPU and the further texts again, and `after reconnects: <CPU per msg after ÷
//     before>` on its own line (each reconnect is a new Baileys socket: what a socket leaves behind shows here): each
//     side is two batches in a row from both processes quiet, the ratio the second (warm) ones', the first (cold)
//     ones' and the emulator's own on the line before it,
//   - resume: the gateway stopped (SIGINT, no drain) and started again under the same id: time to every session
//     `working` again from its creds in PostgreSQL, gateway and emulator CPU per resumed session,
//   - failover: a second, empty gateway started, the first SIGKILLed just after a heartbeat holding all the sessions;
//     time to all `working` on the second, per phase (as the sim part), and both processes' CPU per session.
// Sizes: BENCH_REAL_SESSIONS (100), BENCH_REAL_CHECKPOINTS, BENCH_REAL_PAIR_CONCURRENCY (4),
// BENCH_REAL_MESSAGES_PER_SESSION (3), BENCH_REAL_INJECT_CONCURRENCY (4), BENCH_STEP_TIMEOUT_MS (900000 per step).
// BENCH_REAL_PAIR_BUDGET_S (none): pairing stops at the first checkpoint reached after that many seconds, and the rest
// of the run (inbound, resume, failover) takes the sessions paired so far — the largest size this machine reaches.
// BENCH_REAL_RESUME_FAILOVER=0 ends the run after the inbound (and reconnect) phases.
// Density (issue 36 item 7): BENCH_REAL_PRELINK=1 links every session after the first BENCH_REAL_QR_PAIRINGS (10)
// without the QR flow (the simulator runs with SIM_TEST_PRELINK; bench/prelinked-devices.js), so 1 000 sessions are
// held in minutes; at every checkpoint BENCH_REAL_CHECKPOINT_TEXTS (200) first texts from a contact new to that
// checkpoint (`pkmsg`) then as many second ones (`msg`), to sessions spread over those held, paced at
// BENCH_REAL_INBOUND_RATE (20) per second; at the end `flatness msg:` / `flatness pkmsg:` (CPU per message net of idle
// at the largest checkpoint ÷ at the first), `idle CPU per 1,000 sessions:`, and with BENCH_REAL_HOLD_S a hold of that
// many seconds at the largest count counting the gateway's lease lapses (gw_gateway_lease_lapses_total).
// BENCH_REAL_CONTROL=1: the reconnect rounds without their fault (each waits BENCH_REAL_CONTROL_ROUND_S, default 0,
// for the time a round takes), so `after reconnects:` shows what the time and the batches alone do. BENCH_REAL_PROFILE=<dir>: CPU profiles of the gateway
// and the emulator over the batches the ratio compares (their inspectors), written to <dir> and summed up.
// BENCH_REAL_HEARTBEAT_MS / BENCH_REAL_TTL_MS (2000 / 20000): the gateways' heartbeat and lease TTL.
// Every figure line ends with the load average at that moment. The gateways' and the emulator's stderr (Baileys warns
// a lot) go to a log file named at the start (BENCH_REAL_LOG to choose it). Asserts nothing. Uses its own database and Redis prefix
// and removes both at the end.
'use strict';
const { openSync, closeSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const os = require('node:os');
const { Pool } = require('pg');
const IORedis = require('ioredis');
const { prelinker } = require('./prelinked-devices');
const { writeFileSync } = require('node:fs');
const { benchRun, cpuSeconds, rssMb, sleep, waitUntil, freePort, startApp, killChildren, killAfterHeartbeat, failoverPhases, formatPhases, inspectorProfile, profileSummary } = require('./support');

const ROOT = join(__dirname, '..');
const SESSIONS = Number(process.env.BENCH_REAL_SESSIONS ?? 100);
const CHECKPOINTS = (process.env.BENCH_REAL_CHECKPOINTS ?? String(SESSIONS))
  .split(',')
  .map(Number)
  .filter((n) => n > 0 && n <= SESSIONS);
if (!CHECKPOINTS.includes(SESSIONS)) CHECKPOINTS.push(SESSIONS);
CHECKPOINTS.sort((a, b) => a - b);
const PAIR_CONCURRENCY = Number(process.env.BENCH_REAL_PAIR_CONCURRENCY ?? 4);
const MESSAGES_PER_SESSION = Math.max(1, Number(process.env.BENCH_REAL_MESSAGES_PER_SESSION ?? 3));
// a burst of 16 at a time (200 first texts) starved a gateway past its 20 s lease TTL at load ~15 on 2 cores
const INJECT_CONCURRENCY = Number(process.env.BENCH_REAL_INJECT_CONCURRENCY ?? 4);
const STEP_TIMEOUT_MS = Number(process.env.BENCH_STEP_TIMEOUT_MS ?? 900000);
const RECONNECT_ROUNDS = Number(process.env.BENCH_REAL_RECONNECT_ROUNDS ?? 0);
const RESUME_FAILOVER = process.env.BENCH_REAL_RESUME_FAILOVER !== '0';
const PAIR_BUDGET_MS = process.env.BENCH_REAL_PAIR_BUDGET_S ? Number(process.env.BENCH_REAL_PAIR_BUDGET_S) * 1000 : Infinity;
// twice the floors test/support/engine.ts engineEnv gives a Baileys gateway (1 s / 10 s): a first login generates and
// stores 812 pre-keys, blocking the event loop for a second or more, and on the shared 2-core box at load ~20 eight
// pairings at a time stalled a gateway past a 10 s TTL (it fenced itself and closed every socket)
const PRELINK = process.env.BENCH_REAL_PRELINK === '1';
const QR_PAIRINGS = PRELINK ? Math.min(SESSIONS, Number(process.env.BENCH_REAL_QR_PAIRINGS ?? 10)) : SESSIONS;
const CHECKPOINT_TEXTS = PRELINK ? Number(process.env.BENCH_REAL_CHECKPOINT_TEXTS ?? 200) : 0;
const INBOUND_RATE = Number(process.env.BENCH_REAL_INBOUND_RATE ?? 20);
const HOLD_S = Number(process.env.BENCH_REAL_HOLD_S ?? 0);
const HEARTBEAT_MS = process.env.BENCH_REAL_HEARTBEAT_MS ?? '2000';
const TTL_MS = process.env.BENCH_REAL_TTL_MS ?? '20000';
const CONTROL = process.env.BENCH_REAL_CONTROL === '1';
const CONTROL_ROUND_S = Number(process.env.BENCH_REAL_CONTROL_ROUND_S ?? 0);
const PROFILE_DIR = process.env.BENCH_REAL_PROFILE ?? '';

const load = () => `[load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}]`;
const kb = (mb) => (mb * 1024).toFixed(0);

async function run() {
  const runCtx = benchRun();
  const { PREFIX, DATABASE_URL, REDIS_URL } = runCtx;
  const { migrate } = require(join(ROOT, 'dist/libs/database/src/data-source.js'));
  const { RedisQrBoard } = require(join(ROOT, 'dist/libs/fleet/src/qr-board.js'));
  const { RedisKeys } = require(join(ROOT, 'dist/libs/redis/src/redis.js'));
  const { AdoptSignal } = require(join(ROOT, 'dist/libs/fleet/src/adopt-signal.js'));
  const children = [];
  const logPath = process.env.BENCH_REAL_LOG ?? join(os.tmpdir(), `fleet-real-engine-${runCtx.runId}.log`);
  const log = openSync(logPath, 'a');
  // Ctrl-C: no gateway or emulator left behind (the run's database and Redis keys stay; dropRun in bench/support.js)
  const interrupted = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    process.exit(130);
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  // a gateway starved of CPU past its lease TTL fences itself and closes every socket (docs/gateway.md, Leases and
  // fencing): a phase in which that happened measured reconnects too, and its line says so
  let fencesSeen = 0;
  const fenced = () => {
    const now = (readFileSync(logPath, 'utf8').match(/lease renewals lapsed: closing every socket/g) ?? []).length;
    const since = now - fencesSeen;
    fencesSeen = now;
    return since ? ` !! a gateway fenced itself ${since}× in this phase (lease renewals lapsed): the figures include its reconnects` : '';
  };
  const redis = new IORedis(REDIS_URL);
  const qrs = new RedisQrBoard(redis, new RedisKeys(PREFIX));
  let pg;
  try {
    await migrate(DATABASE_URL);
    // a pool: the pairing and injecting workers query at once
    pg = new Pool({ connectionString: DATABASE_URL, max: 4 });
    pg.on('error', () => undefined); // the database is dropped under it at the end
    const count = async (sql, args = []) => Number((await pg.query(sql, args)).rows[0].n);
    const baseEnv = { DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX: PREFIX, LOG_LEVEL: 'warn', NODE_ENV: 'test', SECRET_ENCRYPTION_KEY: runCtx.ENCRYPTION_KEY, JWT_SECRET: 'bench-jwt-secret-0123456789abcdef0123' };

    const simPort = await freePort();
    const simUrl = `http://127.0.0.1:${simPort}`;
    const simInspect = PROFILE_DIR ? await freePort() : null;
    const inspectEnv = (port) => (port ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:${port}` } : {});
    const sim = await startApp('dist/apps/network-sim/src/main.js', { ...baseEnv, ...inspectEnv(simInspect), SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '600000', SIM_TEST_PRELINK: PRELINK ? 'true' : 'false' }, `${simUrl}/healthz`, 60000, children, log);
    // the front door loads Baileys on its first trust request: the first gateway's boot asks it, so the zero is after it
    await fetch(`${simUrl}/sim/whatsapp-web/trust`);
    const simPost = async (path, body) => {
      const res = await fetch(`${simUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: await res.json().catch(() => null) };
    };

    const startGateway = async (id) => {
      const port = await freePort();
      const inspectPort = PROFILE_DIR ? await freePort() : null;
      const env = {
        ...baseEnv,
        ...inspectEnv(inspectPort),
        GATEWAY_ID: id,
        GATEWAY_ENGINE: 'baileys',
        NETWORK_SIM_URL: simUrl,
        WHATSAPP_EMULATOR_URL: simUrl,
        GATEWAY_HEARTBEAT_MS: HEARTBEAT_MS,
        GATEWAY_TTL_MS: TTL_MS,
        GATEWAY_HEALTH_PORT: String(port),
        GATEWAY_CAPACITY: String(SESSIONS * 2),
        SUPERVISOR_ENABLED: 'true',
        REBALANCE_MOVES_PER_MIN: '0',
      };
      const startedAt = Date.now();
      // a gateway serves health once it has resumed what is placed on it
      const child = await startApp('dist/apps/gateway/src/main.js', env, `http://127.0.0.1:${port}/healthz`, STEP_TIMEOUT_MS, children, log);
      return { id, child, startedAt, inspectPort, healthyMs: Date.now() - startedAt, metricsUrl: `http://127.0.0.1:${port}/metrics` };
    };
    const stop = async (child, signal) => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
    };
    /** Until `pid` used < 0.1 CPU-s in each of 3 consecutive seconds (cap 120 s): the sessions' after-login work done. */
    const quiet = async (pid) => {
      let calm = 0;
      let last = cpuSeconds(pid);
      const deadline = Date.now() + 120000;
      while (calm < 3 && Date.now() < deadline) {
        await sleep(1000);
        const now = cpuSeconds(pid);
        calm = now - last < 0.1 ? calm + 1 : 0;
        last = now;
      }
      return calm >= 3;
    };
    /** CPU-s per minute of `pids` over `ms` of idling. */
    const idleRate = async (pids, ms = 10000) => {
      const before = pids.map(cpuSeconds);
      const t = Date.now();
      await sleep(ms);
      const elapsed = (Date.now() - t) / 60000;
      return pids.map((pid, i) => (cpuSeconds(pid) - before[i]) / elapsed);
    };

    console.log(`fleet bench, real engine: ${SESSIONS} Baileys sessions (heartbeat ${HEARTBEAT_MS} ms, TTL ${TTL_MS} ms) against the WhatsApp Web emulator, ${os.cpus().length} cores; processes' stderr in ${logPath} ${load()}`);

    // ---- an empty Baileys gateway: the zero of the per-session figures
    const probe = await startGateway('gw-real-probe');
    const probeBootCpu = cpuSeconds(probe.child.pid);
    await quiet(probe.child.pid);
    const emptyRss = rssMb(probe.child.pid);
    await stop(probe.child, 'SIGINT');
    const simRss0 = rssMb(sim.pid);
    console.log(`  empty gateway: ${emptyRss.toFixed(0)} MB RSS, ${probeBootCpu.toFixed(2)} CPU-s to healthy (${probe.healthyMs} ms); emulator before any device ${simRss0.toFixed(0)} MB ${load()}`);

    // ---- pair every session through the QR flow, PAIR_CONCURRENCY at a time, stopping at each checkpoint
    await pg.query(`INSERT INTO organizations (id, name) VALUES ('org_real', 'bench')`);
    const gw = await startGateway('gw-real-1');
    /** the gateway's V8 heap in use (its own metrics), MB: what reconnected sockets leave behind shows here */
    const heapMb = async () => {
      const text = await fetch(gw.metricsUrl).then((r) => r.text());
      const line = text.split('\n').find((l) => l.startsWith('gw_nodejs_heap_size_used_bytes'));
      return line ? (Number(line.split(' ').pop()) / 1e6).toFixed(0) : '?';
    };
    const ids = Array.from({ length: SESSIONS }, (_, i) => `ses_r${String(i).padStart(6, '0')}`);
    const linker = PRELINK ? await prelinker({ simUrl, databaseUrl: DATABASE_URL, encryptionKey: runCtx.ENCRYPTION_KEY }) : null;
    let linkedAt = 0;
    const adoptSignal = new AdoptSignal(new RedisKeys(PREFIX));
    /** a session linked without its screen: its row and creds in place, then the gateway told to adopt */
    const prelinkOne = async (id, index) => {
      // the row first (the auth state references it), stopped and unplaced until its creds are stored: a gateway that
      // started it earlier would show a QR
      await pg.query(`INSERT INTO sessions (id, organization_id, label, status, desired_state) VALUES ($1, 'org_real', 'bench', 'stopped', 'stopped')`, [id]);
      await linker.link(id, `1555${String(2000000 + index).padStart(7, '0')}`);
      await pg.query(`UPDATE sessions SET status = 'starting', desired_state = 'running', gateway_id = $2 WHERE id = $1`, [id, gw.id]);
      if (Date.now() - linkedAt > 500) {
        linkedAt = Date.now();
        await adoptSignal.notify(redis, gw.id);
      }
    };
    const pairOne = async (id, index) => {
      if (index >= QR_PAIRINGS) return prelinkOne(id, index);
      await pg.query(`INSERT INTO sessions (id, organization_id, label, status, gateway_id) VALUES ($1, 'org_real', 'bench', 'starting', $2)`, [id, gw.id]);
      // the scan answers 409 when the QR it names rotated meanwhile: read the current one and scan again
      await waitUntil(async () => {
        const shown = await qrs.read(id);
        if (!shown) return false;
        const res = await simPost(`/sim/sessions/${id}/scan`, { qr: shown.qr });
        if (res.status === 200) return true;
        if (res.status !== 409) throw new Error(`scan of ${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
        return false;
      }, `a QR of ${id} scanned`, STEP_TIMEOUT_MS);
      await waitUntil(async () => (await pg.query(`SELECT status FROM sessions WHERE id = $1`, [id])).rows[0]?.status === 'working', `${id} working`, STEP_TIMEOUT_MS);
    };
    const working = () => count(`SELECT count(*) AS n FROM sessions WHERE status = 'working'`);
    const receivedCount = () => count(`SELECT count(*) AS n FROM events WHERE type = 'message.received'`);
    /**
     * CHECKPOINT_TEXTS texts from a contact new to this checkpoint to sessions spread over the `held` ones, paced at
     * INBOUND_RATE per second, then as many again from the same contact to the same sessions: per message, the
     * gateway's CPU net of its idle rate for a `pkmsg` (the contact starts its Signal session) and for a `msg`.
     */
    const checkpointTexts = async (held, index, gwIdlePerS, simIdlePerS) => {
      const n = Math.min(CHECKPOINT_TEXTS, held.length);
      const targets = Array.from({ length: n }, (_, i) => held[Math.floor((i * held.length) / n)]);
      const from = `1555777${String(index).padStart(4, '0')}`;
      const paced = async (kind) => {
        const before = await receivedCount();
        const gwCpu0 = cpuSeconds(gw.child.pid);
        const simCpu0 = cpuSeconds(sim.pid);
        const t0 = Date.now();
        const posts = [];
        for (let i = 0; i < n; i++) {
          const due = t0 + (i * 1000) / INBOUND_RATE;
          if (due > Date.now()) await sleep(due - Date.now());
          posts.push(simPost(`/sim/sessions/${targets[i]}/inbound`, { from, text: `checkpoint ${held.length} ${kind} ${i}` }));
        }
        for (const res of await Promise.all(posts)) if (res.status !== 200) throw new Error(`inbound answered ${res.status}: ${JSON.stringify(res.body)}`);
        await waitUntil(async () => (await receivedCount()) - before >= n, `${n} ${kind} texts received at ${held.length}`, STEP_TIMEOUT_MS);
        const seconds = (Date.now() - t0) / 1000;
        const gwMs = ((cpuSeconds(gw.child.pid) - gwCpu0 - gwIdlePerS * seconds) * 1000) / n;
        const em = ((cpuSeconds(sim.pid) - simCpu0 - simIdlePerS * seconds) * 1000) / n;
        return { gw: gwMs, em, seconds };
      };
      const pk = await paced('pkmsg');
      const msg = await paced('msg');
      console.log(
        `  ${held.length} sessions, ${n} texts at ${INBOUND_RATE}/s: pkmsg gateway ${pk.gw.toFixed(2)} ms CPU per message net of idle (emulator ${pk.em.toFixed(2)}), all in ${pk.seconds.toFixed(1)} s; ` +
          `msg gateway ${msg.gw.toFixed(2)} ms (emulator ${msg.em.toFixed(2)}), ${msg.seconds.toFixed(1)} s${fenced()} ${load()}`,
      );
      return { pkmsgMs: pk.gw, msgMs: msg.gw, simPkmsgMs: pk.em, simMsgMs: msg.em };
    };
    const checkpoints = [];
    const pairStart = Date.now();
    let paired = 0;
    let pairWallMs = 0;
    let pairGwCpu = 0;
    let pairSimCpu = 0;
    for (const target of CHECKPOINTS) {
      if (paired > 0 && Date.now() - pairStart > PAIR_BUDGET_MS) break;
      const gwCpu0 = cpuSeconds(gw.child.pid);
      const simCpu0 = cpuSeconds(sim.pid);
      const t0 = Date.now();
      let next = paired;
      await Promise.all(
        Array.from({ length: PAIR_CONCURRENCY }, async () => {
          while (next < target) {
            const index = next++;
            await pairOne(ids[index], index);
          }
        }),
      );
      if (PRELINK) {
        await adoptSignal.notify(redis, gw.id);
        await waitUntil(async () => (await working()) >= target, `${target} sessions working`, STEP_TIMEOUT_MS);
      }
      pairWallMs += Date.now() - t0;
      pairGwCpu += cpuSeconds(gw.child.pid) - gwCpu0;
      pairSimCpu += cpuSeconds(sim.pid) - simCpu0;
      paired = target;
      const settled = await quiet(gw.child.pid);
      const [gwIdle, simIdle] = await idleRate([gw.child.pid, sim.pid]);
      const point = { sessions: target, gwRss: rssMb(gw.child.pid), simRss: rssMb(sim.pid), gwIdle, simIdle, settled };
      checkpoints.push(point);
      const prev = checkpoints[checkpoints.length - 2];
      const slope = prev ? `; slope from ${prev.sessions}: ${kb((point.gwRss - prev.gwRss) / (target - prev.sessions))} KB gateway, ${kb((point.simRss - prev.simRss) / (target - prev.sessions))} KB emulator per session` : '';
      if (CHECKPOINT_TEXTS > 0) Object.assign(point, await checkpointTexts(ids.slice(0, target), checkpoints.length, gwIdle / 60, simIdle / 60));
      console.log(
        `  ${target} connected idle sessions${settled ? '' : ' (gateway not quiet after 120 s)'}: gateway ${point.gwRss.toFixed(0)} MB RSS → ` +
          `${kb((point.gwRss - emptyRss) / target)} KB per session over the empty gateway; emulator ${kb((point.simRss - simRss0) / target)} KB per device${slope}; ` +
          `idle CPU gateway ${gwIdle.toFixed(2)} / emulator ${simIdle.toFixed(2)} CPU-s per minute${fenced()} ${load()}`,
      );
    }
    if (CHECKPOINT_TEXTS > 0 && checkpoints.length > 1) {
      const first = checkpoints[0];
      const last = checkpoints[checkpoints.length - 1];
      console.log(`  flatness: CPU per message net of idle at ${last.sessions} sessions ÷ at ${first.sessions} (goal ≤ 1.25 each; the emulator's own: msg ${(last.simMsgMs / first.simMsgMs).toFixed(2)}, pkmsg ${(last.simPkmsgMs / first.simPkmsgMs).toFixed(2)}) ${load()}`);
      console.log(`flatness msg: ${(last.msgMs / first.msgMs).toFixed(2)}`);
      console.log(`flatness pkmsg: ${(last.pkmsgMs / first.pkmsgMs).toFixed(2)}`);
    }
    {
      const last = checkpoints[checkpoints.length - 1];
      console.log(`idle CPU per 1,000 sessions: ${((last.gwIdle * 1000) / last.sessions).toFixed(2)} CPU-s per minute (goal ≤ 6; emulator ${((last.simIdle * 1000) / last.sessions).toFixed(2)})`);
      console.log(`RSS per session at ${last.sessions}: ${((last.gwRss - emptyRss) / last.sessions).toFixed(2)} MB (goal ≤ 2.5)`);
    }
    if (HOLD_S > 0) {
      const lapses = async () => {
        const text = await fetch(gw.metricsUrl).then((r) => r.text());
        const line = text.split('\n').find((l) => l.startsWith('gw_gateway_lease_lapses_total'));
        return line ? Number(line.split(' ').pop()) : NaN;
      };
      const before = await lapses();
      const cpu0 = cpuSeconds(gw.child.pid);
      await sleep(HOLD_S * 1000);
      const lapsed = (await lapses()) - before;
      const held = await working();
      console.log(`lease lapses during a ${HOLD_S} s hold at ${paired}: ${lapsed} (goal 0); ${held} working at its end; idle CPU ${((cpuSeconds(gw.child.pid) - cpu0) / (HOLD_S / 60)).toFixed(2)} CPU-s per minute${fenced()} ${load()}`);
    }
    await linker?.close();
    // the size the rest of the run takes: every session, or what the pairing budget reached
    const N = paired;
    const sessionIds = ids.slice(0, N);
    if (N < SESSIONS) console.log(`  pairing budget (${PAIR_BUDGET_MS / 1000} s) spent at ${N} of ${SESSIONS} sessions: the rest of the run takes ${N} ${load()}`);
    console.log(
      (PRELINK
        ? `  linking ${N} (${QR_PAIRINGS} through the QR flow, the rest prelinked on the emulator then logged in; the CPU below mixes both): ${(pairWallMs / 1000).toFixed(1)} s; `
        : `  pairing ${N} (QR → scan → 515 restart → login → pre-key upload → working, ${PAIR_CONCURRENCY} at a time): ${(pairWallMs / 1000).toFixed(1)} s; `) +
        `CPU per pairing gateway ${((pairGwCpu * 1000) / N).toFixed(0)} ms, emulator ${((pairSimCpu * 1000) / N).toFixed(0)} ms ${load()}`,
    );

    // ---- inbound: contacts write to every idle session; the gateway's CPU per message decrypted
    const gwIdleRate = checkpoints[checkpoints.length - 1].gwIdle / 60;
    const simIdleRate = checkpoints[checkpoints.length - 1].simIdle / 60;
    const received = () => count(`SELECT count(*) AS n FROM events WHERE type = 'message.received'`);
    /** With BENCH_REAL_PROFILE: CPU profiles of the gateway and the emulator over a phase, written there and summed up. */
    const profiled = async (name, phase) => {
      if (!PROFILE_DIR) return phase();
      const profs = [await inspectorProfile(gw.inspectPort), await inspectorProfile(simInspect)];
      const result = await phase();
      for (const [i, who] of ['gateway', 'emulator'].entries()) {
        const profile = await profs[i].stop();
        writeFileSync(join(PROFILE_DIR, `${name}-${who}.cpuprofile`), JSON.stringify(profile));
        const { totalMs, rows } = profileSummary(profile, 25);
        console.log(`    profile ${name} ${who}: ${totalMs.toFixed(0)} ms sampled\n      ${rows.join('\n      ')}`);
      }
      return result;
    };
    const inject = async (rounds, label) => {
      const jobs = [];
      for (let r = 0; r < rounds; r++) jobs.push(...sessionIds);
      const before = await received();
      const gwCpu0 = cpuSeconds(gw.child.pid);
      const simCpu0 = cpuSeconds(sim.pid);
      const t0 = Date.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: INJECT_CONCURRENCY }, async () => {
          while (next < jobs.length) {
            const id = jobs[next++];
            const res = await simPost(`/sim/sessions/${id}/inbound`, { from: '15558880001', text: `bench ${label} ${next}` });
            if (res.status !== 200) throw new Error(`inbound to ${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
          }
        }),
      );
      await waitUntil(async () => (await received()) - before >= jobs.length, `${jobs.length} ${label} messages received`, STEP_TIMEOUT_MS);
      const seconds = (Date.now() - t0) / 1000;
      const gwCpu = cpuSeconds(gw.child.pid) - gwCpu0;
      const simCpu = cpuSeconds(sim.pid) - simCpu0;
      const n = jobs.length;
      const extra = (await received()) - before - n;
      console.log(
        `  inbound ${n} ${label} (${rounds} per session, ${INJECT_CONCURRENCY} posts at a time): all received in ${seconds.toFixed(1)} s${extra ? ` (${extra} more message.received than sent!)` : ''}; ` +
          `gateway ${((gwCpu * 1000) / n).toFixed(2)} ms CPU per message decrypted (${(((gwCpu - gwIdleRate * seconds) * 1000) / n).toFixed(2)} net of idle), ` +
          `emulator ${((simCpu * 1000) / n).toFixed(2)} ms per message encrypted (${(((simCpu - simIdleRate * seconds) * 1000) / n).toFixed(2)} net)${fenced()} ${load()}`,
      );
      return { gw: gwCpu / n, sim: simCpu / n };
    };
    /**
     * The batches `after reconnects:` compares, each run twice in a row from both processes quiet plus 10 s: the first
     * (cold) batch after a pause costs more on both sides whether or not a fault came before (1.4–1.6× on the gateway
     * after the ~1 min of three control rounds, BENCH_REAL_CONTROL=1, against ~16 s before the `before` batch), and
     * the first `before` batch, measured straight after the first texts, was billed their tail. The ratio is the
     * second (warm) batches': what a reconnected socket costs per message for good; the cold ratio is printed beside it.
     */
    const settle = async () => {
      await quiet(gw.child.pid);
      await quiet(sim.pid);
      await sleep(10000);
    };
    const twoBatches = async (name, label) => {
      if (RECONNECT_ROUNDS > 0) await settle();
      const cold = await profiled(`${name}-cold`, () => inject(furtherRounds, `further texts (msg)${label}`));
      const warm = RECONNECT_ROUNDS > 0 ? await profiled(`${name}-warm`, () => inject(furtherRounds, `further texts (msg) again${label}`)) : cold;
      return { cold, warm };
    };
    await inject(1, 'first texts (pkmsg: the contact starts a Signal session)');
    const furtherRounds = Math.max(1, MESSAGES_PER_SESSION - 1);
    const perMsgBefore = await twoBatches('before', '');
    if (RECONNECT_ROUNDS > 0) console.log(`  before the reconnect rounds: gateway heap ${await heapMb()} MB ${load()}`);

    // ---- reconnect rounds: a transient fault on every session, every session working again, RECONNECT_ROUNDS times
    for (let round = 1; round <= RECONNECT_ROUNDS; round++) {
      const since = new Date();
      const t0 = Date.now();
      let next = 0;
      if (CONTROL) {
        // the control: the same phases without the fault, so what changes is the time and the messages before
        await sleep(CONTROL_ROUND_S * 1000);
        await quiet(gw.child.pid);
        const [idle] = await idleRate([gw.child.pid]);
        console.log(`  control round ${round} (no fault): ${((Date.now() - t0) / 1000).toFixed(1)} s; idle CPU gateway ${idle.toFixed(2)} CPU-s per minute; heap ${await heapMb()} MB${fenced()} ${load()}`);
        continue;
      }
      await Promise.all(
        Array.from({ length: INJECT_CONCURRENCY }, async () => {
          while (next < sessionIds.length) {
            const id = sessionIds[next++];
            const res = await simPost(`/sim/sessions/${id}/fault`, { kind: 'stream-error-515' });
            if (res.status !== 200) throw new Error(`fault on ${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
          }
        }),
      );
      await waitUntil(
        async () => (await count(`SELECT count(*) AS n FROM sessions WHERE status = 'working' AND last_connected_at >= $1`, [since])) === N,
        `the ${N} sessions working again after reconnect round ${round}`,
        STEP_TIMEOUT_MS,
      );
      await quiet(gw.child.pid);
      const [idle] = await idleRate([gw.child.pid]);
      console.log(`  reconnect round ${round} (stream-error-515 on every session → all working): ${((Date.now() - t0) / 1000).toFixed(1)} s; idle CPU gateway ${idle.toFixed(2)} CPU-s per minute; heap ${await heapMb()} MB${fenced()} ${load()}`);
    }
    if (RECONNECT_ROUNDS > 0) {
      const what = CONTROL ? `${RECONNECT_ROUNDS} control rounds (no fault)` : `${RECONNECT_ROUNDS} reconnect rounds`;
      const perMsgAfter = await twoBatches('after', ` after ${what}`);
      const ratio = (a, b) => (a / b).toFixed(2);
      console.log(
        `  CPU per msg after ÷ before, second (warm) batches: gateway ${ratio(perMsgAfter.warm.gw, perMsgBefore.warm.gw)} (emulator's own ${ratio(perMsgAfter.warm.sim, perMsgBefore.warm.sim)}); ` +
          `first (cold) batches: gateway ${ratio(perMsgAfter.cold.gw, perMsgBefore.cold.gw)} (emulator ${ratio(perMsgAfter.cold.sim, perMsgBefore.cold.sim)})${CONTROL ? '; control: no fault' : ''} ${load()}`,
      );
      console.log(`after reconnects: ${ratio(perMsgAfter.warm.gw, perMsgBefore.warm.gw)}${CONTROL ? ' (control: no fault)' : ''}`);
    }
    if (!RESUME_FAILOVER) return;

    // ---- resume: the gateway stopped (SIGINT: no drain, no other gateway) and started again under the same id
    await stop(gw.child, 'SIGINT');
    const simCpuR0 = cpuSeconds(sim.pid);
    const resumedFrom = new Date();
    const again = await startGateway('gw-real-1');
    await waitUntil(
      async () => (await count(`SELECT count(*) AS n FROM sessions WHERE status = 'working' AND last_connected_at >= $1`, [resumedFrom])) === N,
      `the ${N} sessions resumed`,
      STEP_TIMEOUT_MS,
    );
    const resumeMs = Date.now() - again.startedAt;
    const resumeGwCpu = cpuSeconds(again.child.pid) - probeBootCpu;
    const resumeSimCpu = cpuSeconds(sim.pid) - simCpuR0;
    const openedAgain = (await fetch(`${simUrl}/sim/sessions/${ids[0]}`).then((r) => r.json())).state;
    console.log(
      `  resume ${N} (gateway restarted under its id → every session working from its stored creds, no QR): ${(resumeMs / 1000).toFixed(1)} s (healthy after ${(again.healthyMs / 1000).toFixed(1)} s); ` +
        `CPU per resumed session gateway ${((resumeGwCpu * 1000) / N).toFixed(0)} ms (boot of an empty gateway subtracted), emulator ${((resumeSimCpu * 1000) / N).toFixed(0)} ms; emulator sees ${ids[0]} ${openedAgain}${fenced()} ${load()}`,
    );
    await quiet(again.child.pid);

    // ---- failover: an empty second gateway, the first SIGKILLed just after a heartbeat holding every session
    const target = await startGateway('gw-real-2');
    await quiet(target.child.pid);
    const targetEmptyRss = rssMb(target.child.pid);
    const orphanIds = (await pg.query(`SELECT id FROM sessions WHERE gateway_id = $1`, [again.id])).rows.map((r) => r.id);
    const tgtCpu0 = cpuSeconds(target.child.pid);
    const simCpuF0 = cpuSeconds(sim.pid);
    // with BENCH_REAL_PROFILE: the target's CPU profile over the takeover (what a login costs)
    const targetProfile = PROFILE_DIR ? await inspectorProfile(target.inspectPort) : null;
    const { killedAt, lastBeat } = await killAfterHeartbeat(redis, PREFIX, again.id, again.child);
    await waitUntil(
      async () => (await count(`SELECT count(*) AS n FROM sessions WHERE gateway_id = $1 AND status = 'working' AND last_connected_at >= $2`, [target.id, killedAt])) === orphanIds.length,
      `the ${orphanIds.length} sessions of ${again.id} working on ${target.id}`,
      STEP_TIMEOUT_MS,
    );
    if (targetProfile) {
      const profile = await targetProfile.stop();
      writeFileSync(join(PROFILE_DIR, 'failover-target.cpuprofile'), JSON.stringify(profile));
      const { totalMs, rows } = profileSummary(profile, 30);
      console.log(`    profile failover target: ${totalMs.toFixed(0)} ms sampled\n      ${rows.join('\n      ')}`);
    }
    const failoverMs = Date.now() - killedAt.getTime();
    const failGwCpu = cpuSeconds(target.child.pid) - tgtCpu0;
    const failSimCpu = cpuSeconds(sim.pid) - simCpuF0;
    const k = killedAt.getTime();
    const phases = await failoverPhases(pg, orphanIds, k);
    console.log(
      `  failover SIGKILL of ${again.id} holding ${orphanIds.length} → all working on ${target.id} (empty: ${targetEmptyRss.toFixed(0)} MB RSS) ${(failoverMs / 1000).toFixed(1)} s after the kill; ` +
        `CPU per session taken over: gateway ${((failGwCpu * 1000) / orphanIds.length).toFixed(0)} ms, emulator ${((failSimCpu * 1000) / orphanIds.length).toFixed(0)} ms${fenced()} ${load()}`,
    );
    console.log(`           ${formatPhases(phases, (await lastBeat()) - k)}`);
    await quiet(target.child.pid);
    console.log(`  after the failover: ${target.id} ${rssMb(target.child.pid).toFixed(0)} MB RSS holding ${orphanIds.length} (${kb((rssMb(target.child.pid) - emptyRss) / orphanIds.length)} KB per session over the empty gateway) ${load()}`);
  } finally {
    await killChildren(children);
    await pg?.end().catch(() => undefined);
    await runCtx.cleanup(redis).catch((err) => console.error('cleanup:', err));
    redis.disconnect();
    closeSync(log);
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
  }
}

module.exports = { run };

if (require.main === module) {
  run().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
