/**
 * Retry receipts, both ways, as WhatsApp's phones play them (Baileys rc14's `sendRetryRequest` and `handleReceipt` /
 * `sendMessagesAgain` in Socket/messages-recv.js, `extractE2ESessionFromRetryReceipt` in Utils/signal.js). A party that
 * cannot decrypt a message answers `<receipt type="retry" id>` with `<retry count id t v="1">`, its `<registration>`
 * and, from the second retry, a `<keys>` bundle; the sender sends the message again with the same id, in a fresh
 * Signal session built from those keys when it has them. This heals a Signal state one side lost (a gateway SIGKILLed
 * after it put a stanza on the wire and before it stored the session that stanza advanced, issue 42).
 *
 * - the device cannot read a contact's message: its retry receipt is not the message's acknowledgement (the ack
 *   ledger keeps waiting); the contact sends the message again (`resendOnRetry`), up to MAX_RETRIES times, then gives
 *   up, said in the log, and the network forgets the message (the device had it and could not read it);
 * - a contact cannot read the device's message: its phone sends the device a retry receipt (`askForResend`), with its
 *   keys from the second on, up to MAX_RETRIES; the device sends the message again, which the contact then reads.
 *
 * This file owns the protocol (the stanzas, the counts, what a contact sent that it may have to send again); the
 * Signal layer is signal-party.ts's, the encryption of a contact's message contact-delivery.ts's.
 */
import { resendFromContact } from './contact-delivery';
import type { CompanionRegistration } from './directory';
import { isGroupJid } from './groups';
import { bufferOf, child } from './iq';
import type { DeviceKeyBundle, SignalContact } from './signal-party';
import { isStatusJid } from './statuses';
import type { WaSocket } from './wa-socket';
import type { BinaryNode } from './wa-kit';
import { nowSeconds } from './wa-kit';

/** `<keys><type>`: the key bundle type Baileys writes and checks (its KEY_BUNDLE_TYPE). */
const KEY_BUNDLE_TYPE = 5;

/** What a retry receipt asks: which message, the how-manieth retry, and the asker's registration and keys. */
export interface RetryRequest {
  id: string;
  count: number;
  registrationId: number | null;
  /** the asker's pre-key bundle (`<keys>`), to start a fresh session from; null when it sent none */
  keys: DeviceKeyBundle | null;
}

/** How the sender encrypts the message again. */
export type ResendSession = 'from-keys' | 'from-server' | 'current';

/**
 * A party's retry receipt as Baileys reads it (and writes it): the message id (the receipt's), the count (`<retry
 * count>`), the registration id (`<registration>`, 4 bytes big-endian) and the `<keys>` bundle. Null for a receipt that
 * is not a retry or misses its `<retry>`; keys that are not a well-formed bundle are as none (Baileys' rule).
 */
export function readRetryReceipt(node: BinaryNode): RetryRequest | null {
  const retry = child(node, 'retry');
  const id = node.attrs.id;
  if (node.tag !== 'receipt' || node.attrs.type !== 'retry' || !retry || !id) return null;
  const count = Number(retry.attrs.count);
  const registration = bufferOf(child(node, 'registration'));
  const registrationId = registration && registration.length > 0 && registration.length <= 4 ? registration.readUIntBE(0, registration.length) : null;
  return { id, count: Number.isInteger(count) && count > 0 ? count : 1, registrationId, keys: registrationId === null ? null : keysOf(child(node, 'keys'), registrationId) };
}

function keysOf(keys: BinaryNode | undefined, registrationId: number): DeviceKeyBundle | null {
  const type = bufferOf(child(keys, 'type'));
  const identity = bufferOf(child(keys, 'identity'));
  const skey = child(keys, 'skey');
  const signedId = bufferOf(child(skey, 'id'));
  const signedValue = bufferOf(child(skey, 'value'));
  const signature = bufferOf(child(skey, 'signature'));
  if (type?.length !== 1 || type[0] !== KEY_BUNDLE_TYPE || identity?.length !== 32 || signedId?.length !== 3 || signedValue?.length !== 32 || !signature) return null;
  const preKey = child(keys, 'key');
  const preKeyId = bufferOf(child(preKey, 'id'));
  const preKeyValue = bufferOf(child(preKey, 'value'));
  if (preKey && (preKeyId?.length !== 3 || preKeyValue?.length !== 32)) return null;
  return {
    registrationId,
    identityKey: Buffer.from(identity),
    signedPreKey: { keyId: signedId.readUIntBE(0, 3), publicKey: Buffer.from(signedValue), signature: Buffer.from(signature) },
    preKeys: preKeyId && preKeyValue ? [{ keyId: preKeyId.readUIntBE(0, 3), publicKey: Buffer.from(preKeyValue) }] : [],
  };
}

/**
 * How a phone encrypts a message again for a retry (what whatsmeow's and WhatsApp's clients do): in a fresh session
 * from the asker's keys when the receipt carries them; from the asker's bundle on the server from the second retry on
 * (the session it has is not one the asker can read); else in the session it has (the asker may just have missed a
 * message of it).
 */
export function resendSession(request: RetryRequest): ResendSession {
  if (request.keys) return 'from-keys';
  return request.count >= 2 ? 'from-server' : 'current';
}

