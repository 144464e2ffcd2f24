/**
 * Group commit: concurrent calls written by one `flush` of all of them, each caller getting its own answer (its
 * position in what `flush` returns) or the error of the flush that carried it; a failed flush fails its own callers
 * only, and what waits behind it is flushed all the same. No timer of its own but the linger, no I/O: `flush` is the
 * caller's statement. The API groups the accepts of one session's sends (a lane per session, the next statement taking
 * what arrived during the one in flight), the gateway its runners' row writes and events of one turn (a key per row,
 * never twice in one statement), the webhook dispatcher its claims and log writes (a linger fills a statement).
 *
 * Bounds, all per lane (`submit`'s second argument; items of two lanes never share a flush):
 * - `maxSize`: items per flush; more waiting go in the flushes after it, in their order.
 * - `maxInFlight`: flushes under way at once; items arriving while all are busy wait and go together in the next.
 * - `linger`: when a flush may start with a slot free. `'none'`: at once, in `submit` (a lone item waits for nothing; items
 *   group only behind a flush under way). `0`: at the end of the current turn (setImmediate), so the calls of one turn
 *   go together. `n > 0`: after n ms, or as soon as `maxSize` items wait, or at `flushSoon` (which, asked while every
 *   slot is busy, has the next flush start as soon as a slot frees).
 * - `maxWeight` / `weightOf`: a flush stops growing past this summed weight (media bytes); a heavier item still goes,
 *   alone.
 * - `keyOf`: items of one key are never in one flush, nor in two under way at once (one UPDATE writes a row once): the
 *   later waits for the earlier's flush to finish.
 */
export interface GroupCommitOptions<I> {
  maxSize?: number;
  maxInFlight?: number;
  linger?: 'none' | number;
  maxWeight?: number;
  weightOf?(item: I): number;
  keyOf?(item: I): string;
}

interface Pending<I, O> {
  item: I;
  resolve(output: O): void;
  reject(err: unknown): void;
}

/** One lane's state; a lane with nothing waiting, in flight or lingering is dropped. */
interface Lane<I, O> {
  name: string;
  queue: Array<Pending<I, O>>;
  inFlight: number;
  /** a flush is scheduled for the end of the turn */
  scheduled: boolean;
  lingering: NodeJS.Timeout | null;
  /** `flushSoon` was asked while every slot was busy: the next flush does not linger */
  soon: boolean;
  /** the keys (`keyOf`) of the items in its flushes under way */
  busyKeys: Set<string>;
}

/**
 * The gateway's grouping of its runners' calls (row reads and writes, lease tokens, events, creds): the calls of one
 * turn as one statement, at most 500 of them, at most 4 statements under way. When many runners move at once (a
 * failover adopts hundreds of sessions, a Redis blip reconnects them all), calls made while all 4 are busy go together
 * in the next, which is what makes the groups large under a burst (at one statement per turn the runners of a failover
 * drifted out of step and a turn held only a few of them); not one at a time, as an idle database answers a few
 * statements in parallel sooner than one after another.
 */
export const TURN_GROUPS = { maxSize: 500, maxInFlight: 4, linger: 0 } as const;

export class GroupCommit<I, O> {
  private readonly lanes = new Map<string, Lane<I, O>>();
  private readonly options: Required<Omit<GroupCommitOptions<I>, 'keyOf'>>;
  private readonly keyOf: ((item: I) => string) | null;

  constructor(
    private readonly flush: (items: I[]) => Promise<O[]>,
    options: GroupCommitOptions<I> = {},
  ) {
    const { keyOf, ...bounds } = options;
    this.options = { maxSize: 100, maxInFlight: 1, linger: 0, maxWeight: Infinity, weightOf: () => 0, ...bounds };
    this.keyOf = keyOf ?? null;
  }

