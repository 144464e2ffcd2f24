import { SESSION_DEFAULTS } from '@app/contracts';

/**
 * Sending like a person (issue 19 item 10): the backlog a session finds when it comes back after an outage (messages
 * accepted while it was not `working`) is sent at the session's `ratePerMin`, each gap drawn with jitter, not back to
 * back. The API's rate limiter already spreads what it accepts while the session is up; what it accepted during an
 * outage piled up, and a phone that fires thirty messages in one second looks like a bot to WhatsApp.
 *
 * A policy the sender consults before each send (`delayBefore`) and tells after it (`sent`): nothing else of the
 * sender changes, and a sender without one sends as before.
 */
export interface SendPacing {
  /** How long to wait before sending a row accepted at `createdAt` on `connection`, at `now` (0: send now). */
  delayBefore(row: { createdAt: number }, connection: object, now: number): Promise<number>;
  /** A send on `connection` was taken by the network at `now`. */
  sent(connection: object, now: number): void;
}

/** ±30 % around the mean gap: sends at a steady rhythm are as easy to spot as sends in a burst. */
export const PACING_JITTER = 0.3;

export interface BacklogPacerOptions {
  /** the session's ratePerMin, read once per connection (a PATCH applies from the next connection) */
  ratePerMin: () => Promise<number>;
  /** fraction of the mean gap each gap may differ by (default PACING_JITTER) */
  jitter?: number;
  /** uniform in [0, 1); injectable so a test can pin the draws */
  random?: () => number;
}

/** The mean gap between two paced sends at `ratePerMin`, and the bounds every drawn gap stays within. */
export function pacingBounds(ratePerMin: number, jitter = PACING_JITTER): { meanMs: number; minMs: number; maxMs: number } {
  const meanMs = 60_000 / Math.max(1, ratePerMin);
  return { meanMs, minMs: meanMs * (1 - jitter), maxMs: meanMs * (1 + jitter) };
}

/**
 * The backlog of a connection: rows accepted before the sender first saw that connection. The first of them goes at
 * once; each next one waits until a gap drawn in `pacingBounds` has passed since the previous send. Rows accepted
 * while the connection is up are not paced here (the API's limiter already paced their acceptance).
 */
export class BacklogPacer implements SendPacing {
  private connection: object | null = null;
  private openedAt = 0;
  private ratePerMin = 0;
  private lastSentAt: number | null = null;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(private readonly options: BacklogPacerOptions) {
    this.jitter = options.jitter ?? PACING_JITTER;
    this.random = options.random ?? Math.random;
  }

  async delayBefore(row: { createdAt: number }, connection: object, now: number): Promise<number> {
    if (connection !== this.connection) {
      this.connection = connection;
      this.openedAt = now;
      this.lastSentAt = null;
      this.ratePerMin = await this.options.ratePerMin();
    }
    if (row.createdAt >= this.openedAt || this.lastSentAt === null) return 0;
    const { meanMs } = pacingBounds(this.ratePerMin, this.jitter);
    const gap = meanMs * (1 + this.jitter * (2 * this.random() - 1));
    return Math.max(0, Math.ceil(this.lastSentAt + gap - now));
  }

  sent(connection: object, now: number): void {
    if (connection === this.connection) this.lastSentAt = now;
  }
}

/** The session's ratePerMin from its row; the contract's default when the row cannot be read (never blocks a send). */
export async function sessionRatePerMin(records: { find(sessionId: string): Promise<{ ratePerMin?: number } | null> }, sessionId: string): Promise<number> {
  try {
    return (await records.find(sessionId))?.ratePerMin ?? SESSION_DEFAULTS.ratePerMin;
  } catch {
    return SESSION_DEFAULTS.ratePerMin;
  }
}
