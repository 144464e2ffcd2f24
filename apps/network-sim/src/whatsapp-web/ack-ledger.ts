/**
 * One ledger of what the device still has to acknowledge on one WhatsApp Web socket. A network event becomes one or
 * more stanzas (a message, a receipt, a call offer, one notification per group change or per app state collection);
 * the device acknowledges each its own way (its `<receipt>` for a message, `<ack class=…>` for the rest), and the
 * network forgets the event (SimNetwork's `ack`) once every stanza of it was acknowledged. A nack (`<ack error>`) is
 * no acknowledgement: the caller does not report it, and the event stays pending, delivered again on the next login.
 *
 * Besides: what the device's receipt for a message confirms beyond the message (it took a group's sender key, or the
 * app state sync key), run once on its first receipt (a retry receipt is not one: retry-receipts.ts).
 */

/** How the device acknowledges a stanza: a message by its receipt, the rest by an `<ack class>` of that name. */
export type AckedStanza = 'message' | 'receipt' | 'notification' | 'call';

interface OpenEvent {
  eventId: string;
  /** the ledger keys of this event's stanzas not acknowledged yet */
  open: Set<string>;
}

export class AckLedger {
  private readonly waiting = new Map<string, OpenEvent>();
  private readonly taken = new Map<string, () => void>();

  /** `settled`: every stanza of the network event was acknowledged (SimNetwork's `ack`). */
  constructor(private readonly settled: (eventId: string) => void) {}

  /** The stanzas sent for one network event (`id`: a message's or stanza's id, or receiptKey's); none: settled now. */
  expect(eventId: string, stanzas: Array<[AckedStanza, string]>): void {
    const open = new Set(stanzas.map(([kind, id]) => ledgerKey(kind, id)));
    for (const key of open) this.waiting.set(key, { eventId, open });
    if (open.size === 0) this.settled(eventId);
  }

  /** The device acknowledged one stanza; an unknown one (acknowledged twice, or never expected) changes nothing. */
  acked(kind: AckedStanza, id: string | undefined): void {
    const key = ledgerKey(kind, id ?? '');
    const event = this.waiting.get(key);
    if (!event) return;
    this.waiting.delete(key);
    event.open.delete(key);
    if (event.open.size === 0) this.settled(event.eventId);
  }

  /** What the device's receipt for message `id` also confirms (`then`), once. */
  onTaken(id: string, then: () => void): void {
    this.taken.set(id, then);
  }

  /**
   * The device's receipt for message `id` (delivered, read…): what it confirms runs, and the message is acknowledged.
   * A retry receipt is none of these (retry-receipts.ts): it never comes here.
   */
  receiptFor(id: string | undefined): void {
    if (!id) return;
    const then = this.taken.get(id);
    this.taken.delete(id);
    then?.();
    this.acked('message', id);
  }

  /** How many stanzas wait for the device (tests). */
  get size(): number {
    return this.waiting.size;
  }
}

/** A receipt the network sent, as the device's `<ack class="receipt">` names it: id, type and participant. */
export function receiptKey(id: string | undefined, type: string | undefined, participant?: string): string {
  return `${id ?? ''} ${type ?? ''} ${participant ?? ''}`;
}

function ledgerKey(kind: AckedStanza, id: string): string {
  return `${kind} ${id}`;
}
