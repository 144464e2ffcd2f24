/**
 * Answers to the IQs a logged-in Baileys (rc14) sends on its own: pre-key count and upload (kept as the device's
 * key bundle, which contacts start their Signal sessions from), key-bundle digest,
 * signed pre-key rotation, passive/active, keepalive pings, props, blocklist, privacy, stats and usync. Each is
 * answered as WhatsApp answers it, or (anything not listed) with a 501 error, which Baileys logs and tolerates.
 *
 * To add a stanza: add an entry to the routine table below, or to the area's table (account-iqs.ts, media-host.ts),
 * keyed `<xmlns> <type> <first child tag>`; it gets the IQ and the session's registration and returns the content of
 * the result IQ (or throws an IqError). A namespace with a room of its own is routed there by iq-router.ts.
 */
import type { DeviceKeyBundle } from './signal-party';
import { child, children, IqAnswer, IqContext, IqError } from './iq';
import { BinaryNode, SERVER_JID } from './wa-kit';
import { ACCOUNT_IQ_ANSWERS, usyncByPhone, usyncContact, usyncStatus } from './account-iqs';
import { MEDIA_IQ_ANSWERS } from './media-host';

export { child, children, IqError };
export type { IqAnswer, IqContext };

const DEFAULT_PRIVACY = { last: 'all', online: 'all', profile: 'all', status: 'contacts', groupadd: 'all', readreceipts: 'all', calladd: 'all', messages: 'all' };

/** The routine IQs; each area of the account (contacts, media, app state) keeps its own table in its own room. */
const ROUTINE_IQ_ANSWERS: Record<string, IqAnswer> = {
  'encrypt get count': (_iq, { device }) => [{ tag: 'count', attrs: { value: String(device.keyBundle?.preKeys.length ?? 0) } }],
  'encrypt set registration': (iq, { device }) => {
    device.keyBundle = keyBundleOf(iq, device.keyBundle);
    return undefined;
  },
  // a contact's key bundle, to start a session with it (its primary device, 0)
  'encrypt get key': (iq, ctx) => [{ tag: 'list', attrs: {}, content: children(child(iq, 'key')).map((user) => keyBundleNode(user.attrs.jid, ctx)) }],
  // Baileys only checks that a digest comes back (a missing one makes it upload again)
  'encrypt get digest': () => [{ tag: 'digest', attrs: {} }],
  'encrypt set rotate': () => undefined,
  'passive set active': () => undefined,
  'passive set passive': () => undefined,
  'w:p get ping': () => undefined,
  'abt get props': () => [{ tag: 'props', attrs: { protocol: '1' }, content: [] }],
  // WhatsApp's defaults; Baileys sends `read` receipts only when `readreceipts` is `all` (`read-self` otherwise)
  'privacy get privacy': () => [{ tag: 'privacy', attrs: {}, content: Object.entries(DEFAULT_PRIVACY).map(([name, value]) => ({ tag: 'category', attrs: { name, value } })) }],
  'w:stats  add': () => undefined,
  'w:stats set add': () => undefined,
  // device lists and lids: a contact has its phone (device 0); the account its own devices
  'usync get usync': (iq, ctx) => {
    const usync = child(iq, 'usync');
    const protocols = children(child(usync, 'query')).map((p) => p.tag);
    const users = children(child(usync, 'list')).map((user) => usyncByPhone(user, protocols, ctx) ?? usyncUser(user.attrs.jid, protocols, ctx));
    return [{ tag: 'usync', attrs: {}, content: [{ tag: 'list', attrs: {}, content: users.filter((u): u is BinaryNode => u !== null) }] }];
  },
};

/** Every answer table, keyed `<xmlns> <type> <first child>`: what iq-router.ts answers a namespace without a room of its own from. */
const IQ_ANSWERS: Record<string, IqAnswer> = { ...ROUTINE_IQ_ANSWERS, ...ACCOUNT_IQ_ANSWERS, ...MEDIA_IQ_ANSWERS };

function bytes(node: BinaryNode | undefined, tag: string): Buffer {
  const content = child(node, tag)?.content;
  if (!(content instanceof Uint8Array)) throw new IqError(400, 'bad-request');
  return Buffer.from(content);
}

function uint(node: BinaryNode | undefined, tag: string): number {
  return bytes(node, tag).reduce((n, b) => n * 256 + b, 0);
}

/** A pre-key upload: the identity and signed pre-key replace the known ones, the one-time pre-keys are added. */
function keyBundleOf(iq: BinaryNode, known: DeviceKeyBundle | null): DeviceKeyBundle {
  const skey = child(iq, 'skey');
  const uploaded = children(child(iq, 'list')).map((key) => ({ keyId: uint(key, 'id'), publicKey: bytes(key, 'value') }));
  return {
    registrationId: uint(iq, 'registration'),
    identityKey: bytes(iq, 'identity'),
    signedPreKey: { keyId: uint(skey, 'id'), publicKey: bytes(skey, 'value'), signature: bytes(skey, 'signature') },
    preKeys: [...(known?.preKeys ?? []), ...uploaded],
  };
}

