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
  SessionRecord: { deserialize(data: unknown): { serialize(): unknown } };
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

/** Baileys' sender-key implementation (Signal's group cipher, as WhatsApp uses it); ESM, so required on first use. */
interface SenderKeyRecordLike {
  isEmpty(): boolean;
}
interface SenderKeyNameLike {
  toString(): string;
}
interface GroupSignal {
  SenderKeyName: new (groupId: string, sender: { id: string; deviceId: number }) => SenderKeyNameLike;
  SenderKeyRecord: new () => SenderKeyRecordLike;
  SenderKeyDistributionMessage: new (id: null, iteration: null, chainKey: null, signatureKey: null, serialized: Uint8Array) => unknown;
  GroupSessionBuilder: new (store: unknown) => {
    process(name: SenderKeyNameLike, message: unknown): Promise<void>;
    create(name: SenderKeyNameLike): Promise<{ serialize(): Uint8Array }>;
  };
  GroupCipher: new (store: unknown, name: SenderKeyNameLike) => { encrypt(data: Uint8Array): Promise<Uint8Array>; decrypt(data: Uint8Array): Promise<Uint8Array> };
}
let groupSignal: GroupSignal | null = null;
function loadGroupSignal(): GroupSignal {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  groupSignal ??= require('@whiskeysockets/baileys/lib/Signal/Group/index.js') as GroupSignal;
  return groupSignal;
}

const withVersion = (key: Buffer) => (key.length === 33 ? key : Buffer.concat([Buffer.from([5]), key]));
const withoutVersion = (key: Buffer) => (key.length === 33 ? Buffer.from(key).subarray(1) : Buffer.from(key));
/** One-time pre-keys a contact's phone uploads at once. */
const PRE_KEY_BATCH = 20;
/** Below this many on the server, the phone uploads another batch (WhatsApp tells it; Baileys' MIN_PREKEY_COUNT). */
const PRE_KEY_LOW = 5;

export class SignalContact {
  private readonly identity = libsignal.keyhelper.generateIdentityKeyPair();
  private readonly registrationId = randomInt(1, 16380);
  /**
   * Session records, serialized, as a phone's (and Baileys') store keeps them: libsignal changes a loaded record while
   * it decrypts and stores it only when the message decrypted, so a record handed out live would keep what a message
   * that failed (a stale one, after a gateway's SIGKILL) did to it, and break the good session with it.
   */
  private readonly sessions = new Map<string, unknown>();
  private readonly signedPreKey = libsignal.keyhelper.generateSignedPreKey(this.identity, 1);
  /** every one-time pre-key the phone made and no session has used yet (a handed-out one waits for its pkmsg) */
  private readonly preKeys = new Map<number, SignalKeyPair>();
  /** the ids the server still holds: each is handed to one device only, then gone from here */
  private readonly onServer: number[] = [];
  private nextPreKeyId = 1;
  private readonly store = {
    getOurIdentity: async () => this.identity,
    getOurRegistrationId: async () => this.registrationId,
    isTrustedIdentity: async () => true,
    loadSession: async (address: string) => {
      const stored = this.sessions.get(address);
      return stored === undefined ? undefined : libsignal.SessionRecord.deserialize(stored);
    },
    storeSession: async (address: string, record: { serialize(): unknown }) => void this.sessions.set(address, record.serialize()),
    loadPreKey: async (id: number | string) => this.preKeys.get(Number(id)),
    removePreKey: async (id: number | string) => void this.preKeys.delete(Number(id)),
    loadSignedPreKey: async () => this.signedPreKey.keyPair,
  };
  /** sender keys: this contact's own per group, and those group members distributed to it */
  private readonly senderKeys = new Map<string, SenderKeyRecordLike>();
  private readonly senderKeyStore = {
    loadSenderKey: async (name: SenderKeyNameLike) => this.senderKeys.get(name.toString()) ?? new (loadGroupSignal().SenderKeyRecord)(),
    storeSenderKey: async (name: SenderKeyNameLike, record: SenderKeyRecordLike) => void this.senderKeys.set(name.toString(), record),
  };
  /** groups whose sender key this contact has given to a device (`<group> <user>:<device>`) */
  private readonly distributed = new Set<string>();

  /** `jid` is the contact's own (`<digits>@s.whatsapp.net`), `lid` its lid on the network (`<digits>@lid`). */
  constructor(
    readonly jid: string,
    readonly lid: string,
  ) {}

  /**
   * The bundle a device fetches to start a session with this contact. As WhatsApp's server does, each one-time pre-key
   * is served once and removed (two devices never share one: the second's pkmsg would name a key already used); with
   * none left the bundle has only the signed pre-key. The phone uploads another batch when the server runs low.
   */
  bundle(): DeviceKeyBundle {
    if (this.nextPreKeyId === 1) this.uploadPreKeys();
    const preKeyId = this.onServer.shift();
    if (this.onServer.length < PRE_KEY_LOW) this.uploadPreKeys();
    const preKey = preKeyId === undefined ? undefined : this.preKeys.get(preKeyId);
    return {
      registrationId: this.registrationId,
      identityKey: withoutVersion(this.identity.pubKey),
      signedPreKey: {
        keyId: this.signedPreKey.keyId,
        publicKey: withoutVersion(this.signedPreKey.keyPair.pubKey),
        signature: Buffer.from(this.signedPreKey.signature),
      },
      preKeys: preKey ? [{ keyId: preKeyId!, publicKey: withoutVersion(preKey.pubKey) }] : [],
    };
  }

