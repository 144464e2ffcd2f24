/**
 * Whether the delivery log can be written right now. "No send without a record": while a statement of the
 * log failed for a reason that is not the rows' own (PostgreSQL down, restarting, out of connections), no new
 * attempt may start, and the writer holds what it could not write and writes it again once PostgreSQL answers.
 * A probe (a trivial statement) runs every `probeMs` while the log is down; the first one that succeeds, or
 * any statement of the writer that succeeds, reopens it.
 */
export class LogHealth {
  private down: { since: number; timer: NodeJS.Timeout | null } | null = null;
  private readonly waiters: (() => void)[] = [];
  private readonly listeners: ((writable: boolean) => void)[] = [];

  constructor(
    private readonly probe: () => Promise<void>,
    private readonly probeMs = 500,
    private readonly clock: () => number = Date.now,
  ) {}

  get writable(): boolean {
    return this.down === null;
  }

  /** ms since the log went down (0 while writable) */
  get downFor(): number {
    return this.down ? this.clock() - this.down.since : 0;
  }

  /** Called with the new state on every change (the scheduler resumes on `true`). */
  onChange(listener: (writable: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** Resolves once the log is writable; at the latest after `maxWaitMs` (then resolves false). */
  whenWritable(maxWaitMs: number): Promise<boolean> {
    if (!this.down) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(wake);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(this.writable);
      }, maxWaitMs);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(wake);
    });
  }

  /** A statement failed for a reason that is not its rows' own: stop new attempts, probe until PostgreSQL answers. */
  failed(): void {
    if (this.down) return;
    this.down = { since: this.clock(), timer: null };
    this.schedule();
    this.emit(false);
  }

  /** A statement (or the probe) went through. */
  succeeded(): void {
    if (!this.down) return;
    if (this.down.timer) clearTimeout(this.down.timer);
    this.down = null;
    this.emit(true);
    for (const wake of this.waiters.splice(0)) wake();
  }

  stop(): void {
    if (this.down?.timer) clearTimeout(this.down.timer);
    if (this.down) this.down.timer = null;
  }

  private schedule(): void {
    const down = this.down;
    if (!down) return;
    down.timer = setTimeout(() => {
      down.timer = null;
      this.probe().then(
        () => this.succeeded(),
        () => this.schedule(),
      );
    }, this.probeMs);
    down.timer.unref?.();
  }

  private emit(writable: boolean): void {
    for (const listener of this.listeners) listener(writable);
  }
}
