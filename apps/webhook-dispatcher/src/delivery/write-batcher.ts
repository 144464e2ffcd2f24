/**
 * Coalesces concurrent calls into one round trip: calls made while a flush is running (or within the
 * same tick, or within `lingerMs` when set) are handed to `flush` together. Under load this turns N
 * statements into N/batch, at no added latency when idle (a linger is cut short by `flushSoon`).
 */
export class WriteBatcher<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private running = 0;
  private scheduled = false;
  private lingering: NodeJS.Timeout | null = null;

  constructor(
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 200,
    private readonly maxParallel = 2,
    /** wait this long for a batch to fill before flushing it (0: next tick) */
    private readonly lingerMs = 0,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.kick();
    });
  }

  /** Flushes what is queued without waiting for the batch to fill: nothing more is coming soon. */
  flushSoon(): void {
    if (!this.lingering) return;
    clearTimeout(this.lingering);
    this.lingering = null;
    this.kick(true);
  }

  private kick(now = false): void {
    if (this.scheduled || this.running >= this.maxParallel || this.queue.length === 0) return;
    if (this.lingerMs > 0 && !now && this.queue.length < this.maxBatch) {
      this.lingering ??= setTimeout(() => {
        this.lingering = null;
        this.kick(true);
      }, this.lingerMs);
      return;
    }
    if (this.lingering) {
      clearTimeout(this.lingering);
      this.lingering = null;
    }
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.running >= this.maxParallel || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.maxBatch);
    this.running++;
    try {
      const results = await this.flush(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(results[i]));
    } catch (err) {
      batch.forEach((b) => b.reject(err));
    } finally {
      this.running--;
      this.kick();
    }
  }
}
