import type { DataSource } from 'typeorm';
import { FollowedChannelsRepository } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization, newSession } from './rows';

const NEWS = '120363000000000001@newsletter';
const WEATHER = '120363000000000002@newsletter';

describe('FollowedChannelsRepository (PostgreSQL)', () => {
  let db: DataSource;
  let channels: FollowedChannelsRepository;
  let orgId: string;

  beforeAll(async () => {
    db = await testDataSource();
    channels = new FollowedChannelsRepository(await testDb());
    orgId = await newOrganization(db);
  });
  afterAll(() => closeTestDataSource());

  it('keeps what the network said of each followed channel, oldest followed first; a bare sighting forgets nothing', async () => {
    const session = await newSession(db, orgId);
    await channels.remember(orgId, session.id, { jid: NEWS, name: 'News\0', description: 'notes', invite: 'NewsInvite', subscribers: 12 });
    // a channel seen only by its posts: listed, not named yet
    await channels.remember(orgId, session.id, { jid: WEATHER });
    expect(await channels.list(session.id)).toEqual([
      { jid: NEWS, name: 'News', description: 'notes', invite: 'NewsInvite', subscribers: 12, named: true },
      { jid: WEATHER, name: '', description: null, invite: null, subscribers: null, named: false },
    ]);
    // a later post of a named channel keeps its facts; a new answer replaces the ones it gives
    await channels.remember(orgId, session.id, { jid: NEWS });
    await channels.remember(orgId, session.id, { jid: NEWS, subscribers: 13, invite: null });
    await channels.remember(orgId, session.id, { jid: WEATHER, name: 'Weather' });
    expect(await channels.list(session.id)).toEqual([
      { jid: NEWS, name: 'News', description: 'notes', invite: 'NewsInvite', subscribers: 13, named: true },
      { jid: WEATHER, name: 'Weather', description: null, invite: null, subscribers: null, named: true },
    ]);
    await channels.forget(session.id, NEWS);
    expect((await channels.list(session.id)).map((c) => c.jid)).toEqual([WEATHER]);
    // another session's list is its own
    expect(await channels.list((await newSession(db, orgId)).id)).toEqual([]);
  });

  it('goes with its session', async () => {
    const session = await newSession(db, orgId);
    await channels.remember(orgId, session.id, { jid: NEWS, name: 'News' });
    await db.query('DELETE FROM sessions WHERE id = $1', [session.id]);
    expect(await channels.list(session.id)).toEqual([]);
  });
});
