/**
 * Baileys' own building blocks, as the WhatsApp Web front door uses them: protobufs (WAProto), the binary node codec
 * (WABinary), Curve25519/XEdDSA (libsignal's curve), HKDF and AES. The front door writes the server side of the
 * protocol itself but never a second copy of these. Baileys is ESM-only: Node 20 can `require()` it, jest cannot, so
 * it is loaded lazily on the first WhatsApp Web connection (or trust request), never when the simulator module loads.
 */
import type { BinaryNode } from '@whiskeysockets/baileys';

export type Baileys = typeof import('@whiskeysockets/baileys');
export type { BinaryNode };
/** A WhatsApp message (proto.Message) as Baileys decodes one. */
export type DecodedMessage = ReturnType<Baileys['proto']['Message']['decode']>;

/** A Curve25519 key pair as Baileys holds one (32-byte public key, no version byte). */
export interface KeyPair {
  public: Buffer;
  private: Buffer;
}

let loaded: Baileys | null = null;

export function loadBaileys(): Baileys {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('@whiskeysockets/baileys') as Baileys;
  return loaded;
}

/** The server's jid as WhatsApp writes it in `from` and `to` of its stanzas. */
export const SERVER_JID = 's.whatsapp.net';

/** Now as a stanza's `t` (and the other times WhatsApp writes): whole seconds since the epoch. */
export function nowSeconds(): string {
  return String(Math.floor(Date.now() / 1000));
}

/** A fresh Curve25519 key pair from libsignal's curve (through Baileys), as Buffers. */
export function newKeyPair(baileys: Baileys): KeyPair {
  const pair = baileys.Curve.generateKeyPair();
  return { public: Buffer.from(pair.public), private: Buffer.from(pair.private) };
}

/**
 * XEdDSA verification that honours the result. Baileys rc14's `Curve.verify` wraps libsignal's `verifySignature` in a
 * try/catch and returns true whenever it does not throw, but libsignal answers a bad signature with `false`: so
 * Baileys accepts any well-formed signature (certificate chain, ADV account signature). The front door checks the
 * signatures it receives with this instead.
 */
export function verifySignature(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const curve = require('libsignal/src/curve') as { verifySignature(pub: Buffer, msg: Buffer, sig: Buffer): boolean };
  try {
    return curve.verifySignature(Buffer.concat([Buffer.from([5]), publicKey]), Buffer.from(message), Buffer.from(signature)) === true;
  } catch {
    return false;
  }
}
