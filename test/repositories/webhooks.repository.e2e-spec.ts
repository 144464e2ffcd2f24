import type { DataSource } from 'typeorm';
import { RETRY_POLICY_DEFAULTS } from '@app/contracts';
import { newId, Webhook, WebhooksRepository } from '@app/database';
import { closeTestDataSource, testDataSource, testDb } from '../support/seed';
import { newOrganization } from './rows';

describe('WebhooksRepository (PostgreSQL)', () => {
  let db: DataSource;
  let webhooks: WebhooksRepository;
  let orgId: string;
  let otherOrgId: string;

  const newWebhook = (organizationId = orgId, over: Partial<Webhook> = {}): Promise<Webhook> => {
    const now = new Date();
    return webhooks.save({
      id: newId('whk'),
      organizationId,
      url: 'https://receiver.example.test/hook',
      events: ['message.received'],
      sessionId: null,
      active: true,
      customHeaders: { 'x-team': 'a' },
      retryPolicy: RETRY_POLICY_DEFAULTS,
      secretEncrypted: 'sealed',
      rateLimitPerSecond: null,
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
      kind: 'http',
      target: {},
      createdAt: now,
      updatedAt: now,
      ...over,
    });
  };

  beforeAll(async () => {
    db = await testDataSource();
    webhooks = new WebhooksRepository(await testDb());
    orgId = await newOrganization(db);
    otherOrgId = await newOrganization(db, 'Other');
  });
  afterAll(() => closeTestDataSource());

  it('scopes lookups and deletes by organization', async () => {
    const w = await newWebhook();
    expect((await webhooks.findInOrganization(orgId, w.id))?.url).toBe(w.url);
    expect(await webhooks.findInOrganization(otherOrgId, w.id)).toBeNull();
    expect(await webhooks.deleteInOrganization(otherOrgId, w.id)).toBe(false);
    expect(await webhooks.deleteInOrganization(orgId, w.id)).toBe(true);
    expect(await webhooks.findInOrganization(orgId, w.id)).toBeNull();
  });

  it('reads every column of the entity through its prepared statement, as the entity mapping reads it', async () => {
    const w = await newWebhook(orgId, { sessionId: null, customHeaders: { 'x-a': '1' } });
    const viaEntity = await db.getRepository(Webhook).findOneByOrFail({ id: w.id });
    // twice: the second call runs on a connection that has the statement prepared already
    for (let i = 0; i < 2; i++) expect(await webhooks.findInOrganization(orgId, w.id)).toEqual({ ...viaEntity });
  });

  it('saves the changes made to a loaded webhook', async () => {
    const loaded = (await webhooks.findInOrganization(orgId, (await newWebhook()).id))!;
    loaded.active = false;
    loaded.events = ['*'];
    await webhooks.save(loaded);
    expect(await webhooks.findInOrganization(orgId, loaded.id)).toMatchObject({ active: false, events: ['*'], url: loaded.url });
  });

  it('pages an organization’s webhooks', async () => {
    const org = await newOrganization(db);
    const ids = [(await newWebhook(org)).id, (await newWebhook(org)).id].sort();
    await newWebhook(otherOrgId);
    const first = await webhooks.page(org, { limit: 1 });
    const second = await webhooks.page(org, { limit: 1, cursor: first.nextCursor! });
    expect([...first.rows, ...second.rows].map((w) => w.id)).toEqual(ids);
    expect((await webhooks.page(org, { limit: 2 })).nextCursor).toBeNull();
  });

  it('reads routing rows as stored, missing headers and policy included', async () => {
    const w = await newWebhook(orgId, { active: false });
    const bare = newId('whk');
    await db.query(`INSERT INTO webhooks (id, organization_id, url, events, retry_policy, custom_headers) VALUES ($1, $2, 'http://x.test', '{}', '{"attempts":2}', 'null'::jsonb)`, [bare, orgId]);

    expect(await webhooks.routingById(w.id)).toEqual({
      id: w.id,
      organizationId: orgId,
      url: w.url,
      events: ['message.received'],
      sessionId: null,
      active: false,
      customHeaders: { 'x-team': 'a' },
      retryPolicy: RETRY_POLICY_DEFAULTS,
      secretEncrypted: 'sealed',
      rateLimitPerSecond: null,
      failingSince: null,
      disabledAt: null,
      // an HTTP webhook: the broker kinds' target (exchange, routing key, subject) is empty
      kind: 'http',
      target: {},
    });
    expect(await webhooks.routingById(bare)).toMatchObject({ customHeaders: null, retryPolicy: { attempts: 2 }, secretEncrypted: null, active: true, kind: 'http', target: {} });
    expect(await webhooks.routingById(newId('whk'))).toBeNull();
    expect((await webhooks.allRouting()).map((r) => r.id)).toEqual(expect.arrayContaining([w.id, bare]));
  });

  it('keeps the earliest failing_since across replicas, clears it on success, and disables only a webhook failing long enough', async () => {
    const w = await newWebhook();
    const t0 = Date.now() - 10_000;
    expect((await webhooks.markFailing(w.id, t0))!.getTime()).toBe(t0);
    // a second replica's later first failure keeps the earliest
    expect((await webhooks.markFailing(w.id, t0 + 5000))!.getTime()).toBe(t0);
    expect(await webhooks.markFailing(newId('whk'), t0)).toBeNull();
    // failing for 10 s: not long enough for a 60 s threshold, long enough for 5 s
    expect(await webhooks.disableIfFailing(w.id, 60_000, 'too soon')).toBeNull();
    const disabled = await webhooks.disableIfFailing(w.id, 5000, 'failing continuously');
    expect(disabled).toMatchObject({ id: w.id, organizationId: orgId, url: w.url });
    expect(disabled!.failingSince.getTime()).toBe(t0);
    expect(await webhooks.routingById(w.id)).toMatchObject({ active: false, disabledAt: disabled!.disabledAt });
    expect(await webhooks.findInOrganization(orgId, w.id)).toMatchObject({ disabledReason: 'failing continuously' });
    // already off: a second replica's disable does nothing
    expect(await webhooks.disableIfFailing(w.id, 5000, 'again')).toBeNull();

    const healthy = await newWebhook();
    await webhooks.markFailing(healthy.id, t0);
    await webhooks.clearFailing(healthy.id);
    expect(await webhooks.routingById(healthy.id)).toMatchObject({ failingSince: null, active: true });
    expect(await webhooks.disableIfFailing(healthy.id, 0, 'x')).toBeNull();
  });
});
