import type { AttemptRecord, NewDelivery } from '@app/database';
import type { EventRows } from './event-rows';

/** A claimed row queued for the writer: its outcome may still be attached until its statement starts. */
export interface RowClaim {
  /** Has the row written in its final state instead of claimed; false once its statement started. */
  attach(outcome: AttemptRecord): boolean;
  /** true once this claim's row is committed; false when the (webhook, event) pair had a row already */
  created: Promise<boolean>;
}

/** The writer of first rows (the store's batched log). */
export interface FirstRowWriter {
  /** Inserts the row in its final state with its attempt; false when the pair had a row already. */
  writeFirst(delivery: NewDelivery, outcome: AttemptRecord, event: EventRows): Promise<boolean>;
  /** Inserts the row claimed (`delivering`, attempt 1, a lease) before the outcome is known. */
  hold(delivery: NewDelivery, event: EventRows): RowClaim;
}

/**
 * Where the row of a fresh fan-out's first attempt stands. Each transition replaces the value:
 *
 *   unwritten ──complete──▶ writing ──▶ written | lost
 *   unwritten ──hold──▶ holding ──claim committed──▶ held | lost
 *   holding ──complete, claim not started──▶ writing ──▶ written | lost
 *   holding ──complete, claim started──▶ (its commit decides) held | lost
 *   unwritten ──giveUp──▶ lost
 *
 * `held` is an ordinary leased attempt from then on (its outcome is recorded like any retry's);
 * `lost`: the pair's row is someone else's record, or could not be written.
 */
export type FirstRowState =
  | { readonly kind: 'unwritten' }
  | { readonly kind: 'holding'; readonly claim: RowClaim }
  | { readonly kind: 'held' }
  | { readonly kind: 'writing' }
  | { readonly kind: 'written' }
  | { readonly kind: 'lost' };

/** What `complete` leaves to its caller: nothing (`written`, `lost`), or recording a held attempt. */
export type FirstOutcome = 'written' | 'held' | 'lost';

/**
 * The one owner of a first attempt's row: every transition of its state is made here. The row is kept
 * unwritten until the outcome is known, then written once in its final state; an attempt kept waiting
 * is claimed first (`hold`), so that its event can be acknowledged and no one else redoes it.
 */
export class FirstAttempt {
  private current: FirstRowState = { kind: 'unwritten' };

  constructor(
    readonly delivery: NewDelivery,
    private readonly event: EventRows,
    private readonly writer: FirstRowWriter,
    /** a row of this fan-out was created (a metric) */
    private readonly onCreated: () => void = () => undefined,
  ) {}

  get state(): FirstRowState {
    return this.current;
  }

  private move(next: FirstRowState): void {
    this.current = next;
  }

  /**
   * Claims the row before the outcome: resolves true when the claim committed as this attempt's own
   * lease (`held`), false when it is lost or the outcome took its place; rejects when it could not be
   * written (then `lost`). Only an unwritten row is claimed.
   */
  hold(): Promise<boolean> {
    if (this.current.kind !== 'unwritten') return Promise.resolve(false);
    const claim = this.writer.hold(this.delivery, this.event);
    const holding: FirstRowState = { kind: 'holding', claim };
    this.move(holding);
    return claim.created.then(
      (created) => {
        // the outcome was attached meanwhile: `complete` owns the rest
        if (this.current !== holding) return false;
        this.move({ kind: created ? 'held' : 'lost' });
        if (created) this.onCreated();
        return created;
      },
      (err: unknown) => {
        if (this.current === holding) this.move({ kind: 'lost' });
        throw err;
      },
    );
  }

  /** The outcome is known: writes the row in its final state if it can, else says what stands. */
  async complete(outcome: AttemptRecord): Promise<FirstOutcome> {
    const s = this.current;
    if (s.kind === 'unwritten') return this.write(() => this.writer.writeFirst(this.delivery, outcome, this.event));
    if (s.kind === 'holding') {
      if (s.claim.attach(outcome)) return this.write(() => s.claim.created);
      // its statement started: the claim's commit decides (hold's handler moves the state first)
      await s.claim.created.catch(() => false);
    }
    return this.current.kind === 'held' ? 'held' : 'lost';
  }

  private async write(created: () => Promise<boolean>): Promise<FirstOutcome> {
    this.move({ kind: 'writing' });
    const ok = await created();
    this.move({ kind: ok ? 'written' : 'lost' });
    if (ok) this.onCreated();
    return ok ? 'written' : 'lost';
  }

  /** The attempt ends without its row handed to the writer: its event must not be marked fanned out without it. */
  giveUp(): void {
    if (this.current.kind !== 'unwritten') return;
    this.move({ kind: 'lost' });
    this.event.fail();
  }
}
