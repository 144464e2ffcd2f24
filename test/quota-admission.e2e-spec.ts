import { DataSource } from 'typeorm';
import type { ApiConfig } from '@app/config';
import { dataSourceOptions, newId, OrganizationsRepository, SessionsRepository } from '@app/database';
import { SessionPlacement } from '@app/fleet';
import { OrganizationQuotas } from '../apps/api/src/limits/organization-quotas';
import { loadRunContext } from './support/run-context';
import { closeTestDataSource, seedOrganization, testDb } from './support/seed';

/**
 * A burst of session creates in one organization, against real PostgreSQL with a pool as small as the burst allows:
 * each create holds a pooled connection for its quota transaction while it waits for the organization's lock, so
 * anything the lock holder did on a second pooled connection (the placement's count) waited for a connection that
 * only the waiters held — the pool deadlocked and every create hung. Everything of a create runs on its transaction.
 */
describe('session admission under a burst (quota lock and placement on one connection)', () => {
  const POOL = 2;
  let db: DataSource;

  beforeAll(async () => {
    db = new DataSource(dataSourceOptions(loadRunContext().databaseUrl, { extra: { max: POOL } }));
    await db.initialize();
  });
  afterAll(async () => {
    await db.destroy();
    await closeTestDataSource();
  });

  it(`admits ${POOL * 4} concurrent creates through a pool of ${POOL} connections, none left waiting`, async () => {
    const org = await seedOrganization('Burst Inc');
    const config = { quotaDefaults: { sessions: 100, webhooks: 10, apiKeys: 10 }, QUOTA_FLEET_SHARE_PERCENT: 100 } as unknown as ApiConfig;
    const quotas = new OrganizationQuotas(config, new OrganizationsRepository(await testDb()));
    const sessions = new SessionsRepository(await testDb());
    const placement = new SessionPlacement(
      { live: async () => [{ id: 'gw-a', capacity: 100, sessionCount: 0, engine: 'sim', version: 't', startedAt: 0, lastHeartbeatAt: 0, alive: true, draining: false }] },
      sessions,
    );
    const create = (i: number) =>
      quotas.admitSession(
        org.id,
        (tx) => sessions.countInOrganization(org.id, tx),
        (tx) => placement.choose(tx),
        async (tx, { gatewayId }) => {
          const now = new Date();
          await sessions.create({ id: newId('ses'), organizationId: org.id, createdByUserId: null, gatewayId, label: `burst ${i}`, status: 'stopped', desiredState: 'running', phoneNumber: null, waJid: null, waLid: null, isAdminSession: false, autoRead: true, presenceTyping: false, ratePerMin: 20, ratePerHour: 200, createdAt: now, updatedAt: now, lastConnectedAt: null }, tx);
          return gatewayId;
        },
      );
    const placed = await Promise.race([
      Promise.all(Array.from({ length: POOL * 4 }, (_, i) => create(i))),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the creates hung: the pool deadlocked')), 15_000).unref()),
    ]);
    expect(placed).toEqual(Array(POOL * 4).fill('gw-a'));
    expect(await sessions.countInOrganization(org.id)).toBe(POOL * 4);
  });
});
