import pino from 'pino';
import { BacklogDrain, BacklogStreams } from './backlog-drain';

const envelope = (id: string) => ({ id, event: 'message.ack', organizationId: 'org_a', sessionId: null, timestamp: 0, payload: {} });
const entry = (id: string): [string, string[]] => [`${id}-0`, ['envelope', JSON.stringify(envelope(id))]];

function setup(over: { stalled?: boolean; heldOf?: number; fail?: boolean } = {}) {
  const acked: string[][] = [];
  const reads: number[] = [];
  const streams: BacklogStreams = {
    park: async () => undefined,
    backlogs: async () => ['org_a'],
    readBacklog: async (_c, _o, count) => {
      reads.push(count);
      return [entry('evt_1'), entry('evt_2')];
    },
    claimBacklog: async () => [],
    ackBacklog: async (_org, ids) => {
      acked.push([...ids]);
      return 0;
    },
  };
  const fannedOut: string[] = [];
  const spilled: string[] = [];
  const fail = async () => {
    throw new Error('statement failed');
  };
  const drain = new BacklogDrain(
    streams,
    { fanOut: over.fail ? fail : async (envs) => (fannedOut.push(...envs.map((e) => e.id)), envs.length) },
    { spill: over.fail ? fail : async (envs) => void spilled.push(...envs.map((e) => e.id)) },
    { held: () => 0, heldOf: () => over.heldOf ?? 0, stalled: () => over.stalled ?? false, share: 10, max: 100 },
    pino({ level: 'silent' }),
  );
  (drain as unknown as { running: boolean }).running = true;
  return { drain, acked, reads, fannedOut, spilled };
}

describe('BacklogDrain', () => {
  it('brings an organization that moves again back into memory, only what is left of its share, then acknowledges', async () => {
    const { drain, acked, reads, fannedOut, spilled } = setup({ heldOf: 7 });
    expect(await drain.pass()).toBe(true);
    expect(reads).toEqual([3]);
    expect(fannedOut).toEqual(['evt_1', 'evt_2']);
    expect(spilled).toEqual([]);
    expect(acked).toEqual([['evt_1-0', 'evt_2-0']]);
  });

  it('writes a stalled organization\'s backlog as due rows, then acknowledges', async () => {
    const { drain, acked, fannedOut, spilled } = setup({ stalled: true });
    await drain.pass();
    expect(spilled).toEqual(['evt_1', 'evt_2']);
    expect(fannedOut).toEqual([]);
    expect(acked).toEqual([['evt_1-0', 'evt_2-0']]);
  });

  it('leaves the entries pending when their rows could not be written', async () => {
    const { drain, acked } = setup({ stalled: true, fail: true });
    await drain.pass();
    expect(acked).toEqual([]);
  });

  it('parks an organization\'s events until its backlog stream is found empty', async () => {
    const { drain } = setup();
    await drain.park([{ envelope: envelope('evt_9') as never, entryIds: ['9-0'], text: '{}' }]);
    expect(drain.isParked('org_a')).toBe(true);
    (drain as unknown as { stream: BacklogStreams }).stream.readBacklog = async () => [];
    await drain.pass();
    expect(drain.isParked('org_a')).toBe(false);
  });
});
