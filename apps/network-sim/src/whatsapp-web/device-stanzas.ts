/**
 * What the device sends besides IQs (iq-router.ts), one entry per stanza tag: its messages (each recipient decrypts
 * its copy, as the contact's phone would, and the network records it once), its receipts and acks (the ack ledger),
 * its call stanzas, chat states and presences (the network's actions). A tag not in the table is logged.
 */
import { bufferOf, child, children, IqError, act } from './iq';
import { callStanzaAck, callTerminate, deviceCallReject } from './calls';
import { deviceChatState, devicePresenceRequest } from './contact-messages';
import { recordDeviceMessage, SentContent, sentContentOf, SentContext, sentContextOf } from './device-messages';
import { findGroup, isGroupJid } from './groups';
import { receiptKey } from './ack-ledger';
import { askForResend, resendOnRetry } from './retry-receipts';
import { sentMediaOf } from './media-messages';
import { mediaHostOf } from './media-server';
import { isStatusJid, statusAudience } from './statuses';
import type { WaSocket } from './wa-socket';
import { BinaryNode, DecodedMessage, nowSeconds, SERVER_JID } from './wa-kit';

type StanzaPlay = (socket: WaSocket, node: BinaryNode) => void;

/** The `iq` entry is the connection's (its router); `ib` is the client's telemetry, which needs no answer. */
export const DEVICE_STANZAS: Record<string, StanzaPlay> = {
  message: onDeviceMessage,
  receipt: onReceipt,
  ack: onAck,
  call: onDeviceCall,
  chatstate: onChatState,
  presence: onPresence,
  ib: () => undefined,
};

/** A copy of the device's message one recipient read. */
interface ReadCopy {
  contact: string;
  content: SentContent;
  context: SentContext;
}

/** Who sent it: the account's number and the device's index. */
interface Sender {
  user: string;
  device: number;
}

/**
 * A message the device sends: each contact it is encrypted for decrypts its copy (Signal, as the contact's phone
 * would), and the network records it once per waMessageId (SimNetwork's `send`, what `GET /sim/messages` lists).
 * To a group: the per-device copies carry the device's sender key (each member takes it), and the one `skmsg` is
 * decrypted by every member holding that key. The server acks the stanza as WhatsApp does; a copy no contact can
 * read is logged, never recorded.
 */
function onDeviceMessage(socket: WaSocket, node: BinaryNode): void {
  socket.outbound.queue('acking a device message failed', async () => {
    try {
      await readDeviceMessage(socket, node);
    } catch (err) {
      socket.deps.logger?.warn({ err, sessionId: socket.sessionId }, 'reading a device message failed');
    }
    socket.send({ tag: 'ack', attrs: { id: node.attrs.id, class: 'message', from: node.attrs.to, t: nowSeconds() } });
  });
}

async function readDeviceMessage(socket: WaSocket, node: BinaryNode): Promise<void> {
  const registration = socket.registration;
  if (socket.phase !== 'open' || !registration?.credential) return;
  const { baileys, directory, network, logger } = socket.deps;
  const sender = { user: registration.credential.account.phoneNumber, device: registration.deviceIndex! };
  const to = node.attrs.to ?? '';
  const copies = children(child(node, 'participants')).filter((c) => c.tag === 'to');
  const texts = [...(await readPairwise(socket, node, copies, sender)), ...(await readSenderKeyCopy(socket, node, copies, sender))];
  if (texts.length === 0) {
    logger?.debug({ sessionId: socket.sessionId, to }, 'outbound kind not carried by the whatsapp web front door yet, or no member could read it');
    return;
  }
  logger?.debug({ sessionId: socket.sessionId, to, readBy: texts.map((t) => t.contact) }, 'whatsapp web message decrypted by its recipients');
  const recipient = isGroupJid(to) || isStatusJid(to) ? to : texts[0].contact;
  const account = { jid: registration.credential.account.jid, lid: registration.credential.account.lid };
  // a status is recorded with the audience that read it (the network's statusPosted)
  const audience = isStatusJid(to) ? [...new Set(texts.map((t) => t.contact))] : null;
  recordDeviceMessage({ baileys, network, directory, sessionId: socket.sessionId, link: socket.link, account }, node.attrs.id, recipient, texts[0].content, texts[0].context, audience);
}

