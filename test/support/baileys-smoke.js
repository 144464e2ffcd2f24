#!/usr/bin/env node
// Runs the REAL Baileys socket (through BaileysEngine, from dist/) against a local WebSocket server, then closes it.
// A child process because jest cannot load ESM-only Baileys. Prints one JSON line; it must exit on its own,
// which proves no socket, timer or interval is left behind. Used by test/baileys-engine.e2e-spec.ts.
const { createCipheriv, createHash, createHmac, randomBytes } = require('node:crypto');
const { createServer } = require('node:http');
const { createServer: createHttpsServer } = require('node:https');
const { EventEmitter } = require('node:events');
const { join } = require('node:path');
const { WebSocketServer } = require('ws');
const pino = require('pino');

const root = join(__dirname, '..', '..');
const { BaileysEngine } = require(join(root, 'dist/apps/gateway/src/engine/baileys/baileys.engine.js'));
const { decodeBinaryJson, encodeBinaryJson } = require(join(root, 'dist/apps/gateway/src/engine/binary-json.js'));
const { messageContentFor } = require(join(root, 'dist/apps/gateway/src/engine/baileys/baileys-outbound.js'));
const { groupInfoFrom, groupMetadataFrom, inboundMessageFrom } = require(join(root, 'dist/apps/gateway/src/engine/baileys/baileys-mapping.js'));
const { BaileysMediaSource, MediaUnavailableError } = require(join(root, 'dist/libs/media/src/index.js'));

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
        for (const [id, value] of Object.entries(items)) {
          if (value == null) rows.delete(`${category}/${id}`);
          else rows.set(`${category}/${id}`, value);
        }
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
    onEvent: async (event) => void events.push(event),
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
    const message = { waMessageId: '3EB0SMOKE', to: '491701234567@s.whatsapp.net', content: { type: 'text', text: 'hi' }, quoted: null, mentions: [] };
    const afterClose = await connection.send(message).then(
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
    ours: asBaileys(decodeBinaryJson(encodeBinaryJson(creds))) === asBaileys(creds),
    fromBufferJson: asBaileys(decodeBinaryJson(asBaileys(creds))) === asBaileys(creds),
    toBufferJson: asBaileys(JSON.parse(encodeBinaryJson(creds), BufferJSON.reviver)) === asBaileys(creds),
    privateKeyIsBuffer: Buffer.isBuffer(decodeBinaryJson(encodeBinaryJson(creds)).noiseKey.private),
  };
}

/**
 * A vote sealed the way a WhatsApp phone seals it (Baileys' decryptPollVote in reverse: HMAC-derived key, AES-256-GCM
 * over the PollVoteMessage, with `<pollId>\0<voter>` as associated data), fed to the engine as a messages.upsert on a
 * socket stand-in; the engine runs Baileys' real proto codec, decryptPollVote and getAggregateVotesInPollMessage.
 */
async function realPollVote() {
  const { proto } = require('@whiskeysockets/baileys');
  const own = '491701234567@s.whatsapp.net';
  const voter = '15550002222@s.whatsapp.net';
  const group = '120363000000000001@g.us';
  const secret = randomBytes(32);
  const creation = { pollCreationMessageV3: { name: 'Lunch?', options: [{ optionName: 'Pizza' }, { optionName: 'Sushi' }], selectableOptionsCount: 1 }, messageContextInfo: { messageSecret: secret } };
  const stored = new Map([[`${group}/POLL1`, proto.Message.encode(creation).finish()]]);

  const sign = Buffer.concat([Buffer.from('POLL1'), Buffer.from(own), Buffer.from(voter), Buffer.from('Poll Vote'), Buffer.from([1])]);
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(secret).digest();
  const key = createHmac('sha256', key0).update(sign).digest();
  const iv = randomBytes(12);
  const plain = proto.Message.PollVoteMessage.encode({ selectedOptions: [createHash('sha256').update('Sushi').digest()] }).finish();
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`POLL1\u0000${voter}`));
  const encPayload = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);

  const ev = new EventEmitter();
  const socket = { ev, user: { id: '491701234567:2@s.whatsapp.net' }, end: async () => undefined };
  const events = [];
  const engine = new BaileysEngine({ connectTimeoutMs: CONNECT_TIMEOUT_MS, makeSocket: () => socket });
  await engine.connect({
    sessionId: 'ses_poll',
    auth: memoryAuthState('ses_poll'),
    onEvent: async (event) => void events.push(event),
    logger: pino({ level: 'silent' }),
    lookups: { message: async (chatJid, id) => stored.get(`${chatJid}/${id}`) ?? null, group: async () => null },
  });
  ev.emit('messages.upsert', {
    type: 'notify',
    messages: [
      {
        key: { id: 'VOTE1', remoteJid: group, participant: voter, fromMe: false },
        message: { pollUpdateMessage: { pollCreationMessageKey: { id: 'POLL1', remoteJid: group, fromMe: true, participant: voter }, vote: { encPayload, encIv: iv } } },
        messageTimestamp: 1_700_000_000,
      },
    ],
  });
  await within(new Promise((resolve) => {
    const poll = setInterval(() => events.length && (clearInterval(poll), resolve()), 10);
  }), 'the poll vote');
  return { events };
}

