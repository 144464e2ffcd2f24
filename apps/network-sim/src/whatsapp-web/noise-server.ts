/**
 * The server side of WhatsApp Web's Noise XX handshake (Noise_XX_25519_AESGCM_SHA256), written as the mirror of
 * Baileys' client (Utils/noise-handler.js), and the framing both sides use: the client's intro (`WA`, version 6,
 * dictionary 3, optionally behind an `ED` edge-routing header), then 3-byte big-endian length-prefixed frames;
 * after the handshake every frame is AES-256-GCM with a per-direction counter IV and holds one binary node.
 *
 *   client → e                      (clientHello.ephemeral)
 *   server ← e, ee, s, es, payload  (serverHello: ephemeral, encrypted static, encrypted certificate chain)
 *   client → s, se, payload         (clientFinish: encrypted noise key, encrypted ClientPayload)
 */
import type { proto as Proto } from '@whiskeysockets/baileys';
import { CertifiedServer } from './certificates';
import { Baileys, KeyPair, newKeyPair } from './wa-kit';

const IV_LENGTH = 12;
const EMPTY = Buffer.alloc(0);

function counterIv(counter: number): Buffer {
  const iv = Buffer.alloc(IV_LENGTH);
  iv.writeUInt32BE(counter, 8);
  return iv;
}

/** Splits the byte stream of one socket into frames; strips the client's intro once. */
export class FrameReader {
  private buffer: Buffer = EMPTY;
  private introSeen = false;

  constructor(private readonly introHeader: Buffer) {}

  /** Appends bytes; returns the complete frames, or throws on an intro that is not WhatsApp Web's. */
  push(bytes: Buffer): Buffer[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, bytes]) : bytes;
    if (!this.introSeen) {
      const skip = this.introLength();
      if (skip === null) return [];
      this.buffer = this.buffer.subarray(skip);
      this.introSeen = true;
    }
    const frames: Buffer[] = [];
    while (this.buffer.length >= 3) {
      const size = (this.buffer[0] << 16) | (this.buffer[1] << 8) | this.buffer[2];
      if (this.buffer.length < size + 3) break;
      frames.push(this.buffer.subarray(3, size + 3));
      this.buffer = this.buffer.subarray(size + 3);
    }
    return frames;
  }

  /** `WA 6 3`, or `ED 0 1 <len:3> <routing info> WA 6 3` when the client reconnects with edge routing info. */
  private introLength(): number | null {
    const b = this.buffer;
    if (b.length < 4) return null;
    let offset = 0;
    if (b[0] === 0x45 && b[1] === 0x44) {
      if (b.length < 7) return null;
      offset = 7 + ((b[4] << 16) | b.readUInt16BE(5));
      if (b.length < offset + 4) return null;
    }
    if (!b.subarray(offset, offset + 4).equals(this.introHeader)) {
      throw new Error(`not a WhatsApp Web intro: ${b.subarray(0, 4).toString('hex')}`);
    }
    return offset + 4;
  }
}

/** Prefixes a frame with its 3-byte length (the server sends no intro). */
export function encodeFrame(data: Uint8Array): Buffer {
  const frame = Buffer.alloc(3 + data.length);
  frame[0] = (data.length >>> 16) & 0xff;
  frame[1] = (data.length >>> 8) & 0xff;
  frame[2] = data.length & 0xff;
  frame.set(data, 3);
  return frame;
}

/** The keys of an established session: what the server writes with and reads with, each with its own counter. */
export class NoiseTransport {
  private readCounter = 0;
  private writeCounter = 0;

  constructor(
    private readonly baileys: Baileys,
    private readonly encKey: Buffer,
    private readonly decKey: Buffer,
  ) {}

  encrypt(plaintext: Uint8Array): Buffer {
    return this.baileys.aesEncryptGCM(plaintext, this.encKey, counterIv(this.writeCounter++), EMPTY);
  }

