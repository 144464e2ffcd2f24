import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import type { EventSpool, SpoolEntry } from '@app/messaging';
import type { EngineEvent, EngineEventSink } from '../engine.interface';
import { describe } from './connection-errors';
import { decodeSpooledEvent, encodeSpooledEvent } from './spooled-event';

/**
 * How one Baileys connection hands the network's events to the gateway (docs/baileys-engine.md, "The inbound spool"):
 * spooled first, then handed over in the order Baileys emitted them once durable, and removed from the spool only when
 * the gateway took them. What the gateway did not take is handed over again: after a growing delay while the socket
 * stays open, and by the replay right as a socket opens. A part of BaileysConnection.
 */

/** Events that are the connection's own state, not something the network told: never spooled. */
const UNSPOOLED: ReadonlySet<EngineEvent['type']> = new Set(['qr', 'open', 'close']);
const MAX_SPOOL_RETRY_MS = 30_000;

export interface InboundHandoverDeps {
  sessionId: string;
  spool: EventSpool | null;
  spoolRetryMs: number;
  /** the engine's set of spool entries in the gateway's hands, shared by all its connections */
  inFlight: Set<string>;
  onEvent: EngineEventSink;
  logger: Logger;
  /** whether the socket is open and not closing: a retry is scheduled only then */
  isOpen: () => boolean;
  /** whether the connection has closed: a replay stops there */
  isClosed: () => boolean;
  /** whether the event names a LID the connection can resolve to a number, and the event so resolved */
  needsNumbers: (event: EngineEvent) => boolean;
  withNumbers: (event: EngineEvent) => Promise<EngineEvent>;
}

export class InboundHandover {
  /** tags what this connection spools, with `spooled` (its sequence): a replay leaves what its hand-over has not reached */
  private readonly origin = randomUUID();
  private spooled = 0;
  /** a replay scheduled after the gateway did not take an event while the socket stays open */
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelayMs = 0;
  /** events reach the gateway in the order Baileys emitted them: each waits for its spool write and the ones before */
  private handovers: Promise<void> = Promise.resolve();
  private handoversPending = 0;
  /** what an entry's taking resolves (emit's promise), for a replay of the same entry that gets it taken */
  private readonly takenWaiters = new WeakMap<SpoolEntry, () => void>();

  constructor(private readonly deps: InboundHandoverDeps) {}

  /**
   * Spool first (the write is queued at once, inside Baileys' callback), then hand over in order once it is durable;
   * the spooled copy is removed only when the gateway has taken the event. An event with nothing before it and
   * nothing to spool (qr, open, close without a spool write pending) is handed over at once.
   *
   * Resolves once WhatsApp may be told the event arrived (its message's receipt, held-receipts.ts): when the spooled
   * copy is in Redis, which outlives this process, or when the gateway took the event. A copy only in this process's
   * memory (Redis away) does not count. Never rejects; an event neither spooled nor taken before the connection closes
   * never resolves.
   */
  emit(event: EngineEvent): Promise<void> {
    const spool = this.deps.spool;
    const entry = spool && !UNSPOOLED.has(event.type) ? spool.append(this.deps.sessionId, encodeSpooledEvent(this.origin, ++this.spooled, event)) : null;
    let safe!: () => void;
    const acknowledgeable = new Promise<void>((resolve) => (safe = resolve));
    if (entry) {
      this.takenWaiters.set(entry, safe);
      void entry.durable.then((ok) => ok && entry.medium === 'redis' && safe());
    }
    // a LID is resolved after the spool write (the spool keeps the event as the network gave it) and before hand-over
    const resolve = this.deps.needsNumbers(event);
    if (!entry && !this.handoversPending && !resolve) {
      this.handOver(event, null, safe);
      return acknowledgeable;
    }
    this.enqueue(async () => {
      if (entry) await entry.durable;
      this.handOver(resolve ? await this.deps.withNumbers(event) : event, entry, safe);
    });
    return acknowledgeable;
  }

  /**
   * Right as the socket opens (and again after the gateway did not take something, see scheduleRetry): what is spooled
   * for the session and in nobody's hands (left by an earlier connection here, by a gateway that died or handed the
   * session over, or not taken before) is handed over again, after `open`. The session's (session, waMessageId) record
   * drops what was already stored.
   */
  replay(): void {
    const spool = this.deps.spool;
    if (!spool) return;
    // what this connection spools from now on is handed over by the steps after this one
    const reached = this.spooled;
    this.enqueue(async () => {
      for (const { entry, payload } of await spool.pending(this.deps.sessionId)) {
        if (this.deps.isClosed()) return;
        if (this.deps.inFlight.has(`${this.deps.sessionId} ${entry.id}`)) continue;
        let spooled: ReturnType<typeof decodeSpooledEvent>;
        try {
          spooled = decodeSpooledEvent(payload);
        } catch (err) {
          this.deps.logger.error({ err: describe(err), entry: entry.id }, 'unreadable inbound spool entry dropped');
          spool.remove(entry);
          continue;
        }
        if (spooled.origin === this.origin && spooled.seq > reached) continue;
        // the same entry as this process spooled it (Redis away, in memory): its taking is what lets its receipt go
        this.handOver(this.deps.needsNumbers(spooled.event) ? await this.deps.withNumbers(spooled.event) : spooled.event, entry, this.takenWaiters.get(entry));
      }
    });
  }

  /** The connection closed: no retry follows (the next connect replays). */
  stop(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private enqueue(step: () => Promise<void>): void {
    this.handoversPending += 1;
    this.handovers = this.handovers
      .then(step)
      .catch((err) => this.deps.logger.error({ err: describe(err) }, 'handing an engine event over failed'))
      .finally(() => (this.handoversPending -= 1));
  }

  private handOver(event: EngineEvent, entry: SpoolEntry | null, onTaken?: () => void): void {
    const flight = entry?.id ? `${this.deps.sessionId} ${entry.id}` : null;
    if (flight) this.deps.inFlight.add(flight);
    let taken: Promise<void>;
    try {
      // a sink that answers synchronously (older callers) counts as taken once it returned
      taken = Promise.resolve(this.deps.onEvent(event));
    } catch (err) {
      taken = Promise.reject(err);
    }
    taken.then(
      () => {
        if (flight) this.deps.inFlight.delete(flight);
        onTaken?.();
        if (entry) {
          this.deps.spool!.remove(entry);
          this.retryDelayMs = 0;
        }
      },
      (err) => {
        if (flight) this.deps.inFlight.delete(flight);
        if (!entry?.id) {
          this.deps.logger.error({ err: describe(err), event: event.type }, 'engine event handler failed');
          return;
        }
        this.deps.logger.warn({ err: describe(err), event: event.type }, 'event not taken; it stays in the inbound spool');
        this.scheduleRetry();
      },
    );
  }

  /**
   * The gateway did not take a spooled event and the socket stays open (PostgreSQL down, say): the spool is handed over
   * again after a delay that doubles while it keeps failing, so what waits is stored once the gateway can take it,
   * not only on the next connect. A connection that closed stops retrying (the next connect replays).
   */
  private scheduleRetry(): void {
    if (this.retryTimer || !this.deps.isOpen()) return;
    this.retryDelayMs = Math.min(MAX_SPOOL_RETRY_MS, this.retryDelayMs ? this.retryDelayMs * 2 : this.deps.spoolRetryMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.deps.isOpen()) this.replay();
    }, this.retryDelayMs);
  }
}
