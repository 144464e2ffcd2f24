/**
 * Calls made in the same turn of the event loop, run as one: the runners of a gateway each write their own row and
 * events, and when many move at once (a failover adopts hundreds of sessions, a Redis blip reconnects them all) those
 * writes are one statement per turn instead of one per runner. A lone call waits for nothing but the end of the
 * current turn (setImmediate). Each caller gets its own answer, or the statement's error. Calls for the same key are
 * never in one statement (one UPDATE would write that row once): the later one runs after the earlier has finished.
 */
export class TickBatch<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private scheduled = false;

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly keyOf: (input: I) => string,
    /** inputs per statement at most; more make a second one in the same turn */
    private readonly max = 500,
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const waiting = this.pending;
    this.pending = [];
    while (waiting.length > 0) {
      const batch: Array<Pending<I, O>> = [];
      const again: Array<Pending<I, O>> = [];
      const keys = new Set<string>();
      for (const p of waiting.splice(0)) {
        const key = this.keyOf(p.input);
        if (keys.has(key)) again.push(p);
        else if (batch.length >= this.max) waiting.push(p);
        else {
          keys.add(key);
          batch.push(p);
        }
      }
      const done = this.run(batch.map((p) => p.input)).then(
        (outputs) => batch.forEach((p, i) => p.resolve(outputs[i])),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      );
      // a second call for a key waits for the first's statement, then joins whatever is pending by then
      if (again.length > 0) {
        void done.then(() => {
          this.pending.unshift(...again);
          this.schedule();
        });
      }
    }
  }
}

interface Pending<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (err: unknown) => void;
}
