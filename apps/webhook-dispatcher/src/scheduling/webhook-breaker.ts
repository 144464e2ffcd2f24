export interface BreakerSettings {
  /** failures the window must hold before it can open the breaker (its minimum volume) */
  failures: number;
  /** first open period; doubled after each failed probe */
  cooldownMs: number;
  /** the longest open period */
  maxCooldownMs: number;
  /** the sliding window outcomes are counted over (default BREAKER_WINDOW_MS) */
  windowMs?: number;
  /** the failure ratio that opens the breaker (default BREAKER_FAILURE_RATIO) */
  failureRatio?: number;
}

/** Outcomes older than this no longer count. */
export const BREAKER_WINDOW_MS = 10_000;
/** A window failing at least this often (with confidence, below) opens the breaker. */
export const BREAKER_FAILURE_RATIO = 0.5;
/** The window is kept as this many buckets, each a tenth of it. */
const BUCKETS = 10;
/** One-sided 99.9 % normal quantile: the ratio must exceed the threshold with that confidence, not by chance. */
const Z = 3.09;

/**
 * The lower bound of the Wilson score interval of a failure ratio (`failures` of `total`): the ratio is at least this
 * with 99.9 % confidence. A receiver failing 35 % of the time at random shows a window above 50 % now and then when the
 * volume is small; its lower bound stays below 50 % unless the volume is large enough to mean it.
 */
export function failureRatioLowerBound(failures: number, total: number): number {
  if (total === 0) return 0;
  const p = failures / total;
  const z2 = Z * Z;
  const centre = p + z2 / (2 * total);
  const margin = Z * Math.sqrt((p * (1 - p)) / total + z2 / (4 * total * total));
  return (centre - margin) / (1 + z2 / total);
}

/**
 * One webhook's circuit breaker in this dispatcher (the classic design: a failure ratio over a sliding window with a
 * minimum volume, then half-open probes):
 *
 *   closed ──the last windowMs hold ≥ `failures` failures, and either no success or a failure ratio
 *            ≥ failureRatio with 99.9 % confidence──▶ open(until)
 *   open ──until passed, an attempt starts──▶ probing (that attempt is the probe; nothing else starts)
 *   probing ──probe succeeded──▶ closed (window emptied)
 *   probing ──probe failed──▶ open(twice the cooldown, at most maxCooldownMs)
 *   open or probing ──any attempt succeeded──▶ closed (window emptied)
 *
 * A success while closed is one more outcome in the window: it does not wipe the failures, so a receiver failing
 * most of the time still opens it, and one failing now and then (a random 35 %) never does. `failures` in the closed
 * state counts the window's failures. Results of attempts that started before the breaker opened change nothing but
 * a success (closing it).
 */
export type BreakerState =
  | { readonly kind: 'closed'; readonly failures: number }
  | { readonly kind: 'open'; readonly until: number; readonly cooldownMs: number }
  | { readonly kind: 'probing'; readonly cooldownMs: number };

export class WebhookBreaker {
  private current: BreakerState = { kind: 'closed', failures: 0 };
  /** per bucket: its number (time ÷ bucket width), failures and outcomes in it */
  private readonly bucketNo = new Array<number>(BUCKETS).fill(-1);
  private readonly bucketFailures = new Array<number>(BUCKETS).fill(0);
  private readonly bucketTotal = new Array<number>(BUCKETS).fill(0);
  /** the latest time this breaker was told of (a success is counted then) */
  private lastNow = 0;

  constructor(private readonly settings: BreakerSettings) {}

  get state(): BreakerState {
    return this.current;
  }

  /** May an attempt start at `now`? When the open period is over, one may: the probe. */
  canStart(now: number): boolean {
    this.lastNow = Math.max(this.lastNow, now);
    const s = this.current;
    return s.kind === 'closed' || (s.kind === 'open' && now >= s.until);
  }

  /** An attempt starts (canStart said yes): past the open period, it is the probe. */
  started(): void {
    const s = this.current;
    if (s.kind === 'open') this.current = { kind: 'probing', cooldownMs: s.cooldownMs };
  }

  /** The probe is in flight: the attempt that just started is it. */
  get probing(): boolean {
    return this.current.kind === 'probing';
  }

  succeeded(now = this.lastNow): void {
    if (this.current.kind !== 'closed') {
      this.clearWindow();
      this.current = { kind: 'closed', failures: 0 };
      return;
    }
    this.count(now, false);
    this.current = { kind: 'closed', failures: this.windowCounts(now).failures };
  }

  failed(now: number): void {
    this.lastNow = Math.max(this.lastNow, now);
    const s = this.current;
    if (s.kind === 'closed') {
      this.count(now, true);
      const { failures, total } = this.windowCounts(now);
      this.current = this.trips(failures, total)
        ? { kind: 'open', until: now + this.settings.cooldownMs, cooldownMs: this.settings.cooldownMs }
        : { kind: 'closed', failures };
    } else if (s.kind === 'probing') {
      const cooldownMs = Math.min(this.settings.maxCooldownMs, s.cooldownMs * 2);
      this.current = { kind: 'open', until: now + cooldownMs, cooldownMs };
    }
  }

  /**
   * When an attempt turned away at `now` should come back: after the open period, spread over one more cooldown
   * (`random` in [0, 1)), so the queued retries of a recovering receiver do not all arrive at once.
   */
  comeBackAt(now: number, random: number): number {
    const s = this.current;
    const from = s.kind === 'open' ? Math.max(now, s.until) : now + (s.kind === 'probing' ? s.cooldownMs : 0);
    const spread = s.kind === 'closed' ? this.settings.cooldownMs : s.cooldownMs;
    return Math.round(from + random * spread);
  }

  private trips(failures: number, total: number): boolean {
    if (failures < this.settings.failures) return false;
    return failures === total || failureRatioLowerBound(failures, total) >= (this.settings.failureRatio ?? BREAKER_FAILURE_RATIO);
  }

  private bucketWidth(): number {
    return Math.max(1, Math.floor((this.settings.windowMs ?? BREAKER_WINDOW_MS) / BUCKETS));
  }

  private count(now: number, failure: boolean): void {
    const no = Math.floor(now / this.bucketWidth());
    const i = ((no % BUCKETS) + BUCKETS) % BUCKETS;
    if (this.bucketNo[i] !== no) {
      this.bucketNo[i] = no;
      this.bucketFailures[i] = 0;
      this.bucketTotal[i] = 0;
    }
    this.bucketTotal[i]++;
    if (failure) this.bucketFailures[i]++;
  }

  private windowCounts(now: number): { failures: number; total: number } {
    const no = Math.floor(now / this.bucketWidth());
    let failures = 0;
    let total = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (this.bucketNo[i] > no - BUCKETS && this.bucketNo[i] <= no) {
        failures += this.bucketFailures[i];
        total += this.bucketTotal[i];
      }
    }
    return { failures, total };
  }

  private clearWindow(): void {
    this.bucketNo.fill(-1);
  }
}
