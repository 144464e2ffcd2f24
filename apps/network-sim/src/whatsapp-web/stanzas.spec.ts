import type { CompanionRegistration } from './directory';
import { parseQr } from './phone';
import { SignalContact } from './signal-party';
import { answerIq, child, children, IqContext, iqKey, preKeyCountNotification, PRE_KEYS_LOW } from './stanzas';
import type { BinaryNode } from './wa-kit';

const device = (): CompanionRegistration => ({
  sessionId: 's1',
  noiseKey: Buffer.alloc(32, 1),
  identityKey: Buffer.alloc(32, 2),
  registrationId: 7,
  credential: null,
  deviceIndex: 1,
  keyBundle: null,
});
const ctx = (d = device()): IqContext => ({ device: d, account: { phoneNumber: '15551112222', lidUser: '999' }, contact: () => null });
const iq = (xmlns: string, type: string | undefined, content: BinaryNode[]): BinaryNode => ({
  tag: 'iq',
  attrs: { id: 'q1', to: '@s.whatsapp.net', xmlns, ...(type ? { type } : {}) },
  content,
});

describe('answers to the IQs Baileys sends by itself', () => {
  it('keeps an upload as the device key bundle and reports the pre-key count', () => {
    const d = device();
    const key = (id: number) => ({
      tag: 'key',
      attrs: {},
      content: [
        { tag: 'id', attrs: {}, content: Buffer.from([0, 0, id]) },
        { tag: 'value', attrs: {}, content: Buffer.alloc(32, id) },
      ],
    });
    const upload = iq('encrypt', 'set', [
      { tag: 'registration', attrs: {}, content: Buffer.from([0, 0, 1, 2]) },
      { tag: 'type', attrs: {}, content: Buffer.from([5]) },
      { tag: 'identity', attrs: {}, content: Buffer.alloc(32, 9) },
      { tag: 'list', attrs: {}, content: [key(1), key(2)] },
      {
        tag: 'skey',
        attrs: {},
        content: [
          { tag: 'id', attrs: {}, content: Buffer.from([0, 0, 7]) },
          { tag: 'value', attrs: {}, content: Buffer.alloc(32, 8) },
          { tag: 'signature', attrs: {}, content: Buffer.alloc(64, 6) },
        ],
      },
    ]);
    expect(answerIq(upload, ctx(d))).toEqual({ tag: 'iq', attrs: { id: 'q1', from: 's.whatsapp.net', type: 'result' } });
    expect(answerIq(iq('encrypt', 'get', [{ tag: 'count', attrs: {} }]), ctx(d))).toEqual({
      tag: 'iq',
      attrs: { id: 'q1', from: 's.whatsapp.net', type: 'result' },
      content: [{ tag: 'count', attrs: { value: '2' } }],
    });
    // what a contact starts its Signal session from
    expect(d.keyBundle).toEqual({
      registrationId: 258,
      identityKey: Buffer.alloc(32, 9),
      signedPreKey: { keyId: 7, publicKey: Buffer.alloc(32, 8), signature: Buffer.alloc(64, 6) },
      preKeys: [
        { keyId: 1, publicKey: Buffer.alloc(32, 1) },
        { keyId: 2, publicKey: Buffer.alloc(32, 2) },
      ],
    });
  });

  it('refuses an upload without its keys (400)', () => {
    const answer = answerIq(iq('encrypt', 'set', [{ tag: 'registration', attrs: {} }]), ctx());
    expect(answer.content).toEqual([{ tag: 'error', attrs: { code: '400', text: 'bad-request' } }]);
  });

  it('keys IQs by namespace, type and first child, also without a type (w:stats)', () => {
    expect(iqKey(iq('w:stats', undefined, [{ tag: 'add', attrs: {} }]))).toBe('w:stats  add');
    expect(iqKey(iq('blocklist', 'get', []))).toBe('blocklist get');
    expect(answerIq(iq('w:stats', undefined, [{ tag: 'add', attrs: {} }]), ctx()).attrs.type).toBe('result');
    expect(answerIq(iq('w:p', 'get', [{ tag: 'ping', attrs: {} }]), ctx()).attrs.type).toBe('result');
  });

  it('answers anything else with a 501 error Baileys tolerates', () => {
    expect(answerIq(iq('w:sim', 'set', [{ tag: 'unknown_feature', attrs: {} }]), ctx())).toEqual({
      tag: 'iq',
      attrs: { id: 'q1', from: 's.whatsapp.net', type: 'error' },
      content: [{ tag: 'error', attrs: { code: '501', text: 'feature-not-implemented' } }],
    });
  });

  it('answers media_conn with 503 while the network has no media host (media-server.ts)', () => {
    expect(answerIq(iq('w:m', 'set', [{ tag: 'media_conn', attrs: {} }]), ctx()).content).toEqual([{ tag: 'error', attrs: { code: '503', text: 'service-unavailable' } }]);
  });
});

