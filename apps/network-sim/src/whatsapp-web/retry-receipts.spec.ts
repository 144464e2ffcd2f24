import { readRetryReceipt, resendSession, retryReceipt } from './retry-receipts';
import { MAX_RETRIES, RetryLedger, SentByContact } from './retry-ledger';
import { DeviceKeyBundle, SignalContact } from './signal-party';
import type { BinaryNode } from './wa-kit';

// eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any -- libsignal ships no types for these
const libsignal = require('libsignal') as any;

const be = (n: number, bytes: number) => {
  const b = Buffer.alloc(bytes);
  b.writeUIntBE(n, 0, bytes);
  return b;
};

/** A retry receipt as Baileys rc14's sendRetryRequest writes it (Socket/messages-recv.js), with `<keys>` or without. */
function baileysRetryReceipt(count: number, withKeys: boolean): BinaryNode {
  const identity = Buffer.alloc(32, 1);
  const content: BinaryNode[] = [
    { tag: 'retry', attrs: { count: String(count), id: 'MSG1', t: '1700000000', v: '1', error: '0' } },
    { tag: 'registration', attrs: {}, content: be(4242, 4) },
  ];
  if (withKeys) {
    content.push({
      tag: 'keys',
      attrs: {},
      content: [
        { tag: 'type', attrs: {}, content: Buffer.from([5]) },
        { tag: 'identity', attrs: {}, content: identity },
        { tag: 'key', attrs: {}, content: [{ tag: 'id', attrs: {}, content: be(31, 3) }, { tag: 'value', attrs: {}, content: Buffer.alloc(32, 2) }] },
        { tag: 'skey', attrs: {}, content: [{ tag: 'id', attrs: {}, content: be(7, 3) }, { tag: 'value', attrs: {}, content: Buffer.alloc(32, 3) }, { tag: 'signature', attrs: {}, content: Buffer.alloc(64, 4) }] },
        { tag: 'device-identity', attrs: {}, content: Buffer.alloc(10) },
      ],
    });
  }
  return { tag: 'receipt', attrs: { id: 'MSG1', type: 'retry', to: '15557001001@s.whatsapp.net' }, content };
}

const sent = (id: string): SentByContact => ({ eventId: `e-${id}`, envelope: { id, from: '15557001001@s.whatsapp.net', chatJid: '15557001001@s.whatsapp.net', type: 'text', t: 1 }, content: { conversation: 'hi' }, attrs: {}, extra: [] });

describe('retry receipts', () => {
  it('reads the device\'s retry receipt as Baileys writes it: the count, its registration, and from the second its keys to start a fresh session from', () => {
    const first = readRetryReceipt(baileysRetryReceipt(1, false))!;
    expect(first).toEqual({ id: 'MSG1', count: 1, registrationId: 4242, keys: null });
    expect(resendSession(first)).toBe('current');

    const second = readRetryReceipt(baileysRetryReceipt(2, true))!;
    expect(second.keys).toEqual({
      registrationId: 4242,
      identityKey: Buffer.alloc(32, 1),
      signedPreKey: { keyId: 7, publicKey: Buffer.alloc(32, 3), signature: Buffer.alloc(64, 4) },
      preKeys: [{ keyId: 31, publicKey: Buffer.alloc(32, 2) }],
    });
    expect(resendSession(second)).toBe('from-keys');
    // a second retry without keys: the device's bundle on the server
    expect(resendSession({ ...first, count: 2 })).toBe('from-server');
    // not a retry receipt
    expect(readRetryReceipt({ tag: 'receipt', attrs: { id: 'MSG1', type: 'read' } })).toBeNull();
  });

  it('writes a contact\'s retry receipt in the same shape (read back whole), with its keys, and a group\'s member as participant', () => {
    const contact = new SignalContact('15557001001@s.whatsapp.net', '777@lid');
    const keys = contact.bundle();
    const node = retryReceipt({ from: '120363000000000001@g.us', participant: contact.jid, id: 'OUT1', messageT: '1700000001', count: 2, registrationId: contact.registration, keys });
    expect(node.attrs).toMatchObject({ from: '120363000000000001@g.us', participant: contact.jid, id: 'OUT1', type: 'retry' });
    expect((node.content as BinaryNode[])[0].attrs).toEqual({ count: '2', id: 'OUT1', t: '1700000001', v: '1' });
    expect(readRetryReceipt(node)).toEqual({ id: 'OUT1', count: 2, registrationId: contact.registration, keys: { ...keys, registrationId: contact.registration } });
    expect(readRetryReceipt(retryReceipt({ from: contact.jid, participant: null, id: 'OUT2', messageT: undefined, count: 1, registrationId: 9, keys: null }))?.keys).toBeNull();
  });

  it('sends a contact\'s message again at most MAX_RETRIES times, none once the device took it, and asks for the device\'s at most MAX_RETRIES times', () => {
    const ledger = new RetryLedger();
    ledger.remember(sent('A'));
    ledger.remember(sent('B'));
    for (let i = 0; i < MAX_RETRIES; i++) expect(ledger.toResend('A')?.eventId).toBe('e-A');
    expect(ledger.toResend('A')).toBeNull();
    ledger.forget('B');
    expect(ledger.toResend('B')).toBeNull();
    expect(ledger.toResend('unknown')).toBeNull();

    const asks = Array.from({ length: MAX_RETRIES + 1 }, () => ledger.nextAsk('OUT', 'c@s.whatsapp.net'));
    expect(asks).toEqual([...Array.from({ length: MAX_RETRIES }, (_, i) => i + 1), null]);
    // another contact of the same message counts apart; a message read at last starts over
    expect(ledger.nextAsk('OUT', 'd@s.whatsapp.net')).toBe(1);
    ledger.read('OUT', 'c@s.whatsapp.net');
    expect(ledger.nextAsk('OUT', 'c@s.whatsapp.net')).toBe(1);
  });

  it('a contact sends again in a fresh session from the device\'s keys (a pkmsg naming the new pre-key), which the device reads with its session open', async () => {
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
    const bundleWith = (keyId: number): DeviceKeyBundle => ({
      registrationId: 4242,
      identityKey: strip(identity.pubKey),
      signedPreKey: { keyId: 7, publicKey: strip(signed.keyPair.pubKey), signature: Buffer.from(signed.signature) },
      preKeys: [{ keyId, publicKey: strip(preKeys.get(keyId).pubKey) }],
    });
    const cipher = new libsignal.SessionCipher(store, new libsignal.ProtocolAddress('15557001001', 0));
    const contact = new SignalContact('15557001001@s.whatsapp.net', '777@lid');

    const first = await contact.encryptFor('15551112222', 1, Buffer.from('one'), () => bundleWith(11));
    expect(Buffer.from(await cipher.decryptPreKeyWhisperMessage(first!.ciphertext)).toString()).toBe('one');
    const again = await contact.encryptFor('15551112222', 1, Buffer.from('one, again'), () => bundleWith(12), true);
    expect(again?.type).toBe('pkmsg');
    expect(Buffer.from(await cipher.decryptPreKeyWhisperMessage(again!.ciphertext)).toString()).toBe('one, again');
    expect(preKeys.size).toBe(0);
  });
});
