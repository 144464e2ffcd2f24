/**
 * Calls made in the same turn of the event loop, run as one: the runners of a gateway each write their own row and
 * events, and when many move at once (a failover adopts hundreds of sessions, a Redis blip reconnects them all) those
 * writes are one statement per turn instead of one per runner. A lone call waits for nothing but the end of the
 * current turn (setImmediate). Each caller gets its own answer, or the statement's error. Calls for the same key are
 * never in one statement (one UPDATE would write that row once): the later one runs after the earlier has finished.
 *
 * At most `maxInFlight` statements run at once; calls made while all are busy wait for one to finish and then go as
 * one (a group commit). Under a burst that is what makes the groups large: at one statement per turn the runners of a
 * failover drifted out of step and a turn held only a few of them (5.6 transactions per adopted session where 6
 * grouped steps of 16 runners should cost well under one), each statement paying its round trip, its syscalls and
 * the database's per-statement work. Not one at a time: on an idle box the adoptions then queued behind each other's
 * statements (205 adoptions/s against 488 before grouping; 971 with four).
 */
export class TickBatch<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private scheduled = false;
  private inFlight = 0;
  /** the keys of the statements under way: a second call for one waits for its statement to finish */
  private readonly busyKeys = new Set<string>();

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly keyOf: (input: I) => string,
    /** inputs per statement at most; more make the next one */
    private readonly max = 500,
    /** statements under way at once at most (an idle database answers a few in parallel sooner than one after another) */
    private readonly maxInFlight = 4,
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** One statement of the pending calls, in order: the first call of each key, up to `max`; the rest wait for the next. */
  private flush(): void {
    if (this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    const batch: Array<Pending<I, O>> = [];
    const later: Array<Pending<I, O>> = [];
    const keys = new Set<string>();
    for (const p of this.pending) {
      const key = this.keyOf(p.input);
      if (keys.has(key) || this.busyKeys.has(key) || batch.length >= this.max) later.push(p);
      else {
        keys.add(key);
        batch.push(p);
      }
    }
    this.pending = later;
    if (batch.length === 0) return;
    this.inFlight += 1;
    for (const key of keys) this.busyKeys.add(key);
    void this.run(batch.map((p) => p.input))
      .then(
        (outputs) => batch.forEach((p, i) => p.resolve(outputs[i])),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      )
      .finally(() => {
        this.inFlight -= 1;
        for (const key of keys) this.busyKeys.delete(key);
        // what waited (a second call for a key, calls beyond the bound, calls made meanwhile) goes now
        this.schedule();
      });
    // a slot still free: what was left out for the bound may go at once (a key under way is left out until it is done)
    this.schedule();
  }
}

interface Pending<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (err: unknown) => void;
}
