/**
 * Emulated contacts holding real Signal sessions with the devices they write to, through libsignal (the
 * implementation Baileys itself uses, CommonJS, so this file also loads under jest). A contact starts a session from
 * the pre-key bundle the device uploaded (X3DH, taking one one-time pre-key) and continues it; its messages are
 * `pkmsg` until the device answers in that session (Signal's rule), then `msg`.
 */
import { randomInt } from 'node:crypto';

/** The pre-key bundle a device uploaded: what a contact needs to start a session with it. */
export interface DeviceKeyBundle {
  registrationId: number;
  /** 32-byte identity key (no version byte) */
  identityKey: Buffer;
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer };
  /** one-time pre-keys not handed out yet */
  preKeys: Array<{ keyId: number; publicKey: Buffer }>;
}

interface SignalKeyPair {
  pubKey: Buffer;
  privKey: Buffer;
}

interface LibSignal {
  keyhelper: {
    generateIdentityKeyPair(): SignalKeyPair;
    generateSignedPreKey(identity: SignalKeyPair, keyId: number): { keyId: number; keyPair: SignalKeyPair; signature: Buffer };
    generatePreKey(keyId: number): { keyId: number; keyPair: SignalKeyPair };
  };
  ProtocolAddress: new (id: string, deviceId: number) => { toString(): string };
  SessionBuilder: new (storage: unknown, address: unknown) => { initOutgoing(device: unknown): Promise<void> };
  SessionCipher: new (
    storage: unknown,
    address: unknown,
  ) => {
    encrypt(data: Buffer): Promise<{ type: number; body: string }>;
    decryptPreKeyWhisperMessage(data: Buffer): Promise<Buffer>;
    decryptWhisperMessage(data: Buffer): Promise<Buffer>;
  };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const libsignal = require('libsignal') as LibSignal;

const withVersion = (key: Buffer) => (key.length === 33 ? key : Buffer.concat([Buffer.from([5]), key]));
const withoutVersion = (key: Buffer) => (key.length === 33 ? Buffer.from(key).subarray(1) : Buffer.from(key));
/** One-time pre-keys a contact offers at once; it makes more when they run out. */
const PRE_KEY_BATCH = 20;

export class SignalContact {
  private readonly identity = libsignal.keyhelper.generateIdentityKeyPair();
  private readonly registrationId = randomInt(1, 16380);
  private readonly sessions = new Map<string, unknown>();
  private readonly signedPreKey = libsignal.keyhelper.generateSignedPreKey(this.identity, 1);
  private readonly preKeys = new Map<number, SignalKeyPair>();
  private nextPreKeyId = 1;
  private readonly store = {
    getOurIdentity: async () => this.identity,
    getOurRegistrationId: async () => this.registrationId,
    isTrustedIdentity: async () => true,
    loadSession: async (address: string) => this.sessions.get(address),
    storeSession: async (address: string, record: unknown) => void this.sessions.set(address, record),
    loadPreKey: async (id: number | string) => this.preKeys.get(Number(id)),
    removePreKey: async (id: number | string) => void this.preKeys.delete(Number(id)),
    loadSignedPreKey: async () => this.signedPreKey.keyPair,
  };

  /** `jid` is the contact's own (`<digits>@s.whatsapp.net`), `lid` its lid on the network (`<digits>@lid`). */
  constructor(
    readonly jid: string,
    readonly lid: string,
  ) {}

  /** The bundle a device fetches to start a session with this contact: one one-time pre-key is handed out. */
  bundle(): DeviceKeyBundle {
    let preKey = [...this.preKeys][0];
    if (!preKey) {
      for (let i = 0; i < PRE_KEY_BATCH; i++) {
        const id = this.nextPreKeyId++;
        this.preKeys.set(id, libsignal.keyhelper.generatePreKey(id).keyPair);
      }
      preKey = [...this.preKeys][0];
    }
    return {
      registrationId: this.registrationId,
      identityKey: withoutVersion(this.identity.pubKey),
      signedPreKey: {
        keyId: this.signedPreKey.keyId,
        publicKey: withoutVersion(this.signedPreKey.keyPair.pubKey),
        signature: Buffer.from(this.signedPreKey.signature),
      },
      preKeys: [{ keyId: preKey[0], publicKey: withoutVersion(preKey[1].pubKey) }],
    };
  }

  /** Decrypts what a device (`user`, `device`) sent this contact. */
  async decryptFrom(user: string, device: number, type: 'pkmsg' | 'msg', ciphertext: Buffer): Promise<Buffer> {
    const cipher = new libsignal.SessionCipher(this.store, new libsignal.ProtocolAddress(user, device));
    return Buffer.from(type === 'pkmsg' ? await cipher.decryptPreKeyWhisperMessage(ciphertext) : await cipher.decryptWhisperMessage(ciphertext));
  }

  /**
   * Encrypts `plaintext` for one device (`user`, `device`): continues the session, or starts one from `bundle`
   * (taking one of its one-time pre-keys). Null when there is no session and no bundle to start one.
   */
  async encryptFor(user: string, device: number, plaintext: Buffer, bundle: () => DeviceKeyBundle | null): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Buffer } | null> {
    const address = new libsignal.ProtocolAddress(user, device);
    if (!this.sessions.has(address.toString())) {
      const keys = bundle();
      if (!keys) return null;
      const preKey = keys.preKeys.shift();
      await new libsignal.SessionBuilder(this.store, address).initOutgoing({
        registrationId: keys.registrationId,
        identityKey: withVersion(keys.identityKey),
        signedPreKey: { ...keys.signedPreKey, publicKey: withVersion(keys.signedPreKey.publicKey) },
        ...(preKey ? { preKey: { keyId: preKey.keyId, publicKey: withVersion(preKey.publicKey) } } : {}),
      });
    }
    const { type, body } = await new libsignal.SessionCipher(this.store, address).encrypt(plaintext);
    return { type: type === 3 ? 'pkmsg' : 'msg', ciphertext: Buffer.from(body, 'binary') };
  }
}
