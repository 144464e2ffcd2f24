/**
 * Coalesces concurrent calls into one round trip: calls made while a flush is running (or within the
 * same tick) are handed to `flush` together. Under load this turns N statements into N/batch, at no
 * added latency when idle.
 */
export class WriteBatcher<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 200,
    private readonly maxParallel = 2,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.scheduled || this.running >= this.maxParallel || this.queue.length === 0) return;
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

  get pending(): number {
    return this.queue.length + this.running;
  }
}
