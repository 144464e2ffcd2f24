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
  keyhelper: { generateIdentityKeyPair(): SignalKeyPair };
  ProtocolAddress: new (id: string, deviceId: number) => { toString(): string };
  SessionBuilder: new (storage: unknown, address: unknown) => { initOutgoing(device: unknown): Promise<void> };
  SessionCipher: new (storage: unknown, address: unknown) => { encrypt(data: Buffer): Promise<{ type: number; body: string }> };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const libsignal = require('libsignal') as LibSignal;

const withVersion = (key: Buffer) => (key.length === 33 ? key : Buffer.concat([Buffer.from([5]), key]));

export class SignalContact {
  private readonly identity = libsignal.keyhelper.generateIdentityKeyPair();
  private readonly registrationId = randomInt(1, 16380);
  private readonly sessions = new Map<string, unknown>();
  private readonly store = {
    getOurIdentity: async () => this.identity,
    getOurRegistrationId: async () => this.registrationId,
    isTrustedIdentity: async () => true,
    loadSession: async (address: string) => this.sessions.get(address),
    storeSession: async (address: string, record: unknown) => void this.sessions.set(address, record),
  };

  /** `jid` is the contact's own, as the device sees it (`<digits>@s.whatsapp.net`). */
  constructor(readonly jid: string) {}

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