/** What a decrypted message carries that the network records (a text, a poll, a reaction, a medium…), or null. */
async function readCopy(socket: WaSocket, contact: string, message: DecodedMessage, to: string): Promise<ReadCopy | null> {
  const content = sentContentOf(message, to) ?? (await sentMediaOf(socket.deps.baileys, mediaHostOf(socket.deps.network), message));
  return content ? { contact, content, context: sentContextOf(message) } : null;
}

/** The per-device copies (`<participants><to>` or a bare `<enc>`), each decrypted by its contact; a group's sender key is taken. */
async function readPairwise(socket: WaSocket, node: BinaryNode, copies: BinaryNode[], sender: Sender): Promise<ReadCopy[]> {
  const { baileys, directory } = socket.deps;
  const to = node.attrs.to ?? '';
  const direct = children(node).filter((c) => c.tag === 'enc' && c.attrs.type !== 'skmsg');
  const pairwise = [...copies, ...direct.map((enc) => ({ tag: 'to', attrs: { jid: to }, content: [enc] }))];
  const read: ReadCopy[] = [];
  for (const copy of pairwise) {
    const contact = directory.contact(copy.attrs.jid ?? '', socket.lidOf);
    const enc = child(copy, 'enc');
    const ciphertext = bufferOf(enc);
    if (!contact || !enc || !ciphertext) continue;
    let plaintext: Buffer;
    try {
      plaintext = await contact.decryptFrom(sender.user, sender.device, enc.attrs.type === 'pkmsg' ? 'pkmsg' : 'msg', ciphertext);
    } catch (err) {
      // the contact's Signal state is not the device's (issue 42): its phone asks for the message again
      askForResend(socket, node, contact, err);
      continue;
    }
    socket.retries.read(node.attrs.id, contact.jid);
    const message = baileys.proto.Message.decode(baileys.unpadRandomMax16(plaintext));
    const distribution = message.senderKeyDistributionMessage;
    if (distribution?.axolotlSenderKeyDistributionMessage && distribution.groupId === to) {
      await contact.receiveSenderKey(to, sender.user, sender.device, distribution.axolotlSenderKeyDistributionMessage);
    }
    const copyRead = await readCopy(socket, contact.jid, message, to);
    if (copyRead) read.push(copyRead);
  }
  return read;
}

/** The one `skmsg`: a group's members read it; a status's audience (statuses.ts) is the contacts it was sent to. */
async function readSenderKeyCopy(socket: WaSocket, node: BinaryNode, copies: BinaryNode[], sender: Sender): Promise<ReadCopy[]> {
  const { baileys, directory, network } = socket.deps;
  const to = node.attrs.to ?? '';
  const skmsg = bufferOf(children(node).find((c) => c.tag === 'enc' && c.attrs.type === 'skmsg'));
  const readers = isGroupJid(to) ? (findGroup(network, to)?.participants ?? []) : isStatusJid(to) ? statusAudience(copies, (jid) => directory.contact(jid, socket.lidOf)) : [];
  const own = socket.registration!.credential!.account.jid;
  const read: ReadCopy[] = [];
  if (!skmsg) return read;
  for (const member of readers) {
    const contact = member === own ? null : directory.contact(member, socket.lidOf);
    if (!contact?.hasSenderKeyOf(to, sender.user, sender.device)) continue;
    const message = baileys.proto.Message.decode(baileys.unpadRandomMax16(await contact.decryptGroup(to, sender.user, sender.device, skmsg)));
    const copyRead = await readCopy(socket, member, message, to);
    if (copyRead) read.push(copyRead);
  }
  return read;
}

/**
 * The device's receipt for messages it took (delivery, `inactive`, `read`, …; one id, or more in `<list>`): its
 * acknowledgement, so the network forgets them. A nack (`<ack error>`) is not one: the message stays pending; nor is
 * a retry receipt (it could not decrypt the message): the contact sends it again (retry-receipts.ts).
 */
