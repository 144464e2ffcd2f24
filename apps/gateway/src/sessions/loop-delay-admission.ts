import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Admits logins and adoptions by how late the main thread's event loop runs, not by a fixed count: each one costs the
 * engine's crypto and the session's first writes on this thread, and a thread that falls behind delays every session
 * it already holds. The number let in at once grows by one with each that finishes while the loop keeps up, halves
 * when it does not, and starts again from one after a lapse (`restart`), so a gateway taking back hundreds of sessions
 * ramps up instead of storming itself. `maxConcurrent` is the ceiling either way.
 */
export class LoopDelayAdmission {
  private inFlight = 0;
  private limit: number;
  /** admissions waiting for a slot, oldest first (a Set: one that gives up leaves it) */
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly settings: { maxConcurrent: number; maxDelayMs: number; retryMs?: number },
    /** the loop's recent delay (ms): p99 over about the last second (EventLoopDelay) */
    private readonly delayMs: () => number,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    private readonly clock: () => number = Date.now,
  ) {
    this.limit = settings.maxConcurrent;
  }

  /** How many may run at once now (for logs and specs). */
  get currentLimit(): number {
    return this.limit;
  }

  /** After a lapse: the next adoptions start one at a time and ramp up again. */
  restart(): void {
    this.limit = 1;
  }

  /**
   * Waits for a slot and a loop that keeps up; resolves with the function that gives the slot back. `until` (epoch ms):
   * a login a user waits for goes ahead at that time whatever the load (its command has a deadline).
   */
  async admit(until = Infinity): Promise<() => void> {
    while (this.clock() < until) {
      if (this.inFlight < this.limit) {
        if (this.delayMs() <= this.settings.maxDelayMs || this.inFlight === 0) break;
        // the loop is late: nothing more starts until it catches up (one at a time still goes, or nothing would)
        await this.sleep(this.settings.retryMs ?? 100);
        continue;
      }
      await this.slotFreed(until);
    }
    this.inFlight += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= 1;
      if (this.delayMs() <= this.settings.maxDelayMs) this.limit = Math.min(this.settings.maxConcurrent, this.limit + 1);
      else this.limit = Math.max(1, Math.floor(this.limit / 2));
      // as many as the (maybe larger) limit lets in now
      for (const wake of [...this.waiters].slice(0, Math.max(1, this.limit - this.inFlight))) wake();
    };
  }

  /** Resolves when a slot is given back, or at `until`. */
  private slotFreed(until: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const wake = () => {
        this.waiters.delete(wake);
        clearTimeout(timer);
        resolve();
      };
      this.waiters.add(wake);
      if (until !== Infinity) timer = setTimeout(wake, Math.max(0, until - this.clock()));
    });
  }
}

/** The event loop's delay as LoopDelayAdmission reads it: p99 of the last full second, or of this one if worse. */
export class EventLoopDelay {
  private readonly histogram = monitorEventLoopDelay({ resolution: 10 });
  private lastP99Ms = 0;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.lastP99Ms = this.histogram.percentile(99) / 1e6;
      this.histogram.reset();
    }, 1000);
    this.timer.unref();
  }

  p99Ms(): number {
    const current = this.histogram.count > 0 ? this.histogram.percentile(99) / 1e6 : 0;
    return Math.max(this.lastP99Ms, current);
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