/** The `<keys>` a contact's phone puts in its retry receipt: its identity, one one-time pre-key, its signed pre-key. */
function keysNode(bundle: DeviceKeyBundle): BinaryNode {
  const preKey = bundle.preKeys[0];
  const id = (n: number): BinaryNode => ({ tag: 'id', attrs: {}, content: uint(n, 3) });
  return {
    tag: 'keys',
    attrs: {},
    content: [
      { tag: 'type', attrs: {}, content: Buffer.from([KEY_BUNDLE_TYPE]) },
      { tag: 'identity', attrs: {}, content: bundle.identityKey },
      ...(preKey ? [{ tag: 'key', attrs: {}, content: [id(preKey.keyId), { tag: 'value', attrs: {}, content: preKey.publicKey }] }] : []),
      {
        tag: 'skey',
        attrs: {},
        content: [id(bundle.signedPreKey.keyId), { tag: 'value', attrs: {}, content: bundle.signedPreKey.publicKey }, { tag: 'signature', attrs: {}, content: bundle.signedPreKey.signature }],
      },
    ],
  };
}

function uint(n: number, bytes: number): Buffer {
  const buffer = Buffer.alloc(bytes);
  buffer.writeUIntBE(n, 0, bytes);
  return buffer;
}

/**
 * A contact's retry receipt for a message of the device it could not decrypt, as the server relays it to the device:
 * `<receipt from id type="retry" t [participant]>` (`from` the chat as the device addressed it; in a group, the
 * member as `participant`), `<retry count id t v="1">`, `<registration>` and, when given, `<keys>`.
 */
export function retryReceipt(input: { from: string; participant: string | null; id: string; messageT: string | undefined; count: number; registrationId: number; keys: DeviceKeyBundle | null }): BinaryNode {
  const { from, participant, id, count, registrationId, keys } = input;
  return {
    tag: 'receipt',
    attrs: { from, id, type: 'retry', t: nowSeconds(), ...(participant ? { participant } : {}) },
    content: [
      { tag: 'retry', attrs: { count: String(count), id, t: input.messageT ?? nowSeconds(), v: '1' } },
      { tag: 'registration', attrs: {}, content: uint(registrationId, 4) },
      ...(keys ? [keysNode(keys)] : []),
    ],
  };
}

/**
 * The bundle a contact starts its fresh session from when it sends a message again (`resendSession`): the asker's
 * keys, or its bundle on the server; null to go on in the current session.
 */
export function freshBundleFor(request: RetryRequest, registration: CompanionRegistration): (() => DeviceKeyBundle | null) | null {
  const how = resendSession(request);
  if (how === 'from-keys') return () => request.keys;
  if (how === 'from-server') return () => registration.keyBundle;
  return null;
}

/** The keys a contact's phone puts in its retry receipt (from its second): its bundle, taking one one-time pre-key. */
export function contactRetryKeys(contact: SignalContact, count: number): DeviceKeyBundle | null {
  return count >= 2 ? contact.bundle() : null;
}

// ---- the two plays on a socket ------------------------------------------------------------------

/**
 * The device's retry receipt for a contact's message (it could not decrypt it): the contact sends it again, in a fresh
 * session when `resendSession` says so. A message unknown here (sent on another socket, or not a contact's) or sent
 * again MAX_RETRIES times is given up, said in the log, and acknowledged: the network forgets it, as before retries.
 */
export function resendOnRetry(socket: WaSocket, receipt: BinaryNode): void {
  const request = readRetryReceipt(receipt);
  const { logger } = socket.deps;
  const id = request?.id ?? receipt.attrs.id;
  const sent = request && socket.registration ? socket.retries.toResend(request.id) : null;
  if (!request || !sent) {
    logger?.warn({ sessionId: socket.sessionId, id, count: request?.count }, 'a retry receipt for a message not sent again (unknown here, or retried too often): the message is given up');
    socket.ledger.acked('message', id);
    return;
  }
  const fresh = freshBundleFor(request, socket.registration!);
  logger?.info({ sessionId: socket.sessionId, id, count: request.count, session: resendSession(request) }, 'the device asked for a contact\'s message again (retry receipt): sent again');
  resendFromContact(socket, sent, fresh);
}

/**
 * A contact could not decrypt its copy of the device's message (`err`, e.g. libsignal's Bad MAC): its phone sends the
 * device a retry receipt (`<keys>` from the second), and the device sends the message again. Past MAX_RETRIES the
 * contact gives up, said in the log; nothing is recorded of a message no contact read.
 */
export function askForResend(socket: WaSocket, message: BinaryNode, contact: SignalContact, err: unknown): void {
  const { id, to = '' } = message.attrs;
  const { logger } = socket.deps;
  const count = id ? socket.retries.nextAsk(id, contact.jid) : null;
  const reason = err instanceof Error ? err.message : String(err);
  if (!count) {
    logger?.warn({ sessionId: socket.sessionId, id, contact: contact.jid, reason }, 'a contact could not decrypt the device\'s message, retried too often: given up');
    return;
  }
  logger?.warn({ sessionId: socket.sessionId, id, contact: contact.jid, count, reason }, 'a contact could not decrypt the device\'s message: its phone sends a retry receipt');
  // 1:1, the chat as the device addressed it (its user, without a device)
  const chat = to.replace(/:\d+@/, '@');
  const inChat = isGroupJid(to) || isStatusJid(to);
  socket.send(
    retryReceipt({
      from: chat,
      participant: inChat ? contact.jid : null,
      id: id!,
      messageT: message.attrs.t,
      count,
      registrationId: contact.registration,
      keys: contactRetryKeys(contact, count),
    }),
  );
}