  decrypt(ciphertext: Uint8Array): Buffer {
    return this.baileys.aesDecryptGCM(ciphertext, this.decKey, counterIv(this.readCounter++), EMPTY);
  }
}

export interface HandshakeResult {
  /** the client's static key: Baileys' `creds.noiseKey.public`, which identifies a companion device */
  clientStaticKey: Buffer;
  clientPayload: Proto.ClientPayload;
  transport: NoiseTransport;
}

/** One server-side handshake: `hello()` answers the client hello, `finish()` reads the client finish. */
export class NoiseServerHandshake {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private readonly ephemeral: KeyPair;
  private clientEphemeral: Buffer | null = null;

  constructor(
    private readonly baileys: Baileys,
    private readonly server: CertifiedServer,
  ) {
    const mode = Buffer.from(baileys.NOISE_MODE);
    this.hash = mode.length === 32 ? mode : baileys.sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
    this.ephemeral = newKeyPair(baileys);
    this.authenticate(baileys.NOISE_WA_HEADER);
  }

  /** Reads the client hello frame; returns the server hello frame to send. */
  hello(frame: Uint8Array): Uint8Array {
    const { proto, Curve } = this.baileys;
    const message = proto.HandshakeMessage.decode(frame);
    const ephemeral = message.clientHello?.ephemeral;
    if (!ephemeral || ephemeral.length !== 32) throw new Error('client hello without a 32-byte ephemeral key');
    this.clientEphemeral = Buffer.from(ephemeral);
    this.authenticate(this.clientEphemeral);

    this.authenticate(this.ephemeral.public);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, this.clientEphemeral));
    const encryptedStatic = this.encrypt(this.server.staticKeyPair.public);
    this.mixIntoKey(Curve.sharedKey(this.server.staticKeyPair.private, this.clientEphemeral));
    const encryptedPayload = this.encrypt(this.server.certChain);
    return proto.HandshakeMessage.encode({
      serverHello: { ephemeral: this.ephemeral.public, static: encryptedStatic, payload: encryptedPayload },
    }).finish();
  }

  /** Reads the client finish frame: the client's static key and its login or registration payload. */
  finish(frame: Uint8Array): HandshakeResult {
    const { proto, Curve } = this.baileys;
    const message = proto.HandshakeMessage.decode(frame);
    const finish = message.clientFinish;
    if (!finish?.static || !finish.payload) throw new Error('client finish without static key or payload');
    const clientStaticKey = this.decrypt(finish.static);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientStaticKey));
    const clientPayload = proto.ClientPayload.decode(this.decrypt(finish.payload));
    const [clientWrite, clientRead] = this.split(EMPTY);
    // the client writes with the first half: that is what the server reads with
    return { clientStaticKey, clientPayload, transport: new NoiseTransport(this.baileys, clientRead, clientWrite) };
  }

  private authenticate(data: Uint8Array): void {
    this.hash = this.baileys.sha256(Buffer.concat([this.hash, data]));
  }

  private encrypt(plaintext: Uint8Array): Buffer {
    const result = this.baileys.aesEncryptGCM(plaintext, this.key, counterIv(this.counter++), this.hash);
    this.authenticate(result);
    return result;
  }

  private decrypt(ciphertext: Uint8Array): Buffer {
    const result = this.baileys.aesDecryptGCM(ciphertext, this.key, counterIv(this.counter++), this.hash);
    this.authenticate(ciphertext);
    return result;
  }

  private split(data: Uint8Array): [Buffer, Buffer] {
    const out = Buffer.from(this.baileys.hkdf(Buffer.from(data), 64, { salt: this.salt, info: '' }));
    return [out.subarray(0, 32), out.subarray(32)];
  }

  private mixIntoKey(data: Uint8Array): void {
    const [write, read] = this.split(data);
    this.salt = write;
    this.key = read;
    this.counter = 0;
  }
}
