import type { EventEnvelope } from '@app/contracts';

/** How far the consumer reads ahead of the POSTs, in attempts held in memory (the sender's and scheduler's view). */
export interface ReadAhead {
  /** resolves when the attempts held leave room for another batch, with how many attempts that batch may bring */
  room(): Promise<number>;
  /** attempts held now */
  held(): number;
  /** attempts of one organization held now (waiting for a slot or POSTing) */
  heldOf(organizationId: string): number;
  /** its attempts are not moving: a webhook of it hangs, its breaker is open, or it was disabled */
  stalled(organizationId: string): boolean;
  /** an organization holding this many attempts has its further events parked while it is stalled or congested */
  share: number;
  /** past this many attempts held every event read is parked */
  max: number;
}

/** The drain's pace is measured over windows at least this long. */
const PACE_WINDOW_MS = 250;

/**
 * How far ahead the consumer reads, in time at the drain's pace: an attempt read further ahead only waits in memory,
 * its lease renewed, and holds back the events of other organizations read after it.
 */
export const READ_AHEAD_MS = 500;

/**
 * How deep the consumer reads ahead: as many attempts as start within `targetMs` at the pace attempts have been
 * completing lately, never fewer than `floor` (every slot busy while the next batch is read) nor more than `ceiling`.
 * An attempt kept waiting longer has its lease renewed (a statement more per attempt), so reading further ahead than
 * the drain takes in that time only adds that work, and under load that work is what slows the drain.
 */
export class ReadAheadDepth {
  private perSecond = 0;
  private countedAt: number;
  private counted: number;

  constructor(
    /** attempts completed so far (recorded, handed back or given up) */
    private readonly completed: () => number,
    /** attempts held now */
    private readonly held: () => number,
    private readonly floor: number,
    private readonly ceiling: number,
    private readonly targetMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.countedAt = clock();
    this.counted = completed();
  }

  /** Attempts to hold at most now. */
  limit(): number {
    const now = this.clock();
    const elapsed = now - this.countedAt;
    if (elapsed >= PACE_WINDOW_MS) {
      const completed = this.completed();
      const done = completed - this.counted;
      // a window with nothing held and nothing done says nothing of the drain: the last pace stands
      if (done > 0 || this.held() > 0) {
        const rate = (done * 1000) / elapsed;
        this.perSecond = this.perSecond === 0 ? rate : (this.perSecond + rate) / 2;
      }
      this.countedAt = now;
      this.counted = completed;
    }
    return Math.min(this.ceiling, Math.max(this.floor, Math.round((this.perSecond * this.targetMs) / 1000)));
  }
}

export interface EntryGroup {
  envelope: EventEnvelope;
  entryIds: string[];
  /** the envelope as published */
  text: string;
}

/**
 * Takes out of `groups` (in stream order) the events to read past: those of an organization holding `share` attempts
 * (counting the events of this batch kept before them) while it is stalled or the read-ahead is congested, those of an
 * organization whose backlog is parked (`parked`: they go behind it), the late ones (`late`) of a stalled organization,
 * and every one read past `max` attempts held.
 */
export function spillOut(
  groups: Map<string, EntryGroup>[],
  readAhead: Omit<ReadAhead, 'room'>,
  congested: boolean,
  parked: (organizationId: string) => boolean = () => false,
  /** the group fanned out with rows first (late entries): a stalled organization's are read past whatever it holds */
  late?: Map<string, EntryGroup>,
): EntryGroup[] {
  const kept = new Map<string, number>();
  const stalled = new Map<string, boolean>();
  const isStalled = (org: string) => {
    let s = stalled.get(org);
    if (s === undefined) stalled.set(org, (s = readAhead.stalled(org)));
    return s;
  };
  let held = readAhead.held();
  const spilled: EntryGroup[] = [];
  for (const group of groups) {
    for (const [eventId, g] of group) {
      const org = g.envelope.organizationId;
      const before = kept.get(org) ?? 0;
      // a stalled organization's events would only wait in memory, to be handed back one by one; below its share
      // it keeps the fresh way (a small organization's other webhooks are not slowed by the job path)
      // a late entry costs the reader a statement before its POST, which a stalled organization would only hand back
      const spill =
        held >= readAhead.max ||
        parked(org) ||
        (group === late && isStalled(org)) ||
        (readAhead.heldOf(org) + before >= readAhead.share && (congested || isStalled(org)));
      if (!spill) {
        kept.set(org, before + 1);
        held++;
        continue;
      }
      group.delete(eventId);
      spilled.push(g);
    }
  }
  return spilled;
}
