import type { Logger } from 'pino';
import { PendingEvent } from './pending-event';

/** The stream side the tracker needs: acknowledging entries of the dispatchers' group. */
export interface StreamAcks {
  ack(entryIds: readonly string[]): Promise<void>;
}

/**
 * Owns the completion of fresh events and their acknowledgement: a batch read from the stream is
 * tracked as one, each event waiting for its rows; once every event of the batch has settled, the
 * entries of those whose rows all landed are acknowledged in one XACK. Entries of an event that
 * failed stay pending, for a takeover (its written rows make that a no-op for them).
 */
export class EventTracker {
  private readonly acks = new Set<Promise<void>>();

  constructor(
    /** a connection other than the blocking reader's */
    private readonly stream: StreamAcks,
    private readonly log: Logger,
  ) {}

  /**
   * Starts tracking a batch: `entryIds` per event id (an event appended twice has two entries), and how
   * many delivery rows each event waits for. Returns the events, for the rows to report to.
   */
  track(entryIds: ReadonlyMap<string, readonly string[]>, rowsPerEvent: ReadonlyMap<string, number>): Map<string, PendingEvent> {
    const events = new Map<string, PendingEvent>();
    if (entryIds.size === 0) return events;
    const ok: string[] = [];
    let open = entryIds.size;
    let settled!: () => void;
    const all = new Promise<void>((resolve) => (settled = resolve));
    for (const [eventId, ids] of entryIds) {
      events.set(eventId, new PendingEvent(eventId, rowsPerEvent.get(eventId) ?? 0, (rowsOk) => {
        if (rowsOk) ok.push(...ids);
        if (--open === 0) settled();
      }));
    }
    const ack = all
      .then(() => this.stream.ack(ok))
      // unacknowledged, the entries are taken over later; their written rows make that a no-op
      .catch((err) => this.log.warn({ reason: (err as Error).message }, 'event stream acknowledgement failed'))
      .finally(() => this.acks.delete(ack));
    this.acks.add(ack);
    return events;
  }

  /** Waits for the acknowledgements of the batches tracked so far (call once the sender is idle). */
  async drain(): Promise<void> {
    while (this.acks.size) await Promise.allSettled([...this.acks]);
  }
}
