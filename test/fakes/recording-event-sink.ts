import type { SessionEventSink } from '../../apps/gateway/src/store-ports';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- every event type's payload, read field by field
export type Payload = Record<string, any>;

/**
 * A SessionEventSink that records what a session publishes, with the commit rules of the real one: the events of a
 * transaction are seen only when it returns (one that throws publishes nothing), and a `withOutbox` statement's
 * events only when it changed something (`withOutboxEach`: each event only when its row did).
 */
export function recordingEventSink(): { sink: SessionEventSink; events: Array<{ event: string; payload: Payload }> } {
  const events: Array<{ event: string; payload: Payload }> = [];
  const sink: SessionEventSink = {
    publish: async (e) => void events.push({ event: e.event, payload: e.payload as Payload }),
    transact: async (work) => {
      const pending: Array<{ event: string; payload: Payload }> = [];
      const result = await work(undefined, (e) => void pending.push({ event: e.event, payload: e.payload as Payload }));
      events.push(...pending);
      return result;
    },
    withOutbox: async (named, write) => {
      const changed = await write(undefined);
      if (changed) events.push(...named.map((e) => ({ event: e.event, payload: e.payload as Payload })));
      return changed;
    },
    withOutboxEach: async (named, write, wrote) => {
      const result = await write(undefined);
      events.push(...named.filter((_e, i) => wrote(result, i)).map((e) => ({ event: e.event, payload: e.payload as Payload })));
      return result;
    },
  };
  return { sink, events };
}
