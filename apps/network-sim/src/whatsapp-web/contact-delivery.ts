/**
 * What a contact's phone sends the device, Signal-encrypted for it, in the network's order (device-outbound.ts): in a
 * 1:1 chat one Signal message (`pkmsg` until the device answered, then `msg`) `<message from=<contact>>`; in a group
 * (or a status, with the contact's sender key for status@broadcast) the message encrypted once with the member's
 * sender key (`skmsg`), preceded, until the device has taken it, by that sender key in a 1:1 Signal message
 * (`senderKeyDistributionMessage`): `<message from=<group> participant=<member>>`; Baileys decrypts both in order.
 * It stays pending on the network until the device's receipt for its id (the ack ledger).
 */
import type { CompanionRegistration } from './directory';
import type { ContactEnvelope, WaMessage } from './contact-messages';
import { isGroupJid } from './groups';
import type { SentByContact } from './retry-ledger';
import type { DeviceKeyBundle, SignalContact } from './signal-party';
import { isStatusJid } from './statuses';
import type { WaSocket } from './wa-socket';
import type { BinaryNode } from './wa-kit';

/** `message` may be made when its turn comes (a media message is uploaded first). */
export function sendFromContact(socket: WaSocket, eventId: string, envelope: ContactEnvelope, message: WaMessage | (() => Promise<WaMessage>), attrs: Record<string, string> = {}, extra: BinaryNode[] = []): void {
  socket.outbound.queue('encrypting an inbound message failed', async (stamp) => {
    const content = typeof message === 'function' ? await message() : message;
    const contact = contactOf(socket, envelope);
    const encs = await encryptedCopies(socket, socket.registration!, contact, envelope, content, null);
    if (!encs) {
      socket.deps.logger?.info({ sessionId: socket.sessionId }, 'the device has uploaded no pre-keys yet: the message waits for them');
      socket.outbound.waitForKeys(() => sendFromContact(socket, eventId, envelope, content, attrs, extra));
      return;
    }
    socket.ledger.expect(eventId, [['message', envelope.id]]);
    // kept for the device's retry receipt (retry-receipts.ts), until its receipt
    socket.retries.remember({ eventId, envelope, content, attrs, extra });
    socket.send(messageStanza(envelope, contact, { ...attrs, ...stamp() }, [...encs, ...extra]));
  });
}

/**
 * A contact's message sent again with the same id, for the device's retry receipt (retry-receipts.ts): in a fresh
 * Signal session from `fresh` (the device's keys) when given, else in the current one; a group's sender key goes
 * with it again. The network's event stays pending until the device's receipt, as for the first send.
 */
export function resendFromContact(socket: WaSocket, sent: SentByContact, fresh: (() => DeviceKeyBundle | null) | null): void {
  socket.outbound.queue('sending a message again for a retry receipt failed', async () => {
    const contact = contactOf(socket, sent.envelope);
    const encs = await encryptedCopies(socket, socket.registration!, contact, sent.envelope, sent.content, fresh);
    if (!encs) throw new Error('no Signal session or bundle to send the message again in');
    socket.send(messageStanza(sent.envelope, contact, sent.attrs, [...encs, ...sent.extra]));
  });
}

function contactOf(socket: WaSocket, envelope: ContactEnvelope): SignalContact {
  const contact = socket.deps.directory.contact(envelope.from, socket.lidOf);
  if (!contact) throw new Error(`not a contact jid: ${envelope.from}`);
  return contact;
}

function messageStanza(envelope: ContactEnvelope, contact: SignalContact, attrs: Record<string, string>, content: BinaryNode[]): BinaryNode {
  const group = groupOf(envelope.chatJid);
  const from: Record<string, string> = group ? { from: group, participant: contact.jid, participant_lid: contact.lid, addressing_mode: 'pn' } : { from: contact.jid };
  return { tag: 'message', attrs: { ...from, type: envelope.type, id: envelope.id, t: String(envelope.t), ...attrs }, content };
}

/** A status goes out like a group message, with the contact's sender key for status@broadcast. */
function groupOf(chatJid: string): string | null {
  return isGroupJid(chatJid) || isStatusJid(chatJid) ? chatJid : null;
}

/**
 * The `<enc>` copies of the message for the device; null while it has no pre-keys to start a Signal session from.
 * `fresh`: a retry's new session (the old ones kept for what is still in flight; a group's sender key goes again).
 */
async function encryptedCopies(
  socket: WaSocket,
  registration: CompanionRegistration,
  contact: SignalContact,
  envelope: ContactEnvelope,
  content: WaMessage,
  fresh: (() => DeviceKeyBundle | null) | null,
): Promise<BinaryNode[] | null> {
  const { baileys } = socket.deps;
  const phoneNumber = registration.credential!.account.phoneNumber;
  const device = registration.deviceIndex!;
  const group = groupOf(envelope.chatJid);
  const encs: BinaryNode[] = [];
  let pairwise: WaMessage | null = content;
  let skmsg: Buffer | null = null;
  if (group) {
    const { ciphertext, distribution } = await contact.encryptGroup(group, baileys.encodeWAMessage(content));
    skmsg = ciphertext;
    const keyTaken = contact.gaveKeyTo(group, phoneNumber, device) && !fresh;
    pairwise = keyTaken ? null : { senderKeyDistributionMessage: { groupId: group, axolotlSenderKeyDistributionMessage: distribution } };
  }
  if (pairwise) {
    const enc = await contact.encryptFor(phoneNumber, device, baileys.encodeWAMessage(pairwise), fresh ?? (() => registration.keyBundle), fresh !== null);
    socket.tellPreKeysLow();
    if (!enc) return null;
    encs.push({ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext });
    if (group) socket.ledger.onTaken(envelope.id, () => contact.keyTakenBy(group, phoneNumber, device));
  }
  if (skmsg) encs.push({ tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: skmsg });
  return encs;
}
