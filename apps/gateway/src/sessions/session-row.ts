import type { Logger } from 'pino';
import type { SessionRecordPatch, SessionRecords } from '../store-ports';
import type { Timers } from './session-ports';

/**
 * The writes of one runner to its session row, fenced by the lease token it last took. A write that fails (the database
 * is down) does not stop the status machine (a close must still lead to a reconnect): its patch is kept, merged into
 * the next write, and written by a retry timer meanwhile. A refused write (fenced) ends the runner's hold (`fenced`).
 * A part of SessionRunner.
 */

/** Backoff of the session-row write that failed (database down) and waits to be written again. */
const ROW_RETRY_BASE_MS = 500;
const ROW_RETRY_MAX_MS = 10_000;

export interface SessionRowDeps {
  sessionId: string;
  records: SessionRecords;
  timers: Timers;
  log: Logger;
  /** runs a task in the runner's serial queue */
  serial: (task: () => Promise<void>) => Promise<void>;
  /** the row refused a write: another gateway holds the session now */
  fenced: () => Promise<never>;
}

export class SessionRow {
  /**
   * The fencing token of the last lease the runner took; every write carries it. Kept after the lease is released
   * or lost: once another gateway takes the lease (a newer token), this runner's writes must be refused.
   */
  leaseToken: number | null = null;
  /** the patch a failed write left behind (database down): written with the next write, or by its retry timer */
  private unwritten: SessionRecordPatch = {};
  private retryTimer: unknown = null;
  private retries = 0;

  constructor(private readonly deps: SessionRowDeps) {}

  async write(patch: SessionRecordPatch): Promise<void> {
    const merged = { ...this.unwritten, ...patch };
    let accepted: boolean;
    try {
      accepted = await this.deps.records.update(this.deps.sessionId, merged, this.leaseToken);
    } catch (err) {
      this.unwritten = merged;
      this.deps.log.warn({ err: String(err), patch: Object.keys(merged) }, 'writing the session row failed; kept for the next write');
      this.scheduleRetry();
      return;
    }
    this.unwritten = {};
    this.retries = 0;
    if (!accepted) await this.deps.fenced();
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== null) return;
    const delay = Math.min(ROW_RETRY_BASE_MS * 2 ** this.retries, ROW_RETRY_MAX_MS);
    this.retries += 1;
    this.retryTimer = this.deps.timers.setTimeout(() => {
      this.retryTimer = null;
      void this.deps.serial(async () => {
        // also after a stop or a hand-off (their `stopped` must land): the lease token fences it, so a row another
        // gateway holds by now refuses the write
        if (Object.keys(this.unwritten).length > 0) await this.write({});
      }).catch((err) => this.deps.log.warn({ err: String(err) }, 'writing the session row again failed'));
    }, delay);
  }
}
