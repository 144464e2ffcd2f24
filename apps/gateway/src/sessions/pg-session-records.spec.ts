import type { GroupsRepository, SessionsRepository } from '@app/database';
import { PgSessionRecords } from './pg-session-records';
import { GroupedEventSink } from './grouped-event-sink';

describe('PgSessionRecords (grouped across runners)', () => {
  function records() {
    const calls: string[] = [];
    const sessions = {
      findRuntimeMany: async (ids: string[]) => {
        calls.push(`find ${ids.join(' ')}`);
        return new Map(ids.filter((id) => id !== 'ses_gone').map((id) => [id, { id, organizationId: 'org', status: 'starting', desiredState: 'running' }]));
      },
      patchRuntimeMany: async (writes: Array<{ id: string; patch: object; fence: { leaseToken: number | null } }>) => {
        calls.push(`write ${writes.map((w) => `${w.id}:${Object.keys(w.patch).join('+')}@${w.fence.leaseToken}`).join(' ')}`);
        return new Set(writes.filter((w) => w.fence.leaseToken !== 1).map((w) => w.id));
      },
      takeLeaseTokens: async (ids: string[]) => {
        calls.push(`tokens ${ids.join(' ')}`);
        return new Map(ids.filter((id) => id !== 'ses_gone').map((id, i) => [id, 10 + i]));
      },
    } as unknown as SessionsRepository;
    return { calls, records: new PgSessionRecords('gw-a', sessions, {} as GroupsRepository) };
  }

  it('reads the rows its runners ask for in the same turn with one statement, each runner getting its own', async () => {
    const { calls, records: r } = records();
    const [a, b, gone] = await Promise.all([r.find('ses_a'), r.find('ses_b'), r.find('ses_gone')]);
    expect(calls).toEqual(['find ses_a ses_b ses_gone']);
    expect([a?.id, b?.id, gone]).toEqual(['ses_a', 'ses_b', null]);
  });

  it('writes the rows of a turn in one statement per patch shape, answering each writer whether its own row was written', async () => {
    const { calls, records: r } = records();
    const written = await Promise.all([
      r.update('ses_a', { status: 'starting', lastReason: 'start_requested' }, null),
      r.update('ses_b', { status: 'working', lastReason: 'connected' }, 7),
      r.update('ses_c', { status: 'starting', lastReason: 'start_requested' }, 1),
      r.update('ses_d', { status: 'working', lastReason: 'connected', lastConnectedAt: new Date(0) }, 8),
    ]);
    expect(calls).toEqual([
      'write ses_a:status+lastReason@null ses_b:status+lastReason@7 ses_c:status+lastReason@1',
      'write ses_d:status+lastReason+lastConnectedAt@8',
    ]);
    // ses_c's fence refused it (the fake refuses token 1)
    expect(written).toEqual([true, true, false, true]);
  });

  it('takes the lease tokens of a turn in one statement; a session that is gone fails only its own caller', async () => {
    const { calls, records: r } = records();
    const [a, gone] = await Promise.allSettled([r.takeLeaseToken('ses_a'), r.takeLeaseToken('ses_gone')]);
    expect(calls).toEqual(['tokens ses_a ses_gone']);
    expect(a).toEqual({ status: 'fulfilled', value: 10 });
    expect(gone.status).toBe('rejected');
  });
});

describe('GroupedEventSink', () => {
  it('puts the events its runners publish in one turn in one outbox write, each publish resolving once written', async () => {
    const written: string[][] = [];
    let n = 0;
    const sink = new GroupedEventSink({
      build: ((input: { event: string; sessionId: string }) => ({ id: `evt_${++n}`, event: input.event, sessionId: input.sessionId })) as never,
      publishEnvelopes: async (envelopes) => void written.push(envelopes.map((e) => `${e.id} ${e.sessionId}`)),
      transact: (async () => undefined) as never,
      withOutbox: (async () => undefined) as never,
      withOutboxEach: (async () => undefined) as never,
    });
    const event = (sessionId: string) => ({ event: 'session.connected', organizationId: 'org', sessionId, payload: {} }) as never;
    const published = await Promise.all([sink.publish(event('ses_a')), sink.publish(event('ses_b'))]);
    expect(written).toEqual([['evt_1 ses_a', 'evt_2 ses_b']]);
    expect(published.map((e) => e.id)).toEqual(['evt_1', 'evt_2']);
  });
});
