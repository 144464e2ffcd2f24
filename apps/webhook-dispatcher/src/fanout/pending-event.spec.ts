import { eventsCompletedBy } from '../delivery/event-rows';
import { PendingEvent } from './pending-event';

describe('PendingEvent', () => {
  it('settles ok once every row is written, and only once', () => {
    const settled: boolean[] = [];
    const e = new PendingEvent('evt_1', 3, (ok) => settled.push(ok));
    e.written(2);
    expect(settled).toEqual([]);
    e.written(1);
    e.fail();
    expect(settled).toEqual([true]);
  });

  it('settles failed at the first row that cannot be written', () => {
    const settled: boolean[] = [];
    const e = new PendingEvent('evt_1', 2, (ok) => settled.push(ok));
    e.fail();
    e.written(2);
    expect(settled).toEqual([false]);
  });
});

describe('eventsCompletedBy', () => {
  it('marks the events whose remaining rows are all in the statement, never a failed one', () => {
    const done = new PendingEvent('evt_done', 2, () => undefined);
    done.written(1);
    const partial = new PendingEvent('evt_partial', 3, () => undefined);
    const none = new PendingEvent('evt_none', 0, () => undefined);
    const failed = new PendingEvent('evt_failed', 1, () => undefined);
    failed.fail();
    const marked = eventsCompletedBy(new Map([[done, 1], [partial, 2], [none, 0], [failed, 1]]));
    expect(marked.map((e) => e.eventId)).toEqual(['evt_done', 'evt_none']);
  });
});
