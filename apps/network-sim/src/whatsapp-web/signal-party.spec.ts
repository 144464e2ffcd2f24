import { DeviceKeyBundle, SignalContact } from './signal-party';

// eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any -- libsignal ships no types for these
const libsignal = require('libsignal') as any;
// eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any
const libsignalProtobufs = require('libsignal/src/protobufs') as any;

/** A device as Baileys holds one: identity, signed pre-key and one-time pre-keys in a libsignal store. */
function device() {
  const identity = libsignal.keyhelper.generateIdentityKeyPair();
  const signed = libsignal.keyhelper.generateSignedPreKey(identity, 7);
  const preKeys = new Map([11, 12].map((id) => [id, libsignal.keyhelper.generatePreKey(id).keyPair]));
  const sessions = new Map<string, unknown>();
  const store = {
    getOurIdentity: async () => identity,
    getOurRegistrationId: async () => 4242,
    isTrustedIdentity: async () => true,
    loadSession: async (a: string) => sessions.get(a),
    storeSession: async (a: string, r: unknown) => void sessions.set(a, r),
    loadPreKey: async (id: number) => preKeys.get(Number(id)),
    removePreKey: async (id: number) => void preKeys.delete(Number(id)),
    loadSignedPreKey: async () => signed.keyPair,
  };
  const strip = (key: Buffer) => Buffer.from(key).subarray(1);
  const bundle: DeviceKeyBundle = {
    registrationId: 4242,
    identityKey: strip(identity.pubKey),
    signedPreKey: { keyId: 7, publicKey: strip(signed.keyPair.pubKey), signature: Buffer.from(signed.signature) },
    preKeys: [...preKeys].map(([keyId, pair]) => ({ keyId, publicKey: strip(pair.pubKey) })),
  };
  const decrypt = async (type: 'pkmsg' | 'msg', ciphertext: Buffer): Promise<string> => {
    const cipher = new libsignal.SessionCipher(store, new libsignal.ProtocolAddress('15550009999', 0));
    const plain = type === 'pkmsg' ? await cipher.decryptPreKeyWhisperMessage(ciphertext) : await cipher.decryptWhisperMessage(ciphertext);
    return Buffer.from(plain).toString();
  };
  return { bundle, preKeys, decrypt };
}

