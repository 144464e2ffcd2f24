import type { EventEnvelope, EventPayloads, EventType } from '@app/contracts';
import type { SessionRuntimeRow } from '@app/database';
import type { PublishInput } from '@app/events';
import { SessionMovedPayload, SessionMover } from './session-mover';

function mover(over: { holder?: string; signalFails?: boolean } = {}) {
  const rows = new Map<string, SessionRuntimeRow & { gatewayId: string }>();
  const add = (id: string, gatewayId: string) =>
    rows.set(id, { id, organizationId: 'org_1', status: 'working', desiredState: 'running', phoneNumber: null, autoRead: true, presenceTyping: false, gatewayId });
  const published: EventEnvelope<SessionMovedPayload>[] = [];
  const signalled: string[] = [];
  let statements = 0;
  const counted: string[] = [];
  const m = new SessionMover({
    placement: { choose: async () => ({ gatewayId: over.holder ?? 'gw-b', fleetCapacity: 10 }) },
    sessions: {
      findRuntime: async (id) => rows.get(id) ?? null,
      moveManyToGateway: async (from, moves) => {
        statements += 1;
        const moved: string[] = [];
        for (const { id, to } of moves) {
          const row = rows.get(id);
          if (!row || row.gatewayId !== from) continue;
          row.gatewayId = to;
          moved.push(id);
        }
        return moved;
      },
    },
    signal: async (to) => {
      signalled.push(to);
      if (over.signalFails) throw new Error('gateway gone');
    },
    events: {
      build: <T extends EventType>(input: PublishInput<T>) => ({ id: 'evt', timestamp: 1, ...input }) as EventEnvelope<EventPayloads[T]>,
      publishEnvelopes: async (e: EventEnvelope<object>[]) => void published.push(...(e as EventEnvelope<SessionMovedPayload>[])),
    },
    metrics: { recordMove: (reason, from, to) => void counted.push(`${reason} ${from}->${to}`) },
    logger: { info: () => undefined, debug: () => undefined },
  });
  return {
    m,
    rows,
    add,
    published,
    signalled,
    counted,
    get statements() {
      return statements;
    },
  };
}

describe('SessionMover', () => {
  it('moves one session where placement says: the row, an event with the unchanged status and the reason, a count, a signal to the target', async () => {
    const t = mover();
    t.add('ses_1', 'gw-a');
    expect(await t.m.move('ses_1', 'gw-a', 'drain')).toBe('gw-b');
    expect(t.rows.get('ses_1')!.gatewayId).toBe('gw-b');
    expect(t.published).toEqual([
      expect.objectContaining({
        event: 'session.status',
        organizationId: 'org_1',
        sessionId: 'ses_1',
        payload: { status: 'working', previousStatus: 'working', reason: 'drain', fromGatewayId: 'gw-a', toGatewayId: 'gw-b' },
      }),
    ]);
    expect(t.counted).toEqual(['drain gw-a->gw-b']);
    expect(t.signalled).toEqual(['gw-b']);
  });

  it('a move another mover won is neither announced, counted nor signalled; a failed signal changes nothing', async () => {
    const t = mover({ signalFails: true });
    t.add('ses_1', 'gw-other');
    expect(await t.m.move('ses_1', 'gw-a', 'drain')).toBeNull();
    expect(await t.m.move('ses_unknown', 'gw-a', 'drain')).toBeNull();
    expect([t.published, t.counted, t.signalled]).toEqual([[], [], []]);

    t.add('ses_2', 'gw-a');
    await expect(t.m.move('ses_2', 'gw-a', 'drain')).resolves.toBe('gw-b');
    expect(t.rows.get('ses_2')!.gatewayId).toBe('gw-b');
  });

  it('a rebalance also signals the live gateway it took the sessions from, so it lets go at once; a failover does not', async () => {
    const t = mover();
    t.add('ses_1', 'gw-full');
    t.add('ses_2', 'gw-full');
    await t.m.moveAll('gw-full', [...t.rows.values()], 'rebalance', async () => 'gw-empty');
    expect(t.signalled.sort()).toEqual(['gw-empty', 'gw-full']);

    const f = mover();
    f.add('ses_1', 'gw-dead');
    await f.m.moveAll('gw-dead', [...f.rows.values()], 'failover', async () => 'gw-b');
    expect(f.signalled).toEqual(['gw-b']);
  });

  it('moves many in batched statements, each to its own target, telling the placement of each lost move; one signal per target; none after shutdown', async () => {
    const t = mover();
    for (let i = 0; i < 1200; i++) t.add(`ses_${i}`, 'gw-dead');
    t.rows.get('ses_3')!.gatewayId = 'gw-thief';
    const targets = ['gw-b', 'gw-c'];
    let n = 0;
    const lost: string[] = [];
    const moved = await t.m.moveAll('gw-dead', [...t.rows.values()], 'failover', async () => targets[n++ % 2], (to) => lost.push(to));
    expect(moved).toHaveLength(1199);
    expect(lost).toHaveLength(1);
    expect(t.statements).toBe(3);
    expect(t.published).toHaveLength(1199);
    for (const e of t.published) expect(t.rows.get(e.sessionId!)!.gatewayId).toBe(e.payload.toGatewayId);
    expect(t.counted).toHaveLength(1199);
    expect(t.signalled.sort()).toEqual(['gw-b', 'gw-c']);

    t.m.beforeApplicationShutdown();
    t.add('ses_late', 'gw-dead');
    await t.m.move('ses_late', 'gw-dead', 'failover');
    expect(t.published).toHaveLength(1200);
    expect(t.signalled).toHaveLength(2);
  });
});
