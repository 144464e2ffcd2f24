#!/usr/bin/env node
 
// Inbound spool cost per message (docs/gateway.md, "Redis persistence"): `node scripts/ensure-build.js && node bench/inbound-spool.bench.js`.
// What the Baileys engine adds per inbound event: encode, append (XADD script), and once the gateway took it, remove
// (XDEL); plus the replay read. Measured on the local Redis under a throwaway prefix, removed at the end. Prints figures,
// asserts nothing. BENCH_SPOOL_MESSAGES (default 20000).
'use strict';
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { execSync } = require('node:child_process');
const { readFileSync } = require('node:fs');

const ROOT = join(__dirname, '..');
const dist = (p) => require(join(ROOT, 'dist', p));
const { createRedis, RedisKeys } = dist('libs/redis/src');
const { InboundSpool } = dist('libs/messaging/src');
const { encodeSpooledEvent, decodeSpooledEvent } = dist('apps/gateway/src/engine/baileys/spooled-event');

const N = Number(process.env.BENCH_SPOOL_MESSAGES ?? 20000);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const redisPid = () => { try { return execSync('pgrep -x redis-server').toString().trim().split('\n')[0]; } catch { return null; } };
const rcpu = (pid) => { if (!pid) return 0; const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (+f[11] + +f[12]) / 100; };

/** A typical inbound text as the engine spools it: the mapped event with its ~60-byte proto content. */
function event(i) {
  return {
    type: 'message',
    message: {
      id: `3EB0${String(i).padStart(16, '0')}`, from: '4917612345678@s.whatsapp.net', chatJid: '4917612345678@s.whatsapp.net',
      text: `hello, this is inbound message number ${i}`, timestamp: 1_764_000_000_000 + i, fromMe: false, type: 'text',
      media: null, location: null, contact: null, poll: null, quotedWaMessageId: null, mentions: [],
      raw: Buffer.from(`\n*hello, this is inbound message number ${i}${'x'.repeat(16)}`),
    },
  };
}

(async () => {
  const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const keys = new RedisKeys(`bench-spool:${randomBytes(3).toString('hex')}`);
  // the gateway's shared client is connected before any session connects
  await new Promise((resolve) => redis.once('ready', resolve));
  const media = { redis: 0, memory: 0 };
  const metrics = { appended: (m) => (media[m] += 1), removed: () => undefined, replayed: () => undefined, overflowed: () => undefined };
  const spool = new InboundSpool(redis, keys, { maxEntries: N + 1, metrics });
  const pid = redisPid();
  const payloads = Array.from({ length: N }, (_, i) => encodeSpooledEvent('bench-connection', i, event(i)));
  const bytes = payloads.reduce((n, p) => n + Buffer.byteLength(p), 0) / N;

  let c0 = cpu();
  for (let i = 0; i < N; i += 1) encodeSpooledEvent('bench-connection', i, event(i));
  const encodeUs = ((cpu() - c0) / N) * 1e6;
  c0 = cpu();
  for (const p of payloads) decodeSpooledEvent(p);
  const decodeUs = ((cpu() - c0) / N) * 1e6;
  console.log(`payload ${bytes.toFixed(0)} B/message (a text message event); encode ${encodeUs.toFixed(1)} µs, decode ${decodeUs.toFixed(1)} µs per message`);

  // one at a time: append, wait until durable, remove (a quiet session: the latency an event waits before hand-over)
  const serial = Math.min(N, 5000);
  let t0 = process.hrtime.bigint();
  c0 = cpu();
  let r0 = rcpu(pid);
  for (let i = 0; i < serial; i += 1) {
    const entry = spool.append('ses_serial', payloads[i]);
    await entry.durable;
    spool.remove(entry);
  }
  await redis.ping();
  let wallUs = Number(process.hrtime.bigint() - t0) / 1e3 / serial;
  console.log(`one at a time (${serial}): ${wallUs.toFixed(1)} µs wall per message (append durable + remove); client CPU ${(((cpu() - c0) / serial) * 1e6).toFixed(1)} µs, Redis CPU ${(((rcpu(pid) - r0) / serial) * 1e6).toFixed(1)} µs`);

  // a burst (what an offline backlog looks like: Baileys emits them back to back), then all removed as they are taken
  t0 = process.hrtime.bigint();
  c0 = cpu();
  r0 = rcpu(pid);
  const entries = payloads.map((p) => spool.append('ses_burst', p));
  await Promise.all(entries.map((e) => e.durable));
  const appendedUs = Number(process.hrtime.bigint() - t0) / 1e3 / N;
  const measured = await spool.measure();
  for (const e of entries) spool.remove(e);
  await redis.ping();
  wallUs = Number(process.hrtime.bigint() - t0) / 1e3 / N;
  console.log(`burst of ${N}: appends durable after ${appendedUs.toFixed(1)} µs/message, with removes ${wallUs.toFixed(1)} µs/message wall; client CPU ${(((cpu() - c0) / N) * 1e6).toFixed(1)} µs, Redis CPU ${(((rcpu(pid) - r0) / N) * 1e6).toFixed(1)} µs per message`);
  console.log(`appended to redis ${media.redis}, to memory ${media.memory} (a write slower than the timeout falls back to memory)`);
  console.log(`size in Redis: ${(measured.bytes / N).toFixed(0)} B/message (MEMORY USAGE of a ${measured.entries}-entry stream / entries)`);

  // the replay of a full backlog on connect
  const backlog = payloads.slice(0, 10000).map((p) => spool.append('ses_replay', p));
  await Promise.all(backlog.map((e) => e.durable));
  t0 = process.hrtime.bigint();
  const read = await spool.pending('ses_replay');
  console.log(`replay read of ${read.length} entries: ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0)} ms`);

  await redis.del(...['ses_serial', 'ses_burst', 'ses_replay'].map((s) => keys.key(`inbound-spool:${s}`)));
  redis.disconnect();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
