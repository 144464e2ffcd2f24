/**
 * libsignal as installed, with our patch (`patches/libsignal+6.0.0.patch`, applied by patch-package): a failed decrypt
 * try leaves the session it tried as it was. Without the patch the first case reads `error: Bad MAC` (libsignal kept
 * what the failed try did to the fresh session). The real libsignal Baileys encrypts with, two parties with in-memory stores: the device (the gateway's Baileys) and a
 * contact's phone. The failover of issue 42 in miniature: the contact writes in the session both had; the device, back
 * from a crash, starts a fresh session to the contact for a resend before it reads the message WhatsApp held for it.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- libsignal is CommonJS without types
const libsignal = require(require.resolve('libsignal', { paths: [require.resolve('@whiskeysockets/baileys')] }));

type Store = ReturnType<typeof party>;

function party(registrationId: number) {
  const identity = libsignal.keyhelper.generateIdentityKeyPair();
  const signedPreKey = libsignal.keyhelper.generateSignedPreKey(identity, 1);
  const preKeys = new Map<number, unknown>();
  const sessions = new Map<string, unknown>();
  let nextPreKey = 1;
  return {
    identity,
    registrationId,
    getOurIdentity: async () => identity,
    getOurRegistrationId: async () => registrationId,
    isTrustedIdentity: async () => true,
    // serialized, as Baileys' key store keeps them: each load is a fresh record
    loadSession: async (address: string) => (sessions.has(address) ? libsignal.SessionRecord.deserialize(sessions.get(address)) : undefined),
    storeSession: async (address: string, record: { serialize(): unknown }) => void sessions.set(address, record.serialize()),
    loadPreKey: async (id: number) => preKeys.get(Number(id)),
    removePreKey: async (id: number) => void preKeys.delete(Number(id)),
    loadSignedPreKey: async () => signedPreKey.keyPair,
    /** the bundle the server hands out for this party (one fresh one-time pre-key each time) */
    bundle() {
      const preKey = libsignal.keyhelper.generatePreKey(nextPreKey++);
      preKeys.set(preKey.keyId, preKey.keyPair);
      return {
        identityKey: identity.pubKey,
        registrationId,
        signedPreKey: { keyId: signedPreKey.keyId, publicKey: signedPreKey.keyPair.pubKey, signature: signedPreKey.signature },
        preKey: { keyId: preKey.keyId, publicKey: preKey.keyPair.pubKey },
      };
    },
  };
}

const DEVICE = new libsignal.ProtocolAddress('15550000001', 1);
const CONTACT = new libsignal.ProtocolAddress('15557001001', 0);
const cipher = (store: Store, to: unknown) => new libsignal.SessionCipher(store, to);
const send = (store: Store, to: unknown, text: string) => cipher(store, to).encrypt(Buffer.from(text));
const receive = async (store: Store, from: unknown, msg: { type: number; body: Buffer }) =>
  (msg.type === 3 ? cipher(store, from).decryptPreKeyWhisperMessage(Buffer.from(msg.body)) : cipher(store, from).decryptWhisperMessage(Buffer.from(msg.body))).then((b: Buffer) => b.toString());

/** The failover in miniature; resolves with what the contact reads of the device's resend, or its error. */
async function failover(): Promise<string> {
  const device = party(101);
  const contact = party(202);
  // a session both have: the contact started it, the device answered, the contact wrote again (a `msg`)
  await new libsignal.SessionBuilder(contact, DEVICE).initOutgoing(device.bundle());
  expect(await receive(device, CONTACT, await send(contact, DEVICE, 'hello'))).toBe('hello');
  expect(await receive(contact, DEVICE, await send(device, CONTACT, 'hi, how can I help?'))).toBe('hi, how can I help?');
  const held = await send(contact, DEVICE, 'customer 24');
  expect(held.type).toBe(1);
  // the device, back from the crash, starts a fresh session to send again (a retry receipt's keys) ...
  await new libsignal.SessionBuilder(device, CONTACT).initOutgoing(contact.bundle());
  // ... reads what WhatsApp held for it (it decrypts: in the old session) ...
  expect(await receive(device, CONTACT, held)).toBe('customer 24');
  // ... and sends in the fresh one
  const resend = await send(device, CONTACT, 'agent 24');
  expect(resend.type).toBe(3);
  return receive(contact, DEVICE, resend).catch((err: Error) => `error: ${err.message}`);
}

describe('libsignal as Baileys runs it: a decrypt try on a copy (our patch)', () => {
  let now = 1_000_000;
  beforeEach(() => {
    // libsignal orders a record's sessions by their last use (Date.now()): each read a millisecond later, so the fresh
    // session is the newest whatever the machine's speed
    jest.spyOn(Date, 'now').mockImplementation(() => (now += 1));
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    jest.spyOn(console, 'info').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('a message of an older session tried on the fresh one leaves the fresh one as it was: the contact reads the resend', async () => {
    expect(await failover()).toBe('agent 24');
  });

  it('keeps what the try that decrypted did, and says what libsignal says when none does', async () => {
    {
      const device = party(101);
      const contact = party(202);
      await new libsignal.SessionBuilder(contact, DEVICE).initOutgoing(device.bundle());
      expect(await receive(device, CONTACT, await send(contact, DEVICE, 'one'))).toBe('one');
      expect(await receive(contact, DEVICE, await send(device, CONTACT, 'two'))).toBe('two');
      const three = await send(contact, DEVICE, 'three');
      expect(await receive(device, CONTACT, three)).toBe('three');
      // the message key was used up: the same message again is refused, as libsignal refuses it
      await expect(receive(device, CONTACT, three)).rejects.toThrow('No matching sessions found for message');
      // and the session goes on both ways
      expect(await receive(device, CONTACT, await send(contact, DEVICE, 'four'))).toBe('four');
      expect(await receive(contact, DEVICE, await send(device, CONTACT, 'five'))).toBe('five');
    }
  });
});
