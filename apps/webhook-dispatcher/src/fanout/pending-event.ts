/**
 * An event of a fresh fan-out whose delivery rows are not all written yet. Its rows are written after
 * their POSTs; the statement that writes the last of them also marks the event fanned out, and only
 * then is its stream entry acknowledged. Until then the stream entry stays pending and the outbox row
 * un-fanned-out, so a dispatcher dying mid-POST loses nothing.
 */
export class PendingEvent {
  failed = false;
  private settled = false;

  constructor(
    readonly eventId: string,
    /** delivery rows of this event not yet committed (created, or found already there) */
    public unwritten: number,
    private readonly onSettled: (ok: boolean) => void,
  ) {}

  /** A statement holding `n` of its rows committed, and marked the event fanned out if they were the last. */
  written(n: number): void {
    this.unwritten -= n;
    if (this.unwritten <= 0) this.settle(true);
  }

  /** One of its rows could not be written: never marked nor acknowledged here; a takeover redoes it. */
  fail(): void {
    this.failed = true;
    this.settle(false);
  }

  private settle(ok: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettled(ok);
  }
}

/**
 * The events a statement marks fanned out: those whose remaining unwritten rows are all in it (an
 * event with no delivery at all has none left). A failed event is never marked.
 */
export function eventsCompletedBy(rowsByEvent: Map<PendingEvent, number>): PendingEvent[] {
  const done: PendingEvent[] = [];
  for (const [event, n] of rowsByEvent) if (!event.failed && event.unwritten === n) done.push(event);
  return done;
}
