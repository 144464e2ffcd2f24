import { sortEntries } from './event-consumer';

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
