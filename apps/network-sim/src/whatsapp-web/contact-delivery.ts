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
import type { SignalContact } from './signal-party';
import { isStatusJid } from './statuses';
import type { WaSocket } from './wa-socket';
import type { BinaryNode } from './wa-kit';

/** `message` may be made when its turn comes (a media message is uploaded first). */
export function sendFromContact(socket: WaSocket, eventId: string, envelope: ContactEnvelope, message: WaMessage | (() => Promise<WaMessage>), attrs: Record<string, string> = {}, extra: BinaryNode[] = []): void {
  socket.outbound.queue('encrypting an inbound message failed', async (stamp) => {
    const content = typeof message === 'function' ? await message() : message;
    const contact = socket.deps.directory.contact(envelope.from, socket.lidOf);
    if (!contact) throw new Error(`not a contact jid: ${envelope.from}`);
    const encs = await encryptedCopies(socket, socket.registration!, contact, envelope, content);
    if (!encs) {
      socket.deps.logger?.info({ sessionId: socket.sessionId }, 'the device has uploaded no pre-keys yet: the message waits for them');
      socket.outbound.waitForKeys(() => sendFromContact(socket, eventId, envelope, content, attrs, extra));
      return;
    }
    socket.ledger.expect(eventId, [['message', envelope.id]]);
    const group = groupOf(envelope.chatJid);
    const from: Record<string, string> = group ? { from: group, participant: contact.jid, participant_lid: contact.lid, addressing_mode: 'pn' } : { from: contact.jid };
    socket.send({ tag: 'message', attrs: { ...from, type: envelope.type, id: envelope.id, t: String(envelope.t), ...attrs, ...stamp() }, content: [...encs, ...extra] });
  });
}

/** A status goes out like a group message, with the contact's sender key for status@broadcast. */
function groupOf(chatJid: string): string | null {
  return isGroupJid(chatJid) || isStatusJid(chatJid) ? chatJid : null;
}

/** The `<enc>` copies of the message for the device; null while it has no pre-keys to start a Signal session from. */
async function encryptedCopies(socket: WaSocket, registration: CompanionRegistration, contact: SignalContact, envelope: ContactEnvelope, content: WaMessage): Promise<BinaryNode[] | null> {
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
    pairwise = contact.gaveKeyTo(group, phoneNumber, device) ? null : { senderKeyDistributionMessage: { groupId: group, axolotlSenderKeyDistributionMessage: distribution } };
  }
  if (pairwise) {
    const enc = await contact.encryptFor(phoneNumber, device, baileys.encodeWAMessage(pairwise), () => registration.keyBundle);
    socket.tellPreKeysLow();
    if (!enc) return null;
    encs.push({ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext });
    if (group) socket.ledger.onTaken(envelope.id, () => contact.keyTakenBy(group, phoneNumber, device));
  }
  if (skmsg) encs.push({ tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: skmsg });
  return encs;
}
