import type { Logger } from 'pino';
import type { SyncHistoryMode } from '@app/contracts';
import type { EngineEvent } from '../engine/engine.interface';
import type { ChatEvents } from '../messages/chat-events';
import { EventNotTakenError } from './session-errors';

/**
 * History batches waiting to be stored, at most: one more is not taken (EventNotTakenError) and stays with the network
 * (the simulator sends the next batch only after an ack; Baileys' inbound spool keeps it and hands it over again).
 */
export const MAX_PENDING_HISTORY_BATCHES = 4;

export interface HistoryQueueDeps {
  chatEvents: ChatEvents | null;
  log: Logger;
  /** whether the socket of `gen` is still the one the runner reads, with a lease it may trust */
  reading: (gen: number) => boolean;
  /** the session setting, read at each start: what history the runner stores */
  syncHistory: () => SyncHistoryMode;
}

/**
 * A session's history batches, stored one after another on a queue of their own beside the runner's event queue: a sync
 * of thousands of messages never delays a live message. A part of SessionRunner.
 */
export class HistoryQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  constructor(private readonly deps: HistoryQueueDeps) {}

  /**
   * At most MAX_PENDING_HISTORY_BATCHES wait; one more, or one from a socket no longer read, is not taken (the network
   * keeps it). A batch that cannot be stored is not taken either (the network delivers it again).
   */
  take(gen: number, event: Extract<EngineEvent, { type: 'history' }>): Promise<void> {
    const { chatEvents } = this.deps;
    if (!chatEvents) return Promise.resolve();
    if (this.pending >= MAX_PENDING_HISTORY_BATCHES) return Promise.reject(new EventNotTakenError(event.type, 'history batches are still being stored'));
    this.pending += 1;
    const stored = this.tail.then(async () => {
      if (!this.deps.reading(gen)) throw new EventNotTakenError(event.type, 'its socket was retired or the lease lost');
      await chatEvents.history(event, this.deps.syncHistory());
    });
    this.tail = stored.catch(() => undefined).finally(() => (this.pending -= 1));
    return stored.then(
      () => undefined,
      (err) => {
        if (!(err instanceof EventNotTakenError)) this.deps.log.warn({ err: String(err) }, 'storing a history batch failed; left with the network');
        throw err;
      },
    );
  }
}