  /** How many one-time pre-keys the server still holds for this contact. */
  get preKeysOnServer(): number {
    return this.onServer.length;
  }

  /** The phone's upload: a batch of new one-time pre-keys (it keeps the private halves). */
  private uploadPreKeys(): void {
    for (let i = 0; i < PRE_KEY_BATCH; i++) {
      const id = this.nextPreKeyId++;
      this.preKeys.set(id, libsignal.keyhelper.generatePreKey(id).keyPair);
      this.onServer.push(id);
    }
  }

  /** The registration id of this contact's phone (what its retry receipts carry, retry-receipts.ts). */
  get registration(): number {
    return this.registrationId;
  }

  /** Decrypts what a device (`user`, `device`) sent this contact. */
  async decryptFrom(user: string, device: number, type: 'pkmsg' | 'msg', ciphertext: Buffer): Promise<Buffer> {
    const cipher = new libsignal.SessionCipher(this.store, new libsignal.ProtocolAddress(user, device));
    return Buffer.from(type === 'pkmsg' ? await cipher.decryptPreKeyWhisperMessage(ciphertext) : await cipher.decryptWhisperMessage(ciphertext));
  }

  /**
   * Encrypts `plaintext` for one device (`user`, `device`): continues the session, or starts one from `bundle`
   * (taking one of its one-time pre-keys). Null when there is no session and no bundle to start one. `fresh`: starts
   * a new session from `bundle` even with one open, as a phone does for a retry receipt (retry-receipts.ts); the old
   * ones stay in the record (libsignal archives them), so what the device sent in them can still be read.
   */
  async encryptFor(user: string, device: number, plaintext: Buffer, bundle: () => DeviceKeyBundle | null, fresh = false): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Buffer } | null> {
    const address = new libsignal.ProtocolAddress(user, device);
    if (fresh || !this.sessions.has(address.toString())) {
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

  // ---- groups: Signal sender keys (what Baileys' Signal/Group implements, and WhatsApp's phones) -----------------

  /** Takes a sender key a group member's device (`user`, `device`) distributed (`axolotlSenderKeyDistributionMessage`). */
  async receiveSenderKey(groupJid: string, user: string, device: number, distribution: Uint8Array): Promise<void> {
    const g = loadGroupSignal();
    const message = new g.SenderKeyDistributionMessage(null, null, null, null, distribution);
    await new g.GroupSessionBuilder(this.senderKeyStore).process(new g.SenderKeyName(groupJid, { id: user, deviceId: device }), message);
  }

  /** Whether this contact holds a sender key of that device for that group (it can read its `skmsg`). */
  hasSenderKeyOf(groupJid: string, user: string, device: number): boolean {
    const g = loadGroupSignal();
    const record = this.senderKeys.get(new g.SenderKeyName(groupJid, { id: user, deviceId: device }).toString());
    return Boolean(record && !record.isEmpty());
  }

  /** Decrypts a device's `skmsg` to the group with the sender key it distributed before. */
  async decryptGroup(groupJid: string, user: string, device: number, ciphertext: Uint8Array): Promise<Buffer> {
    const g = loadGroupSignal();
    return Buffer.from(await new g.GroupCipher(this.senderKeyStore, new g.SenderKeyName(groupJid, { id: user, deviceId: device })).decrypt(ciphertext));
  }

  /**
   * Encrypts `plaintext` for the group with this contact's own sender key (made on first use). `distribution` is its
   * sender key distribution message, to be sent 1:1 to a device that has not got it yet (`needsKey`).
   */
  async encryptGroup(groupJid: string, plaintext: Uint8Array): Promise<{ ciphertext: Buffer; distribution: Buffer }> {
    const g = loadGroupSignal();
    const name = new g.SenderKeyName(groupJid, { id: this.jid.split('@')[0], deviceId: 0 });
    const distribution = Buffer.from((await new g.GroupSessionBuilder(this.senderKeyStore).create(name)).serialize());
    const ciphertext = Buffer.from(await new g.GroupCipher(this.senderKeyStore, name).encrypt(plaintext));
    return { ciphertext, distribution };
  }

  /** Whether a device (`user`, `device`) has taken this contact's sender key for the group (it acknowledged a message carrying it). */
  gaveKeyTo(groupJid: string, user: string, device: number): boolean {
    return this.distributed.has(`${groupJid} ${user}:${device}`);
  }

  keyTakenBy(groupJid: string, user: string, device: number): void {
    this.distributed.add(`${groupJid} ${user}:${device}`);
  }
}