describe('device lists, lids and key bundles (what Baileys asks before it sends)', () => {
  const contact = new SignalContact('15557778888@s.whatsapp.net', '4444@lid');
  const withContact = (): IqContext => ({ ...ctx(), contact: (jid) => (jid.startsWith('15557778888@') || jid.startsWith('4444') ? contact : null) });
  const usync = (protocols: string[], jids: string[]) =>
    iq('usync', 'get', [
      {
        tag: 'usync',
        attrs: { context: 'message' },
        content: [
          { tag: 'query', attrs: {}, content: protocols.map((tag) => ({ tag, attrs: {} })) },
          { tag: 'list', attrs: {}, content: jids.map((jid) => ({ tag: 'user', attrs: { jid } })) },
        ],
      },
    ]);
  const users = (answer: BinaryNode) => children(child(children(answer)[0], 'list'));

  it('a contact has its phone (device 0) and its lid; the account only this device; strangers nothing', () => {
    const answer = answerIq(usync(['devices', 'lid'], ['15557778888@s.whatsapp.net', '15551112222@s.whatsapp.net', '15550000000@s.whatsapp.net']), withContact());
    expect(users(answer)).toEqual([
      {
        tag: 'user',
        attrs: { jid: '15557778888@s.whatsapp.net' },
        content: [
          { tag: 'devices', attrs: {}, content: [{ tag: 'device-list', attrs: {}, content: [{ tag: 'device', attrs: { id: '0' } }] }] },
          { tag: 'lid', attrs: { val: '4444@lid' } },
        ],
      },
      {
        tag: 'user',
        attrs: { jid: '15551112222@s.whatsapp.net' },
        content: [{ tag: 'devices', attrs: {}, content: [{ tag: 'device-list', attrs: {}, content: [{ tag: 'device', attrs: { id: '1', 'key-index': '1' } }] }] }],
      },
      { tag: 'user', attrs: { jid: '15550000000@s.whatsapp.net' }, content: [] },
    ]);
  });

  it('answers privacy with WhatsApp\'s defaults (read receipts on: Baileys then sends `read`, not `read-self`)', () => {
    const answer = answerIq(iq('privacy', 'get', [{ tag: 'privacy', attrs: {} }]), ctx());
    const categories = Object.fromEntries(children(child(answer, 'privacy')).map((c) => [c.attrs.name, c.attrs.value]));
    expect(categories).toMatchObject({ readreceipts: 'all', last: 'all', online: 'all' });
  });

  it('hands out the contact key bundle for its lid, each one-time pre-key once (WhatsApp serves each to one device)', () => {
    const fetch = () => answerIq(iq('encrypt', 'get', [{ tag: 'key', attrs: {}, content: [{ tag: 'user', attrs: { jid: '4444@lid' } }] }]), withContact());
    const [user] = children(children(fetch())[0]);
    expect(user.attrs.jid).toBe('4444@lid');
    expect(children(user).map((c) => c.tag)).toEqual(['registration', 'type', 'identity', 'skey', 'key']);
    expect((child(user, 'identity')!.content as Buffer).length).toBe(32);
    const ids = [user, ...Array.from({ length: 40 }, () => children(children(fetch())[0])[0])].map((u) => Buffer.from(child(child(u, 'key'), 'id')!.content as Buffer).toString('hex'));
    // forty more fetches: never the same key twice (the contact's phone uploads more as the server runs low)
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('the device\'s one-time pre-keys running low', () => {
  it('tells the device how many are left once fewer than Baileys\' minimum remain (Baileys uploads more on it)', () => {
    const bundle = (n: number) => ({
      registrationId: 1,
      identityKey: Buffer.alloc(32),
      signedPreKey: { keyId: 1, publicKey: Buffer.alloc(32), signature: Buffer.alloc(64) },
      preKeys: Array.from({ length: n }, (_, keyId) => ({ keyId, publicKey: Buffer.alloc(32) })),
    });
    expect(preKeyCountNotification('n1', bundle(PRE_KEYS_LOW))).toBeNull();
    expect(preKeyCountNotification('n1', null)).toBeNull();
    const low = preKeyCountNotification('n1', bundle(PRE_KEYS_LOW - 1))!;
    expect(low).toMatchObject({ tag: 'notification', attrs: { from: 's.whatsapp.net', type: 'encrypt', id: 'n1' } });
    expect(child(low, 'count')!.attrs.value).toBe(String(PRE_KEYS_LOW - 1));
  });
});

describe('parseQr (what the phone reads from the screen)', () => {
  const key = (n: number) => Buffer.alloc(32, n).toString('base64');

  it('reads ref, Noise key, identity key and adv secret, with or without the wa.me prefix and platform', () => {
    const qr = parseQr(`https://wa.me/settings/linked_devices#2@abc,${key(1)},${key(2)},${key(3)},1`);
    expect(qr?.ref).toBe('2@abc');
    expect(qr?.noiseKey.equals(Buffer.alloc(32, 1))).toBe(true);
    expect(qr?.advSecret.equals(Buffer.alloc(32, 3))).toBe(true);
    expect(parseQr(`2@abc,${key(1)},${key(2)},${key(3)}`)?.identityKey.equals(Buffer.alloc(32, 2))).toBe(true);
  });

  it('refuses a QR without the adv secret (what the network view shows) or with short keys', () => {
    expect(parseQr(`https://wa.me/settings/linked_devices#2@abc,${key(1)},${key(2)}`)).toBeNull();
    expect(parseQr(`2@abc,${key(1)},${key(2)},c2hvcnQ=`)).toBeNull();
  });
});
