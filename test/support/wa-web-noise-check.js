#!/usr/bin/env node
// The WhatsApp Web front door's server-side Noise handshake (from dist/) against Baileys' OWN client noise handler,
// in one process: the handshake completes with a chain signed by the simulator's test root, binary nodes cross the
// transport both ways, and a chain from another root, with another serial, or with a leaf the intermediate did not
// sign is refused by Baileys. A child process because jest cannot load ESM-only Baileys. Prints one JSON line.
// Used by test/whatsapp-web.e2e-spec.ts.
const { join } = require('node:path');
const pino = require('pino');
const baileys = require('@whiskeysockets/baileys');

const root = join(__dirname, '..', '..');
const { NoiseServerHandshake, FrameReader, encodeFrame } = require(join(root, 'dist/apps/network-sim/src/whatsapp-web/noise-server.js'));
const { certifyServer } = require(join(root, 'dist/apps/network-sim/src/whatsapp-web/certificates.js'));
const { verifySignature } = require(join(root, 'dist/apps/network-sim/src/whatsapp-web/wa-kit.js'));

const { Curve, proto, makeNoiseHandler, WA_CERT_DETAILS, NOISE_WA_HEADER, encodeBinaryNode, generateLoginNode, DEFAULT_CONNECTION_CONFIG } = baileys;
const logger = pino({ level: 'silent' });

function trust(server) {
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(server.trust.rootPublicKey, 'base64');
  WA_CERT_DETAILS.SERIAL = server.trust.serial;
}

/** One handshake of Baileys' client against our server, byte for byte as over the socket. */
async function handshake(server) {
  const ephemeral = Curve.generateKeyPair();
  const noiseKey = Curve.generateKeyPair();
  const client = makeNoiseHandler({ keyPair: ephemeral, NOISE_HEADER: NOISE_WA_HEADER, logger });
  const reader = new FrameReader(NOISE_WA_HEADER);
  const hs = new NoiseServerHandshake(baileys, server);

  const hello = client.encodeFrame(proto.HandshakeMessage.encode({ clientHello: { ephemeral: ephemeral.public } }).finish());
  const [helloFrame] = reader.push(Buffer.from(hello));
  const serverHello = encodeFrame(hs.hello(helloFrame));
  const received = [];
  await client.decodeFrame(serverHello, (frame) => received.push(frame));
  const keyEnc = client.processHandshake(proto.HandshakeMessage.decode(received[0]), noiseKey);
  const login = generateLoginNode('15557770009:3@s.whatsapp.net', DEFAULT_CONNECTION_CONFIG);
  const payloadEnc = client.encrypt(proto.ClientPayload.encode(login).finish());
  const finish = client.encodeFrame(proto.HandshakeMessage.encode({ clientFinish: { static: keyEnc, payload: payloadEnc } }).finish());
  const [finishFrame] = reader.push(Buffer.from(finish));
  const result = hs.finish(finishFrame);
  await client.finishInit();
  return { client, reader, result, noiseKey };
}

async function refusal(server) {
  try {
    await handshake(server);
    return 'accepted';
  } catch (err) {
    return err.message;
  }
}

(async () => {
  const out = {};
  const server = certifyServer(baileys);
  trust(server);
  const { client, reader, result, noiseKey } = await handshake(server);
  out.handshake = 'ok';
  out.clientPayload = { username: Number(result.clientPayload.username), passive: result.clientPayload.passive };
  out.clientStaticKnown = Buffer.from(result.clientStaticKey).equals(Buffer.from(noiseKey.public));

  // server → client: one node through the transport
  const nodes = [];
  await client.decodeFrame(encodeFrame(result.transport.encrypt(encodeBinaryNode({ tag: 'success', attrs: { t: '1' } }))), (n) => nodes.push(n));
  out.serverToClient = { tag: nodes[0].tag, attrs: nodes[0].attrs };
  // client → server
  const ping = client.encodeFrame(encodeBinaryNode({ tag: 'iq', attrs: { id: '1', type: 'get', xmlns: 'w:p' }, content: [{ tag: 'ping', attrs: {} }] }));
  const [pingFrame] = reader.push(Buffer.from(ping));
  const decoded = await baileys.decodeBinaryNode(result.transport.decrypt(pingFrame));
  out.clientToServer = { tag: decoded.tag, attrs: decoded.attrs };
  // two frames in one socket chunk, and a frame split over two chunks
  const a = client.encodeFrame(encodeBinaryNode({ tag: 'ack', attrs: { id: '2' } }));
  const b = client.encodeFrame(encodeBinaryNode({ tag: 'ack', attrs: { id: '3' } }));
  const both = Buffer.concat([Buffer.from(a), Buffer.from(b)]);
  const frames = [...reader.push(both.subarray(0, 5)), ...reader.push(both.subarray(5))];
  out.twoFramesInOneChunk = (await Promise.all(frames.map((f) => baileys.decodeBinaryNode(result.transport.decrypt(f))))).filter((n) => n.tag === 'ack').length;

  // the chain as signed: the intermediate by the test root, the leaf (our static key) by the intermediate
  const chain = proto.CertChain.decode(server.certChain);
  const Details = proto.CertChain.NoiseCertificate.Details;
  const intermediate = Details.decode(chain.intermediate.details);
  const leaf = Details.decode(chain.leaf.details);
  const other = certifyServer(baileys);
  out.chain = {
    intermediateByRoot: verifySignature(WA_CERT_DETAILS.PUBLIC_KEY, chain.intermediate.details, chain.intermediate.signature),
    intermediateByOtherRoot: verifySignature(Buffer.from(other.trust.rootPublicKey, 'base64'), chain.intermediate.details, chain.intermediate.signature),
    leafByIntermediate: verifySignature(intermediate.key, chain.leaf.details, chain.leaf.signature),
    leafIsStaticKey: Buffer.from(leaf.key).equals(server.staticKeyPair.public),
    issuerIsRoot: intermediate.issuerSerial === server.trust.serial,
    leafIssuerIsIntermediate: leaf.issuerSerial === intermediate.serial,
  };

  // what Baileys itself enforces: the root's serial. Its Curve.verify ignores libsignal's boolean answer, so rc14
  // accepts a chain signed by anyone (known behaviour, docs/network-sim.md); the checks above are ours.
  const serial = WA_CERT_DETAILS.SERIAL;
  WA_CERT_DETAILS.SERIAL = serial + 1;
  out.otherSerial = await refusal(server);
  WA_CERT_DETAILS.SERIAL = serial;
  const forged = { ...server, certChain: proto.CertChain.encode({ intermediate: chain.intermediate, leaf: proto.CertChain.decode(other.certChain).leaf }).finish() };
  out.baileysAcceptsForgedLeaf = (await refusal(forged)) === 'accepted';

  process.stdout.write(`${JSON.stringify(out)}\n`);
})().catch((err) => {
  process.stdout.write(`${JSON.stringify({ error: err.stack })}\n`);
  process.exit(1);
});