describe('SignalContact (an emulated contact with real Signal sessions)', () => {
  it('starts a session from the device bundle (pkmsg, one pre-key used), then continues it without one; the device decrypts both', async () => {
    const d = device();
    const contact = new SignalContact('15550009999@s.whatsapp.net', '777@lid');
    const first = await contact.encryptFor('15551112222', 1, Buffer.from('hello'), () => d.bundle);
    expect(first?.type).toBe('pkmsg');
    expect(d.bundle.preKeys.map((k) => k.keyId)).toEqual([12]);
    expect(await d.decrypt('pkmsg', first!.ciphertext)).toBe('hello');
    expect(d.preKeys.has(11)).toBe(false); // the device consumed the one-time pre-key

    const second = await contact.encryptFor('15551112222', 1, Buffer.from('again'), () => {
      throw new Error('an open session needs no bundle');
    });
    // Signal: the initiator keeps sending PreKeyWhisperMessages until the other side answers
    expect(second?.type).toBe('pkmsg');
    expect(await d.decrypt('pkmsg', second!.ciphertext)).toBe('again');
    expect(d.bundle.preKeys.map((k) => k.keyId)).toEqual([12]);
  });

  it('serves each one-time pre-key of its bundle once: two devices starting sessions with it are both read', async () => {
    const contact = new SignalContact('15550009999@s.whatsapp.net', '777@lid');
    const sender = (user: string) => {
      const identity = libsignal.keyhelper.generateIdentityKeyPair();
      const sessions = new Map<string, unknown>();
      const store = {
        getOurIdentity: async () => identity,
        getOurRegistrationId: async () => 77,
        isTrustedIdentity: async () => true,
        loadSession: async (a: string) => sessions.get(a),
        storeSession: async (a: string, r: unknown) => void sessions.set(a, r),
      };
      const address = new libsignal.ProtocolAddress('15550009999', 0);
      return async (text: string) => {
        const keys = contact.bundle();
        const v = (key: Buffer) => Buffer.concat([Buffer.from([5]), key]);
        const [preKey] = keys.preKeys;
        await new libsignal.SessionBuilder(store, address).initOutgoing({
          registrationId: keys.registrationId,
          identityKey: v(keys.identityKey),
          signedPreKey: { ...keys.signedPreKey, publicKey: v(keys.signedPreKey.publicKey) },
          preKey: { keyId: preKey.keyId, publicKey: v(preKey.publicKey) },
        });
        const { body } = await new libsignal.SessionCipher(store, address).encrypt(Buffer.from(text));
        return { user, preKeyId: preKey.keyId, ciphertext: Buffer.from(body, 'binary') };
      };
    };
    const a = await sender('15551110001')('from a');
    const b = await sender('15551110002')('from b');
    expect(a.preKeyId).not.toBe(b.preKeyId);
    expect((await contact.decryptFrom(a.user, 1, 'pkmsg', a.ciphertext)).toString()).toBe('from a');
    expect((await contact.decryptFrom(b.user, 1, 'pkmsg', b.ciphertext)).toString()).toBe('from b');
  });

  it('keeps its session as it was when a message fails to decrypt: the device\'s next message is still read', async () => {
    const contact = new SignalContact('15550009999@s.whatsapp.net', '777@lid');
    const v = (key: Buffer) => Buffer.concat([Buffer.from([5]), key]);
    // a device that starts a session with the contact (as Baileys does), from the contact's bundle
    const device = async () => {
      const identity = libsignal.keyhelper.generateIdentityKeyPair();
      const sessions = new Map<string, unknown>();
      const store = {
        getOurIdentity: async () => identity,
        getOurRegistrationId: async () => 77,
        isTrustedIdentity: async () => true,
        loadSession: async (a: string) => sessions.get(a),
        storeSession: async (a: string, r: unknown) => void sessions.set(a, r),
      };
      const address = new libsignal.ProtocolAddress('15550009999', 0);
      const keys = contact.bundle();
      const [preKey] = keys.preKeys;
      await new libsignal.SessionBuilder(store, address).initOutgoing({
        registrationId: keys.registrationId,
        identityKey: v(keys.identityKey),
        signedPreKey: { ...keys.signedPreKey, publicKey: v(keys.signedPreKey.publicKey) },
        preKey: { keyId: preKey.keyId, publicKey: v(preKey.publicKey) },
      });
      const cipher = new libsignal.SessionCipher(store, address);
      return {
        send: async (text: string) => Buffer.from((await cipher.encrypt(Buffer.from(text))).body, 'binary'),
        read: async (ciphertext: Buffer) => Buffer.from(await cipher.decryptWhisperMessage(ciphertext)).toString(),
      };
    };
    const real = await device();
    expect((await contact.decryptFrom('15551112222', 1, 'pkmsg', await real.send('hello'))).toString()).toBe('hello');
    const answer = await contact.encryptFor('15551112222', 1, Buffer.from('hi'), () => null);
    expect(await real.read(answer!.ciphertext)).toBe('hi');

    // a message of a ratchet the contact does not know (what a device that lost its state sends): it fails, and
    // libsignal's attempt steps the session it tried; a record handed out live would keep that step
    const stale = await device();
    const inner = Buffer.from(libsignalProtobufs.PreKeyWhisperMessage.decode((await stale.send('lost')).subarray(1)).message);
    await expect(contact.decryptFrom('15551112222', 1, 'msg', inner)).rejects.toThrow();

    expect((await contact.decryptFrom('15551112222', 1, 'msg', await real.send('still here'))).toString()).toBe('still here');
  });

  it('has nothing to send before the device uploaded its keys', async () => {
    expect(await new SignalContact('15550009999@s.whatsapp.net', '777@lid').encryptFor('15551112222', 1, Buffer.from('x'), () => null)).toBeNull();
  });
});
