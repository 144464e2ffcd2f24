import type { EventEnvelope } from '@app/contracts';
import type { EventPublisher } from '@app/events';
import type { SessionEvent, SessionEventSink, StoreOutbox, StoreTx } from '../store-ports';
import { GroupCommit, TURN_GROUPS } from '@app/infra';

/**
 * The runners' SessionEventSink over the EventPublisher, with the events they publish on their own (a status, a
 * connection) grouped per turn of the event loop: one outbox insert and one stream append for all of them
 * (GroupCommit), so hundreds of sessions starting at once (a failover) do not cost a statement each. Each publish still
 * resolves only once its event is in the outbox. Transactions and one-statement writes pass through unchanged.
 */
export class GroupedEventSink implements SessionEventSink {
  private readonly published: GroupCommit<EventEnvelope<object>, EventEnvelope<object>>;

  constructor(private readonly events: Pick<EventPublisher, 'build' | 'publishEnvelopes' | 'transact' | 'withOutbox' | 'withOutboxEach'>) {
    this.published = new GroupCommit(
      async (envelopes) => {
        await events.publishEnvelopes(envelopes);
        return envelopes;
      },
      { ...TURN_GROUPS, keyOf: (envelope) => envelope.id },
    );
  }

  publish(input: SessionEvent): Promise<EventEnvelope<object>> {
    // stamped when published, as the publisher would, not when the statement runs
    return this.published.submit(this.events.build(input));
  }

  transact<T>(work: (tx: StoreTx, publish: (input: SessionEvent) => void) => Promise<T>): Promise<T> {
    return this.events.transact(work as Parameters<EventPublisher['transact']>[0]) as Promise<T>;
  }

  withOutbox<T>(events: SessionEvent[], write: (outbox: StoreOutbox) => Promise<T>): Promise<T> {
    return this.events.withOutbox(events, write);
  }

  withOutboxEach<T>(events: SessionEvent[], write: (outbox: StoreOutbox) => Promise<T>, wrote: (result: T, index: number) => boolean): Promise<T> {
    return this.events.withOutboxEach(events, write, wrote);
  }
}
