import type { AckStatus } from '@app/contracts';
import type { SessionEvent, SessionEventSink } from '../store-ports';
import { GroupCommit, TURN_GROUPS } from '@app/infra';
import type { MessageStore, SentRecord } from './message-store';

/** One sender's sends to record, each with the message.sent announcing it (the i-th event is the i-th send's). */
interface SentBatch {
  sessionId: string;
  sends: ReadonlyArray<SentRecord>;
  events: SessionEvent[];
}

/** The rows that moved, by id, each with the ack a receipt kept on it while it was queued (`markSentMany`). */
export type SentOutcome = Map<string, { heldAck: AckStatus | null }>;

/**
 * The records of the sends the network took, grouped across the sessions of a gateway: the batches every sender hands
 * over in the same turn of the event loop, or while the statement before is under way, go as one `markSentMany` with
 * every message.sent outbox row in it and one stream append of the events of the rows that moved (GroupCommit). A
 * sender still records its own sends in order (one batch of it at a time: keyed by session); what is grouped here is
 * only the round trips, which were most of the gateway's CPU per message when each session paid its own.
 */
export class SentRecords {
  private readonly batches: GroupCommit<SentBatch, SentOutcome>;

  constructor(
    store: Pick<MessageStore, 'markSentMany'>,
    events: Pick<SessionEventSink, 'withOutboxEach'>,
    /** statements under way at once at most: with one, whatever arrives during it is grouped into the next */
    maxInFlight = 1,
  ) {
    this.batches = new GroupCommit(
      async (batches) => {
        const sends = batches.flatMap((b) => b.sends);
        const moved = await events.withOutboxEach(
          batches.flatMap((b) => b.events),
          (outbox) => store.markSentMany(sends, outbox),
          (rows, i) => rows.has(sends[i].id),
        );
        return batches.map(() => moved);
      },
      { ...TURN_GROUPS, keyOf: (batch) => batch.sessionId, maxInFlight },
    );
  }

  /** Records `sends` queued → sent, each with its event (`events[i]` announces `sends[i]`); answers the rows that moved. */
  record(sessionId: string, sends: ReadonlyArray<SentRecord>, events: SessionEvent[]): Promise<SentOutcome> {
    return this.batches.submit({ sessionId, sends, events });
  }
}
