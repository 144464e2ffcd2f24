import type { EventRows } from '../delivery/event-rows';

/**
 * An event of a fresh fan-out whose delivery rows are not all written yet. Its rows are inserted claimed, before
 * their calls, in the batched writer's statements; the statement that writes the last of them also marks the event
 * fanned out, and only then is its stream entry acknowledged. Until then the stream entry stays pending and the
 * outbox row un-fanned-out, so a dispatcher dying before the commit loses nothing. Only its tracker creates one.
 */
export class PendingEvent implements EventRows {
  private failed = false;
  private settled = false;

  constructor(
    readonly eventId: string,
    /** delivery rows of this event not yet committed (created, or found already there) */
    private unwritten: number,
    private readonly onSettled: (ok: boolean) => void,
  ) {}

  completedBy(n: number): boolean {
    return !this.failed && this.unwritten === n;
  }

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
