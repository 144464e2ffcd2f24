#!/usr/bin/env node
// Runs the REAL Baileys socket (through BaileysEngine, from dist/) against a local WebSocket server, then closes it.
// A child process because jest cannot load ESM-only Baileys. Prints one JSON line; it must exit on its own,
// which proves no socket, timer or interval is left behind. Used by test/baileys-engine.e2e-spec.ts.
const { join } = require('node:path');
const { WebSocketServer } = require('ws');
const pino = require('pino');

const root = join(__dirname, '..', '..');
const { BaileysEngine } = require(join(root, 'dist/apps/gateway/src/engine/baileys/baileys.engine.js'));
const { decodeAuthValue, encodeAuthValue } = require(join(root, 'dist/apps/gateway/src/auth-state/auth-state-json.js'));

const WAIT_MS = 10_000;
const problems = [];
process.on('unhandledRejection', (reason) => problems.push(`unhandledRejection: ${reason && reason.message ? reason.message : reason}`));

function memoryAuthState(sessionId) {
  const rows = new Map();
  let creds = null;
  return {
    sessionId,
    readCreds: async () => creds,
    writeCreds: async (value) => { creds = value; },
    readKeys: async (category, ids) => Object.fromEntries(ids.filter((id) => rows.has(`${category}/${id}`)).map((id) => [id, rows.get(`${category}/${id}`)])),
    writeKeys: async (data) => {
      for (const [category, items] of Object.entries(data)) {
        for (const [id, value] of Object.entries(items)) value == null ? rows.delete(`${category}/${id}`) : rows.set(`${category}/${id}`, value);
      }
    },
    clear: async () => { rows.clear(); creds = null; },
  };
}

function within(promise, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS); }),
  ]).finally(() => clearTimeout(timer));
}

const CONNECT_TIMEOUT_MS = Number(process.env.SMOKE_CONNECT_TIMEOUT_MS ?? 2_000);

async function startServer(onConnection) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  server.on('connection', onConnection);
  return server;
}

function connect(url, events) {
  const engine = new BaileysEngine({ waWebSocketUrl: url, connectTimeoutMs: CONNECT_TIMEOUT_MS });
  return engine.connect({
    sessionId: 'ses_smoke',
    auth: memoryAuthState('ses_smoke'),
    onEvent: (event) => events.push(event),
    logger: pino({ level: 'silent' }),
  });
}

function settled(events) {
  return within(new Promise((resolve) => {
    const poll = setInterval(() => {
      if (events.some((e) => e.type === 'close')) {
        clearInterval(poll);
        resolve();
      }
    }, 10);
  }), 'a close event');
}

/** The client connects, sends the Noise hello, and our close() ends it: the server sees the socket go. */
async function closedByUs() {
  const seen = { connections: 0, path: null, origin: null, firstBytes: null, closed: false };
  let gotFirstBytes;
  const firstBytes = new Promise((resolve) => (gotFirstBytes = resolve));
  let gotServerClose;
  const serverClose = new Promise((resolve) => (gotServerClose = resolve));
  const server = await startServer((socket, request) => {
    seen.connections += 1;
    seen.path = request.url;
    seen.origin = request.headers.origin ?? null;
    socket.once('message', (data) => {
      seen.firstBytes = Buffer.from(data).subarray(0, 4).toString('hex');
      gotFirstBytes();
    });
    socket.once('close', () => {
      seen.closed = true;
      gotServerClose();
    });
  });
  const events = [];
  try {
    const connection = await connect(`ws://127.0.0.1:${server.address().port}/ws/chat`, events);
    await within(firstBytes, 'the first handshake bytes');
    await within(connection.close(), 'close()');
    await within(serverClose, 'the server to see the socket close');
    await within(connection.close(), 'a second close()');
    const afterClose = await connection.sendText('491701234567@s.whatsapp.net', 'hi').then(
      () => 'resolved',
      (err) => `${err.name}: ${err.message}`,
    );
    return { ok: true, seen, events, afterClose };
  } catch (err) {
    return { ok: false, error: err.message, seen, events };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The network hangs up mid-handshake: the engine reports a transient close, it does not reconnect. */
async function droppedByServer() {
  let connections = 0;
  const server = await startServer((socket) => {
    connections += 1;
    socket.once('message', () => socket.terminate());
  });
  const events = [];
  try {
    await connect(`ws://127.0.0.1:${server.address().port}/ws/chat`, events);
    await settled(events);
    return { ok: true, events, connections };
  } catch (err) {
    return { ok: false, error: err.message, events, connections };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Nothing listens: the failure arrives as a close event, never as an exception. */
async function refused() {
  const server = await startServer(() => undefined);
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  const events = [];
  try {
    await connect(`ws://127.0.0.1:${port}/ws/chat`, events);
    await settled(events);
    return { ok: true, events };
  } catch (err) {
    return { ok: false, error: err.message, events };
  }
}

/**
 * Real creds from Baileys' initAuthCreds() through our auth-state JSON, compared in Baileys' own BufferJSON encoding:
 * what the PostgreSQL store hands back must be what Baileys wrote, and state written by BufferJSON must read back.
 */
function credsRoundTrip() {
  const { initAuthCreds, BufferJSON } = require('@whiskeysockets/baileys');
  const creds = initAuthCreds();
  const asBaileys = (value) => JSON.stringify(value, BufferJSON.replacer);
  return {
    ours: asBaileys(decodeAuthValue(encodeAuthValue(creds))) === asBaileys(creds),
    fromBufferJson: asBaileys(decodeAuthValue(asBaileys(creds))) === asBaileys(creds),
    toBufferJson: asBaileys(JSON.parse(encodeAuthValue(creds), BufferJSON.reviver)) === asBaileys(creds),
    privateKeyIsBuffer: Buffer.isBuffer(decodeAuthValue(encodeAuthValue(creds)).noiseKey.private),
  };
}

async function main() {
  const result = {
    credsRoundTrip: credsRoundTrip(),
    closedByUs: await closedByUs(),
    droppedByServer: await droppedByServer(),
    refused: await refused(),
  };
  // let Baileys' own end-of-socket work finish before looking for stray rejections
  await new Promise((resolve) => setTimeout(resolve, 50));
  result.problems = problems;
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err) => {
  process.stdout.write(`${JSON.stringify({ ok: false, error: err.stack })}\n`);
  process.exitCode = 1;
});