/** A CA made for this run and a certificate for 127.0.0.1 it signs, as the simulator's media host has. */
async function loopbackTls() {
  const { generate } = require('selfsigned');
  const ec = { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' };
  const ca = await generate([{ name: 'commonName', value: 'baileys-smoke media CA (test only)' }], {
    ...ec,
    extensions: [{ name: 'basicConstraints', cA: true, critical: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true }],
  });
  const leaf = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    ...ec,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [{ name: 'extKeyUsage', serverAuth: true }, { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  return { caPem: ca.cert, key: leaf.private, cert: leaf.cert };
}

const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
const closeServer = (server) => new Promise((resolve) => server.close(resolve));

/**
 * WhatsApp's media encryption (AES-256-CBC with HKDF keys, 10-byte MAC appended) served over HTTPS by a local media
 * host, reached through the test seam (a trust answer naming that host and its CA, as the simulator's is). A reference
 * whose url names another host (a plain loopback listener here) is refused before any connection (issue 37).
 */
async function realMediaDownload() {
  const { getMediaKeys } = require('@whiskeysockets/baileys');
  const plain = randomBytes(300_000);
  const mediaKey = randomBytes(32);
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, 'document');
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
  const enc = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac('sha256', macKey).update(Buffer.concat([iv, enc])).digest().subarray(0, 10);
  const body = Buffer.concat([enc, mac]);
  const tls = await loopbackTls();
  const media = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    if (req.url === '/media') return res.end(body);
    res.statusCode = req.url === '/gone' ? 410 : 404;
    res.end();
  });
  const mediaHost = `127.0.0.1:${await listen(media)}`;
  const trust = createServer((req, res) => res.end(JSON.stringify({ mediaCa: tls.caPem, mediaHost })));
  const emulatorUrl = `http://127.0.0.1:${await listen(trust)}`;
  let strayConnections = 0;
  const stray = createServer((req, res) => res.end(body)).on('connection', () => (strayConnections += 1));
  const strayPort = await listen(stray);
  const ref = (directPath, url = null) => ({ engine: 'baileys', mediaType: 'document', directPath, mediaKey: mediaKey.toString('base64'), url });
  const source = new BaileysMediaSource(undefined, { emulatorUrl });
  const failure = (r) => source.open(r).then(() => 'opened', (err) => (err instanceof MediaUnavailableError ? err.name : `${err.name}: ${err.message}`));
  try {
    const stream = await source.open(ref('/media'));
    const hash = createHash('sha256');
    let chunks = 0;
    for await (const chunk of stream) {
      hash.update(chunk);
      chunks += 1;
    }
    return {
      sameBytes: hash.digest('hex') === createHash('sha256').update(plain).digest('hex'),
      chunks,
      missing: await failure(ref('/missing')),
      gone: await failure(ref('/gone')),
      crafted: await failure(ref('/media', `https://127.0.0.1:${strayPort}/media`)),
      strayConnections,
    };
  } finally {
    await Promise.all([media, trust, stray].map(closeServer));
  }
}

/**
 * Every outbound type through Baileys' real generateWAMessageContent: what the engine hands sendMessage is accepted,
 * and the generated message, received as is, maps back to what was sent.
 */
