import type { ContactEnvelope, WaMessage } from './contact-messages';
import type { BinaryNode } from './wa-kit';

/**
 * What one socket remembers for retry receipts (retry-receipts.ts plays them): the contacts' messages it sent, and the
 * counts either way. Its own file so that the socket (wa-socket.ts) and the contact's sender (contact-delivery.ts) can
 * name it without importing the protocol's plays.
 */

/** Retry receipts for one message, either way, before the party gives up (Baileys resends twice at most). */
export const MAX_RETRIES = 3;
/** Messages of contacts kept for a resend until the device's receipt; the oldest go first past this. */
const KEPT_SENT = 500;

/** A message a contact sent the device, as it was sent: what sending it again needs. */
export interface SentByContact {
  eventId: string;
  envelope: ContactEnvelope;
  content: WaMessage;
  attrs: Record<string, string>;
  extra: BinaryNode[];
}

/**
 * What one socket keeps for retries: the contacts' messages it sent (until the device's receipt for them), how many
 * times each was sent again, and how many retry receipts each contact sent for each of the device's messages.
 */
export class RetryLedger {
  private readonly sent = new Map<string, SentByContact>();
  private readonly resent = new Map<string, number>();
  private readonly asked = new Map<string, number>();

  /** A contact's message went out: kept until the device's receipt, for a retry. */
  remember(entry: SentByContact): void {
    this.sent.delete(entry.envelope.id);
    this.sent.set(entry.envelope.id, entry);
    for (const id of this.sent.keys()) {
      if (this.sent.size <= KEPT_SENT) break;
      this.forget(id);
    }
  }

  /** The device's receipt (not a retry) for a message: nothing more to send again. */
  forget(id: string): void {
    this.sent.delete(id);
    this.resent.delete(id);
  }

  /** The message to send again for this retry, counted; null when unknown here or sent again MAX_RETRIES times. */
  toResend(id: string): SentByContact | null {
    const entry = this.sent.get(id);
    const times = this.resent.get(id) ?? 0;
    if (!entry || times >= MAX_RETRIES) return null;
    this.resent.set(id, times + 1);
    return entry;
  }

  /** The count of the next retry receipt a contact sends for a device's message; null past MAX_RETRIES. */
  nextAsk(id: string, contactJid: string): number | null {
    const key = `${id} ${contactJid}`;
    const count = (this.asked.get(key) ?? 0) + 1;
    if (count > MAX_RETRIES) return null;
    this.asked.set(key, count);
    // bounded as the sent messages are
    if (this.asked.size > KEPT_SENT) this.asked.delete(this.asked.keys().next().value!);
    return count;
  }

  /** A device's message a contact read at last: its retries are over. */
  read(id: string, contactJid: string): void {
    this.asked.delete(`${id} ${contactJid}`);
  }
}
