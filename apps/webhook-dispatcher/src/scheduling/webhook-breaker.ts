export interface BreakerSettings {
  /** consecutive failures that open the breaker */
  failures: number;
  /** first open period; doubled after each failed probe */
  cooldownMs: number;
  /** the longest open period */
  maxCooldownMs: number;
}

/**
 * One webhook's circuit breaker in this dispatcher:
 *
 *   closed ──`failures` failures in a row──▶ open(until)
 *   open ──until passed, an attempt starts──▶ probing (that attempt is the probe; nothing else starts)
 *   probing ──probe succeeded──▶ closed
 *   probing ──probe failed──▶ open(twice the cooldown, at most maxCooldownMs)
 *   any ──an attempt succeeded──▶ closed
 *
 * Results of attempts that started before the breaker opened change nothing but a success (closing it).
 */
export type BreakerState =
  | { readonly kind: 'closed'; readonly failures: number }
  | { readonly kind: 'open'; readonly until: number; readonly cooldownMs: number }
  | { readonly kind: 'probing'; readonly cooldownMs: number };

export class WebhookBreaker {
  private current: BreakerState = { kind: 'closed', failures: 0 };

  constructor(private readonly settings: BreakerSettings) {}

  get state(): BreakerState {
    return this.current;
  }

  /** May an attempt start at `now`? When the open period is over, one may: the probe. */
  canStart(now: number): boolean {
    const s = this.current;
    return s.kind === 'closed' || (s.kind === 'open' && now >= s.until);
  }

  /** An attempt starts (canStart said yes): past the open period, it is the probe. */
  started(): void {
    const s = this.current;
    if (s.kind === 'open') this.current = { kind: 'probing', cooldownMs: s.cooldownMs };
  }

  succeeded(): void {
    this.current = { kind: 'closed', failures: 0 };
  }

  failed(now: number): void {
    const s = this.current;
    if (s.kind === 'closed') {
      const failures = s.failures + 1;
      this.current =
        failures >= this.settings.failures
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
}
