/**
 * The order of what one WhatsApp Web socket sends the device: a contact's messages are encrypted (asynchronously) and
 * sent one at a time in the network's order, and everything else the network hands over (receipts, calls, group
 * notifications, the offline marker) and the server's acks of the device's messages queue behind them. It also keeps
 * the login's offline batch (offline-delivery.ts) and what waits for the device's first pre-key upload.
 */
import { OfflineBatch } from './offline-delivery';

/** The `offline` attributes of a stanza the network handed over in the login's batch (counted toward the marker). */
export type OfflineStamp = () => Record<string, string>;

export class DeviceOutbound {
  readonly offline = new OfflineBatch();
  private chain: Promise<void> = Promise.resolve();
  /** what contacts sent before the device uploaded its pre-keys (its first login): sent again once it has */
  private readonly waitingForKeys: Array<() => void> = [];

  /** `failed`: a queued step threw (`what` says which); the queue goes on with the next one. */
  constructor(private readonly failed: (err: unknown, what: string) => void) {}

  /**
   * `work` after everything queued before it. Whether its stanza belongs to the offline batch is decided now, when the
   * network hands it over; `stamp` marks it when it is sent.
   */
  queue(what: string, work: (stamp: OfflineStamp) => void | Promise<void>): void {
    const offline = this.offline.open;
    this.chain = this.chain.then(() => work(() => this.offline.stamp(offline))).catch((err) => this.failed(err, what));
  }

  /** A contact's message could not be encrypted yet: the device has no pre-keys on the server. */
  waitForKeys(retry: () => void): void {
    this.waitingForKeys.push(retry);
  }

  /** The device uploaded pre-keys: what waited for them is queued again, in its order. */
  keysArrived(): void {
    for (const retry of this.waitingForKeys.splice(0)) retry();
  }
}