function usyncUser(jid: string | undefined, protocols: string[], ctx: IqContext): BinaryNode | null {
  if (!jid) return null;
  const user = jid.split('@')[0].split(':')[0];
  const own = ctx.account && (user === ctx.account.phoneNumber || user === ctx.account.lidUser);
  const contact = own ? null : ctx.contact(jid);
  if (!own && !contact) return { tag: 'user', attrs: { jid }, content: [] };
  const devices = own ? [{ tag: 'device', attrs: { id: String(ctx.device.deviceIndex), 'key-index': '1' } }] : [{ tag: 'device', attrs: { id: '0' } }];
  const content: BinaryNode[] = [];
  if (protocols.includes('devices')) content.push({ tag: 'devices', attrs: {}, content: [{ tag: 'device-list', attrs: {}, content: devices }] });
  if (protocols.includes('lid') && contact && jid.endsWith('@s.whatsapp.net')) content.push({ tag: 'lid', attrs: { val: contact.lid } });
  // whether the number is on the network, and its about text: the account area's (account-iqs.ts)
  if (protocols.includes('contact')) content.push(own ? { tag: 'contact', attrs: { type: 'in' } } : (usyncContact({ tag: 'user', attrs: { jid } }, ctx)?.contact ?? { tag: 'contact', attrs: { type: 'out' } }));
  if (protocols.includes('status')) content.push(usyncStatus(jid, ctx));
  return { tag: 'user', attrs: { jid }, content };
}

const int = (value: number, length: number) => {
  const buffer = Buffer.alloc(length);
  buffer.writeUIntBE(value, 0, length);
  return buffer;
};

/** A contact's key bundle; each fetch takes one of its one-time pre-keys off the server, and none left means no `<key>`. */
function keyBundleNode(jid: string | undefined, ctx: IqContext): BinaryNode {
  const contact = jid ? ctx.contact(jid) : null;
  if (!jid || !contact) return { tag: 'user', attrs: { jid: jid ?? '' }, content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }] };
  const bundle = contact.bundle();
  const preKey = bundle.preKeys[0];
  const content: BinaryNode[] = [
    { tag: 'registration', attrs: {}, content: int(bundle.registrationId, 4) },
    { tag: 'type', attrs: {}, content: Buffer.from([5]) },
    { tag: 'identity', attrs: {}, content: bundle.identityKey },
    {
      tag: 'skey',
      attrs: {},
      content: [
        { tag: 'id', attrs: {}, content: int(bundle.signedPreKey.keyId, 3) },
        { tag: 'value', attrs: {}, content: bundle.signedPreKey.publicKey },
        { tag: 'signature', attrs: {}, content: bundle.signedPreKey.signature },
      ],
    },
  ];
  if (preKey) {
    content.push({
      tag: 'key',
      attrs: {},
      content: [
        { tag: 'id', attrs: {}, content: int(preKey.keyId, 3) },
        { tag: 'value', attrs: {}, content: preKey.publicKey },
      ],
    });
  }
  return { tag: 'user', attrs: { jid }, content };
}

/** Below this many one-time pre-keys on the server, WhatsApp tells the device (Baileys' MIN_PREKEY_COUNT: it uploads more). */
export const PRE_KEYS_LOW = 5;

/**
 * `<notification from="s.whatsapp.net" type="encrypt"><count value>`: the device's one-time pre-keys on the server
 * (each served to one contact only) are running low; Baileys answers with an upload. Null while there are enough.
 */
export function preKeyCountNotification(id: string, bundle: DeviceKeyBundle | null): BinaryNode | null {
  if (!bundle || bundle.preKeys.length >= PRE_KEYS_LOW) return null;
  return { tag: 'notification', attrs: { from: SERVER_JID, type: 'encrypt', id, t: String(Math.floor(Date.now() / 1000)) }, content: [{ tag: 'count', attrs: { value: String(bundle.preKeys.length) } }] };
}

/** The IQ's answer key: `<xmlns> <type> <first child tag>` (missing parts empty). */
export function iqKey(iq: BinaryNode): string {
  const first = children(iq)[0]?.tag ?? '';
  return `${iq.attrs.xmlns ?? ''} ${iq.attrs.type ?? ''} ${first}`.trimEnd();
}

/** The content of the result for one of the client's IQs from the tables; an IqError (501 when no table knows it). */
export function tableAnswer(iq: BinaryNode, ctx: IqContext): BinaryNode[] | undefined {
  const answer = IQ_ANSWERS[iqKey(iq)];
  if (!answer) throw new IqError(501, 'feature-not-implemented');
  return answer(iq, ctx);
}

/** The result (or error) IQ for one of the client's IQs, from the tables. */
export function answerIq(iq: BinaryNode, ctx: IqContext): BinaryNode {
  return iqReply(iq, () => tableAnswer(iq, ctx));
}

/** The result IQ with what `produce` returns as its content, or the error IQ of the IqError it throws. */
export function iqReply(iq: BinaryNode, produce: () => BinaryNode[] | undefined): BinaryNode {
  // a group's IQ is answered by the group; the rest by the server
  const attrs = { id: iq.attrs.id, from: iq.attrs.to?.endsWith('@g.us') ? iq.attrs.to : SERVER_JID };
  try {
    const content = produce();
    return { tag: 'iq', attrs: { ...attrs, type: 'result' }, ...(content ? { content } : {}) };
  } catch (err) {
    const error = err instanceof IqError ? err : new IqError(500, 'internal-server-error');
    return { tag: 'iq', attrs: { ...attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: String(error.code), text: error.text } }] };
  }
}
