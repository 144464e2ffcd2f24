import { MemoryMessageStore } from '../../../../test/fakes/memory-message-store';
import { recordingEventSink } from '../../../../test/fakes/recording-event-sink';
import type { SessionEvent } from '../store-ports';
import { SentRecords } from './sent-records';

const sentEvent = (sessionId: string, id: string): SessionEvent => ({ event: 'message.sent', organizationId: 'org_1', sessionId, payload: { message: { id } } as never });

function setup() {
  const store = new MemoryMessageStore();
  const { sink, events } = recordingEventSink();
  const appended: number[] = [];
  const counted = { ...sink, withOutboxEach: ((named, write, wrote) => (appended.push(named.length), sink.withOutboxEach(named, write, wrote))) as typeof sink.withOutboxEach };
  return { store, events, appended, records: new SentRecords(store, counted) };
}

describe('SentRecords', () => {
  it('records the batches of several sessions handed over in one turn in one statement, each answered with its rows', async () => {
    const t = setup();
    for (const [id, sessionId] of [['msg_a1', 'ses_a'], ['msg_a2', 'ses_a'], ['msg_b1', 'ses_b']]) t.store.queue({ id, waMessageId: `W${id}`, sessionId });
    const [a, b] = await Promise.all([
      t.records.record('ses_a', [{ id: 'msg_a1', sentAt: 5, raw: null }, { id: 'msg_a2', sentAt: 6, raw: null }], [sentEvent('ses_a', 'msg_a1'), sentEvent('ses_a', 'msg_a2')]),
      t.records.record('ses_b', [{ id: 'msg_b1', sentAt: 7, raw: null }], [sentEvent('ses_b', 'msg_b1')]),
    ]);
    expect(t.store.recordedBatches).toEqual([3]);
    expect(t.appended).toEqual([3]);
    expect([...a.keys()].filter((id) => id.startsWith('msg_a'))).toEqual(['msg_a1', 'msg_a2']);
    expect(b.get('msg_b1')).toEqual({ heldAck: null });
    expect(t.events.map((e) => e.payload.message.id)).toEqual(['msg_a1', 'msg_a2', 'msg_b1']);
  });

  it('publishes only the events of the rows that moved', async () => {
    const t = setup();
    t.store.queue({ id: 'msg_1', waMessageId: 'W1' });
    t.store.queue({ id: 'msg_2', waMessageId: 'W2', status: 'failed' });
    const moved = await t.records.record('ses_1', [{ id: 'msg_1', sentAt: 5, raw: null }, { id: 'msg_2', sentAt: 5, raw: null }], [sentEvent('ses_1', 'msg_1'), sentEvent('ses_1', 'msg_2')]);
    expect([...moved.keys()]).toEqual(['msg_1']);
    expect(t.events.map((e) => e.payload.message.id)).toEqual(['msg_1']);
  });

  it('groups what is handed over while a statement is under way into the next one, and a failed statement fails each batch in it', async () => {
    const t = setup();
    for (const id of ['msg_1', 'msg_2', 'msg_3']) t.store.queue({ id, waMessageId: `W${id}`, sessionId: `ses_${id}` });
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    let calls = 0;
    t.store.beforeMarkSent = async () => {
      calls += 1;
      if (calls === 1) await slow;
      if (calls === 2) throw new Error('PostgreSQL went away');
    };
    const first = t.records.record('ses_msg_1', [{ id: 'msg_1', sentAt: 5, raw: null }], [sentEvent('ses_msg_1', 'msg_1')]);
    await new Promise((r) => setImmediate(r));
    const second = t.records.record('ses_msg_2', [{ id: 'msg_2', sentAt: 5, raw: null }], [sentEvent('ses_msg_2', 'msg_2')]);
    const third = t.records.record('ses_msg_3', [{ id: 'msg_3', sentAt: 5, raw: null }], [sentEvent('ses_msg_3', 'msg_3')]);
    await new Promise((r) => setImmediate(r));
    release();
    expect((await first).has('msg_1')).toBe(true);
    await expect(second).rejects.toThrow('PostgreSQL went away');
    await expect(third).rejects.toThrow('PostgreSQL went away');
    expect(t.store.recordedBatches).toEqual([1, 2]);
  });
});
