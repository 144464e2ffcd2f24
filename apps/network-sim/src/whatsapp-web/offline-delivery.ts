/**
 * Offline delivery the WhatsApp way. What contacts sent while the device was away is held by SimNetwork (its pending
 * events) and handed to the connection right after the login's `open`. WhatsApp sends each such stanza with an
 * `offline` attribute, then `<ib><offline count="N"/></ib>`: Baileys (`Socket/messages-recv.js`) queues offline nodes
 * in its offline processor and reports the messages as `messages.upsert` of type `append`; the marker ends its initial
 * event buffering (`CB:ib,,offline`). A held stanza leaves the network only when the device acknowledges it (its
 * receipt for a message, its ack for a receipt), as a live one does.
 *
 * One batch per login: `begin()` when the login succeeds; the stanzas handed over until `end()` are the batch
 * (SimNetwork hands them over synchronously after `open`); each is stamped when it is sent, and `marker()`, sent after
 * the last of them, counts those actually sent.
 */
import type { BinaryNode } from './wa-kit';
import { SERVER_JID } from './wa-kit';

export class OfflineBatch {
  private collecting = false;
  private sent = 0;

  /** The login succeeded: what the network hands over from now until `end()` was held while the device was away. */
  begin(): void {
    this.collecting = true;
    this.sent = 0;
  }

  /** Whether a stanza handed over now belongs to the offline batch (decided when it is handed over, not when sent). */
  get open(): boolean {
    return this.collecting;
  }

  /** The attributes an offline stanza carries; counts it toward the marker. */
  stamp(offline: boolean): Record<string, string> {
    if (!offline) return {};
    this.sent += 1;
    return { offline: '1' };
  }

  /** Everything held was handed over: what comes next is live. */
  end(): void {
    this.collecting = false;
  }

  /** The offline-count marker, to send after the batch's last stanza. */
  marker(): BinaryNode {
    return { tag: 'ib', attrs: { from: SERVER_JID }, content: [{ tag: 'offline', attrs: { count: String(this.sent) } }] };
  }
}
