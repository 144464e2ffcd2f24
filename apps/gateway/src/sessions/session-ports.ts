import type { SessionQr } from '@app/contracts';
import type { AuthStateStore } from '../engine/engine.interface';

/**
 * What a SessionRunner needs from the outside world beyond the store (`../store-ports`): its lease, the QR board,
 * its auth state, its settings and timers. Each port has one production implementation (Redis, PostgreSQL) and fakes
 * in the unit specs.
 */

/** One gateway holds a session at a time; checked before every socket is opened. */
export interface SessionLeases {
  /** The fencing token taken with the lease (`takeToken`, only once the lease is ours), or null while another holds it. */
  acquire(sessionId: string, takeToken: () => Promise<number>): Promise<number | null>;
  release(sessionId: string): Promise<void>;
}

/** Where the API reads the QR a session currently shows. */
export interface QrBoard {
  show(sessionId: string, qr: SessionQr, ttlMs: number): Promise<void>;
  clear(sessionId: string): Promise<void>;
}

export type AuthStateFactory = (sessionId: string) => AuthStateStore;

export interface RunnerSettings {
  qrMaxRetries: number;
  qrTtlMs: number;
  reconnectMaxAttempts: number;
  reconnectBaseDelayMs: number;
  reconnectMaxDelayMs: number;
}

/** Timers are a side effect too: the specs drive them by hand. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};