async function realOutboundContent() {
  const { generateWAMessageContent, proto } = require('@whiskeysockets/baileys');
  const encode = (content) => proto.Message.encode(content).finish();
  const media = (mimetype, filename = null) => ({ data: randomBytes(64), mimetype, filename });
  const contents = {
    text: { type: 'text', text: 'hi @15550002222' },
    image: { type: 'image', media: media('image/png'), caption: 'look' },
    video: { type: 'video', media: media('video/mp4'), caption: null },
    document: { type: 'document', media: media('application/pdf', 'invoice.pdf'), caption: 'the invoice' },
    audio: { type: 'audio', media: media('audio/ogg') },
    voice: { type: 'voice', media: media('audio/ogg') },
    location: { type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Tor', address: null } },
    contact: { type: 'contact', contact: { fullName: 'Jane Doe', phoneNumber: '+1 555 000 3333' } },
    reaction: { type: 'reaction', target: { waMessageId: 'IN1', chatJid: '120363000000000001@g.us', fromMe: false, participant: '15550002222@s.whatsapp.net' }, emoji: '👍' },
    poll: { type: 'poll', poll: { name: 'Lunch?', options: ['Pizza', 'Sushi'], selectableCount: 1 } },
  };
  // media is encrypted for real and "uploaded" nowhere
  const upload = async () => ({ mediaUrl: 'https://mmg.whatsapp.net/x', directPath: '/x' });
  const out = {};
  for (const [type, content] of Object.entries(contents)) {
    const generated = await generateWAMessageContent(messageContentFor(content, type === 'text' ? ['15550002222@s.whatsapp.net'] : []), { upload });
    const kind = Object.keys(generated).find((k) => k !== 'messageContextInfo');
    const body = generated[kind];
    out[type] = {
      kind,
      mimetype: body?.mimetype ?? null,
      caption: body?.caption ?? null,
      fileName: body?.fileName ?? null,
      ptt: body?.ptt ?? null,
      mentioned: body?.contextInfo?.mentionedJid ?? null,
      vcard: body?.vcard ?? null,
      hasSecret: Boolean(generated.messageContextInfo?.messageSecret?.length),
    };
    const received = inboundMessageFrom({ key: { id: 'IN', remoteJid: '15550001111@s.whatsapp.net', fromMe: false }, message: generated, messageTimestamp: 1 }, null, encode);
    out[type].received = received && {
      type: received.type,
      text: received.text,
      media: received.media && { mimetype: received.media.mimetype, size: received.media.size, filename: received.media.filename, caption: received.media.caption, mediaType: received.media.ref.mediaType },
      location: received.location,
      contact: received.contact,
      poll: received.poll,
      mentions: received.mentions,
    };
  }
  return out;
}

/**
 * A group as WhatsApp answers a metadata query (the `<group>` node), read by Baileys' real extractGroupMetadata (what
 * its groupMetadata() returns), then through our mapping, a JSON round trip (the jsonb column) and back to the answer
 * we give cachedGroupMetadata: addressing mode and member ids must be Baileys' own, for a LID and a PN group.
 */
function realGroupMetadata() {
  const { extractGroupMetadata } = require('@whiskeysockets/baileys/lib/Socket/groups.js');
  const own = '491701234567@s.whatsapp.net';
  const ownLid = '98765432109876@lid';
  const alice = '15550001111@s.whatsapp.net';
  const aliceLid = '11111111111111@lid';
  const groupNode = (mode, participants) => ({
    tag: 'iq',
    attrs: {},
    content: [
      {
        tag: 'group',
        attrs: { id: '120363000000000001', subject: 'Team', s_t: '1700000000', creation: '1700000000', addressing_mode: mode, size: String(participants.length), ...(mode === 'lid' ? { creator: ownLid, creator_pn: own } : { creator: own }) },
        content: participants.map((attrs) => ({ tag: 'participant', attrs })),
      },
    ],
  });
  const compare = (node) => {
    const baileys = extractGroupMetadata(node);
    const stored = JSON.parse(JSON.stringify(groupInfoFrom(baileys, own)));
    const ours = groupMetadataFrom(stored);
    const sendFields = (meta) => JSON.parse(JSON.stringify({ addressingMode: meta.addressingMode, participants: meta.participants.map(({ id, phoneNumber, lid, admin }) => ({ id, phoneNumber, lid, admin })) }));
    return { baileys: sendFields(baileys), ours: sendFields(ours), apiParticipants: stored.participants };
  };
  return {
    lid: compare(groupNode('lid', [{ jid: ownLid, phone_number: own, type: 'superadmin' }, { jid: aliceLid, phone_number: alice }])),
    pn: compare(groupNode('pn', [{ jid: own, lid: ownLid, type: 'superadmin' }, { jid: alice }])),
  };
}

async function main() {
  const result = {
    groupMetadata: realGroupMetadata(),
    outbound: await realOutboundContent(),
    pollVote: await realPollVote(),
    media: await realMediaDownload(),
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
