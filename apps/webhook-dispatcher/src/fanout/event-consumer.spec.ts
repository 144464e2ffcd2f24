import { sortEntries } from './event-consumer';
import { EntryGroup, ReadAhead, spillOut } from './read-ahead';

const entry = (id: string, envelope: object | string): [string, string[]] => [id, ['envelope', typeof envelope === 'string' ? envelope : JSON.stringify(envelope)]];
const evt = (id: string, event = 'message.received') => ({ id, event, organizationId: 'org_1', sessionId: null, timestamp: 0, payload: {} });

describe('sortEntries', () => {
  it('sends recent entries the fresh way and late ones, test sends and takeovers the claimed way', () => {
    const { fresh, claimed, ackNow } = sortEntries(
      [entry('2000-0', evt('evt_new')), entry('999-0', evt('evt_late')), entry('2001-0', evt('evt_test', 'webhook.test')), entry('2002-0', 'not json')],
      false,
      1000,
    );
    expect([...fresh.keys()]).toEqual(['evt_new']);
    expect([...claimed.keys()]).toEqual(['evt_late', 'evt_test']);
    expect(ackNow).toEqual(['2002-0']);
    expect(sortEntries([entry('2000-0', evt('evt_new'))], true, 1000).claimed.has('evt_new')).toBe(true);
  });

  it('fans an event appended twice out once, acknowledging both entries with it', () => {
    const { fresh } = sortEntries([entry('2000-0', evt('evt_1')), entry('2000-1', evt('evt_1'))], false, 1000);
    expect(fresh.size).toBe(1);
    expect(fresh.get('evt_1')!.entryIds).toEqual(['2000-0', '2000-1']);
  });
});

describe('spillOut', () => {
  const group = (...ids: [string, string][]) =>
    new Map<string, EntryGroup>(ids.map(([id, org]) => [id, { envelope: { ...evt(id), organizationId: org } as never, entryIds: [`${id}-e`], text: '' }]));
  const readAhead = (over: Partial<Omit<ReadAhead, 'room'>> = {}): Omit<ReadAhead, 'room'> => ({
    held: () => 0,
    heldOf: () => 0,
    stalled: () => false,
    share: 2,
    max: 100,
    ...over,
  });

  it('keeps everything in memory while the read-ahead has room and no organization stalls, and a stalled one below its share', () => {
    const fresh = group(['e1', 'org_a'], ['e2', 'org_a'], ['e3', 'org_a']);
    expect(spillOut([fresh], readAhead({ heldOf: () => 50 }), false)).toEqual([]);
    expect(fresh.size).toBe(3);
    const small = group(['e4', 'org_a']);
    expect(spillOut([small], readAhead({ stalled: () => true, heldOf: () => 1 }), false)).toEqual([]);
  });

  it('reads past a stalled organization holding its share, keeping the others\' events in stream order', () => {
    const fresh = group(['e1', 'org_a'], ['e2', 'org_b'], ['e3', 'org_a']);
    const late = group(['e4', 'org_a']);
    const spilled = spillOut([fresh, late], readAhead({ stalled: (org) => org === 'org_a', heldOf: () => 2 }), false);
    expect(spilled.map((g) => g.envelope.id)).toEqual(['e1', 'e3', 'e4']);
    expect([...fresh.keys()]).toEqual(['e2']);
    expect(late.size).toBe(0);
  });

  it('while congested, spills an organization past its share (counting this batch) and no other', () => {
    const fresh = group(['e1', 'org_a'], ['e2', 'org_a'], ['e3', 'org_b'], ['e4', 'org_b'], ['e5', 'org_b']);
    const spilled = spillOut([fresh], readAhead({ heldOf: (org) => (org === 'org_a' ? 2 : 0) }), true);
    expect(spilled.map((g) => g.envelope.id)).toEqual(['e1', 'e2', 'e5']);
    expect([...fresh.keys()]).toEqual(['e3', 'e4']);
  });

  it('sends every event of an organization whose backlog is parked behind that backlog, whatever it holds', () => {
    const fresh = group(['e1', 'org_a'], ['e2', 'org_b'], ['e3', 'org_a']);
    const spilled = spillOut([fresh], readAhead(), false, (org) => org === 'org_a');
    expect(spilled.map((g) => g.envelope.id)).toEqual(['e1', 'e3']);
    expect([...fresh.keys()]).toEqual(['e2']);
  });

  it('reads past the late entries of a stalled organization below its share, not its fresh ones', () => {
    const fresh = group(['e1', 'org_a']);
    const late = group(['e2', 'org_a'], ['e3', 'org_b']);
    const spilled = spillOut([fresh, late], readAhead({ stalled: (org) => org === 'org_a' }), false, undefined, late);
    expect(spilled.map((g) => g.envelope.id)).toEqual(['e2']);
    expect([...fresh.keys()]).toEqual(['e1']);
    expect([...late.keys()]).toEqual(['e3']);
  });

  it('spills everything past the hard cap of attempts held', () => {
    const fresh = group(['e1', 'org_a'], ['e2', 'org_b']);
    expect(spillOut([fresh], readAhead({ held: () => 99 }), false).map((g) => g.envelope.id)).toEqual(['e2']);
  });
});
