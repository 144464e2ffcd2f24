/**
 * Calls made in the same turn of the event loop, run as one: the runners of a gateway each write their own row and
 * events, and when many move at once (a failover adopts hundreds of sessions, a Redis blip reconnects them all) those
 * writes are one statement per turn instead of one per runner. A lone call waits for nothing but the end of the
 * current turn (setImmediate). Each caller gets its own answer, or the statement's error. Calls for the same key are
 * never in one statement (one UPDATE would write that row once): the later one runs after the earlier has finished.
 *
 * One statement runs at a time; calls made meanwhile wait for it to finish and then go as one (a group commit). Under a burst that is what makes the groups large: at one statement per turn the runners of a
 * failover drifted out of step and a turn held only a few of them (5.6 transactions per adopted session where 6
 * grouped steps of 16 runners should cost well under one), each statement paying its round trip, its syscalls and
 * the database's per-statement work. A lone call still waits at most for the end of the statement under way.
 */
export class TickBatch<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private scheduled = false;
  private inFlight = false;

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly keyOf: (input: I) => string,
    /** inputs per statement at most; more make the next one */
    private readonly max = 500,
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** One statement of the pending calls, in order: the first call of each key, up to `max`; the rest wait for the next. */
  private flush(): void {
    if (this.inFlight || this.pending.length === 0) return;
    const batch: Array<Pending<I, O>> = [];
    const later: Array<Pending<I, O>> = [];
    const keys = new Set<string>();
    for (const p of this.pending) {
      const key = this.keyOf(p.input);
      if (keys.has(key) || batch.length >= this.max) later.push(p);
      else {
        keys.add(key);
        batch.push(p);
      }
    }
    this.pending = later;
    this.inFlight = true;
    void this.run(batch.map((p) => p.input))
      .then(
        (outputs) => batch.forEach((p, i) => p.resolve(outputs[i])),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      )
      .finally(() => {
        this.inFlight = false;
        // what waited (a second call for a key, calls beyond the bound, calls made meanwhile) goes now
        this.schedule();
      });
  }
}

interface Pending<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (err: unknown) => void;
}