  /** `item`'s answer, once the flush that carried it returned; `lane`: see the class. */
  submit(item: I, lane = ''): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      let l = this.lanes.get(lane);
      if (!l) this.lanes.set(lane, (l = { name: lane, queue: [], inFlight: 0, scheduled: false, lingering: null, soon: false, busyKeys: new Set() }));
      l.queue.push({ item, resolve, reject });
      this.kick(l, false);
    });
  }

  /**
   * Flushes what waits in `lane` without waiting for the flush to fill: nothing more is coming soon. With every slot
   * busy, the next flush starts as soon as one frees, without lingering.
   */
  flushSoon(lane = ''): void {
    const l = this.lanes.get(lane);
    if (!l || l.queue.length === 0) return;
    if (!l.lingering) {
      if (l.inFlight >= this.options.maxInFlight) l.soon = true;
      return;
    }
    clearTimeout(l.lingering);
    l.lingering = null;
    this.kick(l, true);
  }

  /** How many items of `lane` wait for a flush (diagnostics; tests hold a flush to see a group form). */
  waitingFor(lane = ''): number {
    return this.lanes.get(lane)?.queue.length ?? 0;
  }

  /** Starts a flush of `lane` when a slot is free and its linger allows; `now`: the linger is over. */
  private kick(lane: Lane<I, O>, now: boolean): void {
    const { maxInFlight, linger, maxSize } = this.options;
    if (lane.inFlight >= maxInFlight || lane.queue.length === 0) return this.dropIfIdle(lane);
    if (linger === 'none') return this.start(lane);
    if (lane.scheduled) return;
    if (linger > 0 && !now && !lane.soon && lane.queue.length < maxSize) {
      lane.lingering ??= setTimeout(() => {
        lane.lingering = null;
        this.kick(lane, true);
      }, linger);
      return;
    }
    if (lane.lingering) {
      clearTimeout(lane.lingering);
      lane.lingering = null;
    }
    lane.scheduled = true;
    setImmediate(() => {
      lane.scheduled = false;
      this.start(lane);
    });
  }

  /** One flush of the first items the bounds allow, then (a slot still free) another for what it left. */
  private start(lane: Lane<I, O>): void {
    if (lane.inFlight >= this.options.maxInFlight) return;
    const { batch, keys } = this.take(lane);
    if (batch.length === 0) return this.dropIfIdle(lane);
    lane.soon = false;
    lane.inFlight += 1;
    for (const key of keys) lane.busyKeys.add(key);
    void this.run(lane, batch, keys);
    this.kick(lane, false);
  }

  /** The next flush's items, in order: at least one, then while size and weight allow, none whose key is taken. */
  private take(lane: Lane<I, O>): { batch: Array<Pending<I, O>>; keys: Set<string> } {
    const { maxSize, maxWeight, weightOf } = this.options;
    const batch: Array<Pending<I, O>> = [];
    const later: Array<Pending<I, O>> = [];
    const keys = new Set<string>();
    let weight = 0;
    let full = false;
    for (const p of lane.queue) {
      const key = this.keyOf ? this.keyOf(p.item) : null;
      if (full || (key !== null && (keys.has(key) || lane.busyKeys.has(key)))) {
        later.push(p);
        continue;
      }
      weight += weightOf(p.item);
      full = batch.length >= maxSize || (batch.length > 0 && weight > maxWeight);
      if (full) later.push(p);
      else {
        batch.push(p);
        if (key !== null) keys.add(key);
      }
    }
    lane.queue = later;
    return { batch, keys };
  }

  private async run(lane: Lane<I, O>, batch: Array<Pending<I, O>>, keys: Set<string>): Promise<void> {
    try {
      const outputs = await this.flush(batch.map((p) => p.item));
      if (outputs.length !== batch.length) throw new Error(`a group of ${batch.length} got ${outputs.length} results`);
      batch.forEach((p, i) => p.resolve(outputs[i]));
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      lane.inFlight -= 1;
      for (const key of keys) lane.busyKeys.delete(key);
      // what waited (items beyond the bounds, a key that was under way, items that came meanwhile) goes now
      this.kick(lane, false);
    }
  }

  private dropIfIdle(lane: Lane<I, O>): void {
    if (lane.queue.length === 0 && lane.inFlight === 0 && !lane.scheduled && !lane.lingering) this.lanes.delete(lane.name);
  }
}
