import type { Logger } from 'pino';
import type { EngineConnection } from '../engine/engine.interface';
import type { InboundEngineEvent, InboundEvents } from '../messages/inbound-events';
import { EventNotTakenError, SessionFencedError } from './session-errors';
import type { Timers } from './session-ports';

/**
 * An inbound event the gateway could not store (the database is down, a write failed) is tried again in place, with this
 * backoff, for as long as its socket is the current one and the lease is trusted; the events behind it wait, so their
 * order is kept. See docs/gateway.md, "Inbound events: durable before acknowledged".
 */
export const INBOUND_RETRY_BASE_MS = 200;
export const INBOUND_RETRY_MAX_MS = 5000;

export interface InboundIntakeDeps {
  inbound: InboundEvents;
  timers: Timers;
  log: Logger;
  /** whether the socket of `gen` is still the one the runner reads, with a lease it may trust */
  reading: (gen: number) => boolean;
}

/** How a SessionRunner stores the inbound events of its socket: durable before acknowledged, retried in place. */
export class InboundIntake {
  /** an event retried in place waits on these; retiring the socket wakes it so it gives the event back */
  private readonly retireWaiters = new Set<() => void>();

  constructor(private readonly deps: InboundIntakeDeps) {}

  /**
   * Stores one inbound event, trying again in place while it cannot be stored (database down, a failed write) and its
   * socket is still the current one with a trusted lease. The runner's serial queue makes the events behind it wait, so
   * nothing overtakes it. Once the socket is retired (closed, replaced, handed over) or the lease is in doubt, the event
   * is given back un-acknowledged (EventNotTakenError): the network delivers it again on the next connect. Storing is
   * idempotent (one row per session + waMessageId, its event in the same transaction), so a retry after a commit whose
   * answer was lost stores and announces nothing twice.
   */
  async store(gen: number, event: InboundEngineEvent, connection: EngineConnection | null): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.deps.inbound.handle(event, connection);
        return;
      } catch (err) {
        if (err instanceof SessionFencedError) throw err;
        const retryInMs = Math.min(INBOUND_RETRY_BASE_MS * 2 ** (attempt - 1), INBOUND_RETRY_MAX_MS);
        this.deps.log.warn({ err: String(err), event: event.type, attempt, retryInMs }, 'storing an inbound event failed; retrying it in place');
        if (!(await this.pauseWhileReading(gen, retryInMs))) {
          throw new EventNotTakenError(event.type, 'its socket was retired or the lease lost while its write was retried');
        }
      }
    }
  }

  /** The runner retired its socket: an event being retried stops waiting, and gives up. */
  socketRetired(): void {
    for (const wake of [...this.retireWaiters]) wake();
  }

  /** Waits `ms`, or less if the socket is retired meanwhile; true when the socket of `gen` is still read after it. */
  private async pauseWhileReading(gen: number, ms: number): Promise<boolean> {
    if (!this.deps.reading(gen)) return false;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.retireWaiters.delete(done);
        this.deps.timers.clearTimeout(timer);
        resolve();
      };
      const timer = this.deps.timers.setTimeout(done, ms);
      this.retireWaiters.add(done);
    });
    return this.deps.reading(gen);
  }
}