function onReceipt(socket: WaSocket, receipt: BinaryNode): void {
  socket.send({ tag: 'ack', attrs: { id: receipt.attrs.id, class: 'receipt', from: receipt.attrs.to ?? SERVER_JID } });
  const ids = [receipt.attrs.id, ...children(child(receipt, 'list')).map((item) => item.attrs.id)];
  if (receipt.attrs.type === 'read' && receipt.attrs.to && socket.phase === 'open') {
    // the device read what a contact sent: the network's presence log (the blue ticks the contact's phone shows)
    const keys = ids.filter(Boolean).map((waMessageId) => ({ chatJid: receipt.attrs.to, waMessageId, fromMe: false, participant: receipt.attrs.participant ?? null }));
    try {
      socket.deps.network.request(socket.sessionId, socket.link, 'read', { keys });
    } catch (err) {
      socket.deps.logger?.debug({ err, sessionId: socket.sessionId }, 'a read receipt the network did not take');
    }
  }
  // a retry receipt is no acknowledgement: the contact sends the message again (retry-receipts.ts)
  if (receipt.attrs.type === 'retry') return resendOnRetry(socket, receipt);
  for (const id of ids) {
    socket.retries.forget(id);
    socket.ledger.receiptFor(id);
  }
}

/** The device's ack of a receipt, a notification or a call the network sent (a nack, `error=…`, is not one). */
function onAck(socket: WaSocket, ack: BinaryNode): void {
  const { class: kind, id, type, participant, error } = ack.attrs;
  if (error) return;
  if (kind === 'receipt') socket.ledger.acked('receipt', receiptKey(id, type, participant));
  else if (kind === 'notification' || kind === 'call') socket.ledger.acked(kind, id);
}

/**
 * The device's own call stanza: a rejection (Baileys' `rejectCall`) is the network's `calls.reject` (a call not
 * placed to it 404, no longer ringing 409); the server acks it, with the refusal as an error, and then ends the call
 * (`terminate`). Other call stanzas (accepting, calling out) are not played: answered 501.
 */
function onDeviceCall(socket: WaSocket, node: BinaryNode): void {
  const reject = deviceCallReject(node);
  let error: IqError | null = reject ? null : new IqError(501, 'feature-not-implemented');
  if (reject) {
    try {
      if (socket.phase !== 'open') throw new IqError(401, 'not-authorized');
      act({ network: socket.deps.network, sessionId: socket.sessionId, link: socket.link }, 'calls.reject', { callId: reject.callId });
    } catch (err) {
      error = err instanceof IqError ? err : new IqError(500, 'internal-server-error');
    }
  }
  socket.send(callStanzaAck(node, error));
  if (reject && !error) socket.send(callTerminate(socket.newId(), reject));
}

/** The device shows it is typing, recording or stopped in a chat: the network's presence log (what its contacts would see). */
function onChatState(socket: WaSocket, node: BinaryNode): void {
  const state = deviceChatState(node);
  if (state) presenceAction(socket, 'presence.chat', state);
}

/**
 * The device's `<presence>`: the account online / offline (logged, told to whoever subscribed to it), or a
 * subscription to a contact's presence (logged; the network answers with the contact's current presence).
 */
function onPresence(socket: WaSocket, node: BinaryNode): void {
  const request = devicePresenceRequest(node);
  if (request?.kind === 'account') presenceAction(socket, 'presence.account', { presence: request.presence });
  if (request?.kind === 'subscribe') presenceAction(socket, 'presence.subscribe', { jid: request.jid });
}

/** One of the network's presence actions for this device; what it refuses (an unknown contact) is only logged, as WhatsApp answers nothing. */
function presenceAction(socket: WaSocket, action: string, args: Record<string, unknown>): void {
  if (socket.phase !== 'open') return;
  try {
    socket.deps.network.request(socket.sessionId, socket.link, 'action', { action, args });
  } catch (err) {
    socket.deps.logger?.debug({ err, sessionId: socket.sessionId, action }, 'a presence the network did not take');
  }
}
