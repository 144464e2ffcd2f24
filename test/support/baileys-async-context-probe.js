#!/usr/bin/env node
// What Baileys sockets leave behind in the process's async context (issue 36): opens SOCKETS real Baileys sockets
// (makeWASocket against a local WebSocket server), runs key-store transactions through each socket's signal
// repository — the encrypt/decrypt path every message takes — lets the server close them, then reports over IPC:
//   asyncLocalStorages  AsyncLocalStorage instances constructed since start (every runtime)
//   hiddenProperties    own symbol properties on a fresh promise (what each enabled store stamps on Node < 24)
//   awaitsCpuMs         CPU time of AWAITS awaits, one sample per 'sample' message
// With SOCKETS=0 it is the baseline: Baileys loaded and its key store used once (one transaction on a store that
// no socket owns), but no socket opened. A child process because jest cannot load ESM-only Baileys.
const asyncHooks = require('node:async_hooks');
const { syncBuiltinESMExports } = require('node:module');

// counts constructions through the same class Baileys' `import { AsyncLocalStorage } from 'async_hooks'` binds to
let asyncLocalStorages = 0;
const NativeAsyncLocalStorage = asyncHooks.AsyncLocalStorage;
asyncHooks.AsyncLocalStorage = class CountedAsyncLocalStorage extends NativeAsyncLocalStorage {
  constructor(...args) {
    super(...args);
    asyncLocalStorages++;
  }
};
syncBuiltinESMExports();

const { WebSocketServer } = require('ws');
const pino = require('pino');
const baileys = require('@whiskeysockets/baileys');

const SOCKETS = Number(process.env.SOCKETS ?? 0);
const AWAITS = Number(process.env.AWAITS ?? 100_000);
const BATCH = 20;
const logger = pino({ level: 'silent' });

function memoryKeys() {
  const rows = new Map();
  return {
    get: async (type, ids) => Object.fromEntries(ids.filter((id) => rows.has(`${type}/${id}`)).map((id) => [id, rows.get(`${type}/${id}`)])),
    set: async (data) => {
      for (const [type, items] of Object.entries(data)) {
        for (const [id, value] of Object.entries(items)) {
          if (value == null) rows.delete(`${type}/${id}`);
          else rows.set(`${type}/${id}`, value);
        }
      }
    },
  };
}

/** A socket as the gateway drives it: connected, then a transaction through its signal repository. */
async function openSocket(url, index) {
  const sock = baileys.makeWASocket({
    auth: { creds: baileys.initAuthCreds(), keys: memoryKeys() },
    waWebSocketUrl: url,
    logger,
    printQRInTerminal: false,
    connectTimeoutMs: 60_000,
  });
  await new Promise((resolve, reject) => {
    sock.ws.once('open', resolve);
    sock.ws.once('error', reject);
  });
  const me = `1555000${String(index).padStart(4, '0')}@s.whatsapp.net`;
  // a group send creates this socket's sender key and commits it: a full transaction (read, write, commit)
  await sock.signalRepository.encryptGroupMessage({ group: '120363000000000000@g.us', meId: me, data: Buffer.from('hi') });
  // a group decrypt from a sender whose key this socket lacks fails inside its transaction, after it has begun
  await sock.signalRepository
    .decryptGroupMessage({ group: '120363000000000000@g.us', authorJid: '15550009999@s.whatsapp.net', msg: Buffer.alloc(48, 1) })
    .catch(() => undefined);
  return { closed: new Promise((resolve) => sock.ev.on('connection.update', (update) => update.connection === 'close' && resolve())) };
}

/** Opens `count` sockets in batches; the server then drops each batch, as WhatsApp ends a stream, and they close. */
async function openSockets(count) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `ws://127.0.0.1:${server.address().port}/ws/chat`;
  for (let first = 0; first < count; first += BATCH) {
    const sockets = await Promise.all(Array.from({ length: Math.min(BATCH, count - first) }, (_, i) => openSocket(url, first + i)));
    for (const client of server.clients) client.close();
    await Promise.all(sockets.map((socket) => socket.closed));
  }
  await new Promise((resolve) => server.close(resolve));
}

async function bareTransaction() {
  const keys = baileys.addTransactionCapability(memoryKeys(), logger, { maxCommitRetries: 1, delayBetweenTriesMs: 0 });
  await keys.transaction(async () => {
    await keys.get('session', ['x']);
    await keys.set({ session: { x: Buffer.from('y') } });
  }, 'baseline');
}

async function awaitsCpuMs() {
  global.gc?.();
  const start = process.cpuUsage();
  for (let i = 0; i < AWAITS; i++) await Promise.resolve(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/**
 * Set up, report the counts, then measure on request: the parent alternates samples between this process and the
 * baseline so both see the same machine load (IPC message 'sample' → reply { awaitsCpuMs }).
 */
async function main() {
  if (SOCKETS > 0) await openSockets(SOCKETS);
  else await bareTransaction();
  global.gc?.();
  const hiddenProperties = await (async () => Object.getOwnPropertySymbols(new Promise(() => undefined)).length)();
  await awaitsCpuMs(); // warm-up
  process.on('message', (message) => {
    if (message === 'sample') void awaitsCpuMs().then((ms) => process.send({ awaitsCpuMs: ms }));
    else process.exit(0);
  });
  process.send({ sockets: SOCKETS, asyncLocalStorages, hiddenProperties });
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
