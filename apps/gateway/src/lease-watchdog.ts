/** Interval timers are a side effect too: the spec drives them by hand. */
export interface IntervalTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export const realIntervals: IntervalTimers = {
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (h) => clearInterval(h as NodeJS.Timeout),
};

export interface LeaseWatchdogSettings {
  /** how long after the start of the last successful renewal the leases are still surely ours: TTL minus a margin */
  budgetMs: number;
  /** how often the watchdog looks */
  tickMs: number;
}

/**
 * Self-fencing. A gateway that cannot renew its leases (Redis unreachable, or the process was paused) must close its
 * sockets before the leases can expire and another gateway opens the same devices. The watchdog measures from the
 * start of the last successful renewal (Redis set the TTL no earlier than that) and, once the budget is spent, closes
 * everything once per lapse. `trusted()` answers from the clock alone, so the first callback that runs after a pause
 * sees the lapse even before the watchdog's own tick has fired.
 */
export class LeaseWatchdog {
  private lastRenewStartedAt: number;
  /** when the current lapse was detected; null while the leases are trusted */
  private lapsedAt: number | null = null;
  private timer: unknown = null;
  private closing: Promise<void> | null = null;
  private closeEverything: () => Promise<void> = async () => undefined;

  /** lapses detected since the start (the gateway's lapse metric) */
  lapses = 0;

  constructor(
    private readonly settings: LeaseWatchdogSettings,
    private readonly clock: () => number = Date.now,
    private readonly timers: IntervalTimers = realIntervals,
    /**
     * Where renewals made on another thread are read (the LeaseKeeper's shared slot: when its last renewal started).
     * Read at every question, so a main thread that was busy sees the keeper's renewals at once, without waiting for
     * a message to be delivered.
     */
    private readonly renewals?: () => number,
  ) {
    this.lastRenewStartedAt = clock();
  }

  /** What a lapse closes (the node's sessions); set by the node, which is built after the runners that ask `trusted`. */
  onLapse(closeEverything: () => Promise<void>): void {
    this.closeEverything = closeEverything;
  }

  start(): void {
    this.timer ??= this.timers.setInterval(() => void this.check(), this.settings.tickMs);
  }

  stop(): void {
    if (this.timer !== null) this.timers.clearInterval(this.timer);
    this.timer = null;
  }

  /** A renewal that started at `startedAt` succeeded: the leases are ours until startedAt + TTL. */
  renewed(startedAt: number): void {
    this.lastRenewStartedAt = Math.max(this.lastRenewStartedAt, startedAt);
    // only a renewal begun after the sockets were closed ends a lapse: one in flight across it proves nothing
    if (this.lapsedAt !== null && this.closing === null && startedAt > this.lapsedAt) this.lapsedAt = null;
  }

  /** False once the budget since the last successful renewal is spent, until a renewal after the lapse succeeds. */
  trusted(): boolean {
    const fromKeeper = this.renewals?.() ?? 0;
    if (fromKeeper > this.lastRenewStartedAt) this.renewed(fromKeeper);
    return this.lapsedAt === null && this.clock() - this.lastRenewStartedAt <= this.settings.budgetMs;
  }

  /** Whether a lapse is being acted on (the sockets are closing): nothing may re-stamp leases meanwhile. */
  get closingNow(): boolean {
    return this.closing !== null;
  }

  /** Closes every socket if the budget is spent; resolves when they are closed. */
  check(): Promise<void> {
    if (this.closing) return this.closing;
    if (this.lapsedAt !== null || this.trusted()) return Promise.resolve();
    this.lapsedAt = this.clock();
    this.lapses += 1;
    this.closing = this.closeEverything()
      .catch(() => undefined)
      .finally(() => {
        this.closing = null;
      });
    return this.closing;
  }
}
