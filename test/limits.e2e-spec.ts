import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { newApiKeyToken } from '@app/crypto';
import { OrganizationsRepository, Webhook } from '@app/database';
import { createRedis, LoginBackoff, RedisKeys } from '@app/redis';
import { startApi } from './support/api-app';
import { loadRunContext } from './support/run-context';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, testDataSource } from './support/seed';

const ctx = loadRunContext();
type Api = Awaited<ReturnType<typeof startApi>>;

/** Each strict API counts under its own Redis prefix, so the other suites' traffic from 127.0.0.1 is not in its windows. */
const strictApi = (name: string, overrides: Record<string, string>) => startApi({ REDIS_KEY_PREFIX: `${ctx.redisPrefix}:${name}`, ...overrides });

describe('quotas per organization (issue 12 item 3)', () => {
  let api: Api;
  let db: DataSource;
  let organizations: OrganizationsRepository;
  let acme: SeededOrg;
  let globex: SeededOrg;

  beforeAll(async () => {
    api = await startApi();
    db = await testDataSource();
    organizations = new OrganizationsRepository(db);
    acme = await seedOrganization('Acme');
    globex = await seedOrganization('Globex');
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
  });

  const createWebhook = (org: SeededOrg, i: number) => api.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).send({ url: `https://example.com/hook/${i}` });
  const webhookCount = (org: SeededOrg) => db.getRepository(Webhook).count({ where: { organizationId: org.id } });

  it('refuses a webhook over the organization’s own quota with 403 forbidden and details.quota, writing nothing', async () => {
    expect(await organizations.setQuotas(acme.id, { webhooks: 2 })).toEqual({ sessions: null, webhooks: 2, apiKeys: null });
    expect((await createWebhook(acme, 1)).status).toBe(201);
    expect((await createWebhook(acme, 2)).status).toBe(201);
    const res = await createWebhook(acme, 3);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', details: { quota: { resource: 'webhooks', limit: 2, used: 2, rule: 'quota' } } });
    expect(await webhookCount(acme)).toBe(2);
    // another organization keeps the default
    expect((await createWebhook(globex, 1)).status).toBe(201);
  });

  it('gives the last slots to exactly as many concurrent creates as there is room for', async () => {
    await organizations.setQuotas(globex.id, { webhooks: 4 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => createWebhook(globex, 100 + i)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 403).every((r) => r.body.error.details.quota.resource === 'webhooks')).toBe(true);
    expect(await webhookCount(globex)).toBe(4);
  });

  it('a raised quota takes effect at once, and `default` puts it back', async () => {
    await organizations.setQuotas(acme.id, { webhooks: 3 });
    expect((await createWebhook(acme, 4)).status).toBe(201);
    expect(await organizations.setQuotas(acme.id, { webhooks: null })).toEqual({ sessions: null, webhooks: null, apiKeys: null });
    expect((await createWebhook(acme, 5)).status).toBe(201);
  });

  it('a session over quota is 403 with details.quota, distinct from the 503 of a fleet with no room', async () => {
    await organizations.setQuotas(acme.id, { sessions: 0 });
    const over = await api.http().post('/api/v1/sessions').set(bearer(acme.adminKey)).send({ label: 'one too many' });
    expect(over.status).toBe(403);
    expect(over.body.error.details.quota).toEqual({ resource: 'sessions', limit: 0, used: 0, rule: 'quota' });
    // within quota, but no gateway is alive in this suite: the fleet's answer
    const noFleet = await api.http().post('/api/v1/sessions').set(bearer(globex.adminKey)).send({ label: 'no room' });
    expect(noFleet.status).toBe(503);
    expect(noFleet.body.error.code).toBe('gateway_unavailable');
  });
});

describe('rate limits (issue 12 item 4)', () => {
  let org: SeededOrg;
  beforeAll(async () => {
    org = await seedOrganization('Limited');
  });
  afterAll(() => closeTestDataSource());

  it('refuses a credential over its per-minute limit with 429, Retry-After and the envelope; other credentials go on', async () => {
    const api = await strictApi('credential', { RATE_LIMIT_CREDENTIAL_PER_MIN: '3' });
    try {
      const key = await org.apiKey(['sessions:read']);
      for (let i = 0; i < 3; i++) expect((await api.http().get('/api/v1/sessions').set(bearer(key.token))).status).toBe(200);
      const refused = await api.http().get('/api/v1/sessions').set(bearer(key.token));
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'rate_limited', details: { limit: 'credential' } });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect((await api.http().get('/api/v1/sessions').set(bearer(org.users.viewer.token))).status).toBe(200);

      // refused before the credential is looked up: a key that does not exist is told 429, not 401
      const unknown = newApiKeyToken();
      for (let i = 0; i < 3; i++) expect((await api.http().get('/api/v1/sessions').set(bearer(unknown))).status).toBe(401);
      expect((await api.http().get('/api/v1/sessions').set(bearer(unknown))).status).toBe(429);

      const metrics = await api.ops().get('/metrics');
      expect(metrics.text).toMatch(/gw_api_rate_limited_total\{[^}]*limit="credential"[^}]*\} 2/);
    } finally {
      await api.app.close();
    }
  });

  it('refuses an IP over its per-minute limit on every route but health (metrics are on the ops port)', async () => {
    const api = await strictApi('ip', { RATE_LIMIT_IP_PER_MIN: '4' });
    try {
      for (let i = 0; i < 4; i++) expect((await api.http().get('/api/v1/sessions')).status).toBe(401);
      const refused = await api.http().get('/api/v1/webhooks').set(bearer(org.adminKey));
      expect(refused.status).toBe(429);
      expect(refused.body.error.details.limit).toBe('ip');
      expect(refused.headers['retry-after']).toBeDefined();
      expect((await api.http().get('/healthz')).status).toBe(200);
      expect((await api.ops().get('/metrics')).text).toMatch(/gw_api_rate_limited_total\{[^}]*limit="ip"[^}]*\} 1/);
    } finally {
      await api.app.close();
    }
  });

  it('backs off an account after its free failed logins, even for the right password, and forgets on success', async () => {
    const api = await strictApi('login', { LOGIN_FREE_FAILURES_PER_ACCOUNT: '2', LOGIN_BACKOFF_BASE_MS: '60000', LOGIN_RATE_IP_PER_MIN: '10' });
    const login = (email: string, password: string) => api.http().post('/api/v1/auth/login').send({ email, password });
    try {
      const { owner, admin } = org.users;
      // a success in between forgets the failures
      expect((await login(admin.email, 'wrong-password')).status).toBe(401);
      expect((await login(admin.email, admin.password)).status).toBe(200);
      expect((await login(admin.email, 'wrong-password')).status).toBe(401);
      expect((await login(admin.email, 'wrong-password')).status).toBe(401);

      for (let i = 0; i < 3; i++) expect((await login(owner.email, 'wrong-password')).status).toBe(401);
      const blocked = await login(owner.email.toUpperCase(), owner.password);
      expect(blocked.status).toBe(429);
      expect(blocked.body.error.details.limit).toBe('login_account');
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(50);
      // the account's backoff is its own: another account logs in from the same IP
      expect((await login(org.users.member.email, org.users.member.password)).status).toBe(200);

      // 8 attempts were counted against this IP (the blocked one was refused before counting); the limit is 10
      expect((await login(org.users.viewer.email, org.users.viewer.password)).status).toBe(200);
      expect((await login(org.users.viewer.email, org.users.viewer.password)).status).toBe(200);
      const flood = await login(org.users.viewer.email, org.users.viewer.password);
      expect(flood.status).toBe(429);
      expect(flood.body.error.details.limit).toBe('login_ip');
    } finally {
      await api.app.close();
    }
  });

  it('failed logins back off the account only for the addresses that failed; a spread past the ceiling backs it off everywhere', async () => {
    const api = await strictApi('login-pairs', {
      LOGIN_FREE_FAILURES_PER_ACCOUNT: '2',
      LOGIN_ACCOUNT_CEILING_FAILURES: '6',
      LOGIN_FREE_FAILURES_PER_IP: '100',
      LOGIN_BACKOFF_BASE_MS: '60000',
      LOGIN_RATE_IP_PER_MIN: '100',
    });
    try {
      await api.app.listen(0, '127.0.0.1');
      const port = (api.app.getHttpServer().address() as AddressInfo).port;
      // each caller connects from an address of its own (Linux routes all of 127/8 to loopback): the API sees it as req.ip
      const loginFrom = (source: string, email: string, password: string) => loginOverLoopback(port, source, { email, password });
      const { owner } = org.users;
      const stranger = '127.0.0.3';
      for (let i = 0; i < 3; i++) expect((await loginFrom(stranger, owner.email, 'guess')).status).toBe(401);
      const strangerBlocked = await loginFrom(stranger, owner.email, owner.password);
      expect(strangerBlocked.status).toBe(429);
      expect(strangerBlocked.body.error?.details.limit).toBe('login_account');
      // the owner, from their own address, is not locked out by the stranger
      expect((await loginFrom('127.0.0.2', owner.email, owner.password)).status).toBe(200);

      // 3 failures so far; two more addresses fail twice each (under their own pair's free failures): 7 > the ceiling of 6
      for (const source of ['127.0.0.4', '127.0.0.5']) for (let i = 0; i < 2; i++) expect((await loginFrom(source, owner.email, 'guess')).status).toBe(401);
      const everywhere = await loginFrom('127.0.0.2', owner.email, owner.password);
      expect(everywhere.status).toBe(429);
      expect(everywhere.body.error?.details.limit).toBe('login_account_ceiling');
      // another account is untouched by all of it
      expect((await loginFrom('127.0.0.4', org.users.member.email, org.users.member.password)).status).toBe(200);
    } finally {
      await api.app.close();
    }
  });

  it('doubles the backoff per further failure, up to the cap', async () => {
    const redis = createRedis(ctx.redisUrl);
    try {
      const backoff = new LoginBackoff(redis, new RedisKeys(`${ctx.redisPrefix}:backoff-spec`));
      const policy = { freeFailures: 2, baseMs: 1000, maxMs: 5000, memoryMs: 60_000 };
      const blocks = [];
      for (let i = 0; i < 7; i++) blocks.push(await backoff.failed('account:x@example.test', policy));
      expect(blocks).toEqual([0, 0, 1000, 2000, 4000, 5000, 5000]);
      expect(await backoff.blockedFor('account:x@example.test')).toBeGreaterThan(4000);
      await backoff.succeeded('account:x@example.test');
      expect(await backoff.blockedFor('account:x@example.test')).toBe(0);
      expect(await backoff.failed('account:x@example.test', policy)).toBe(0);
    } finally {
      await redis.quit();
    }
  });
});

/** POST /api/v1/auth/login from a chosen loopback source address; resolves with the status and the JSON body. */
function loginOverLoopback(port: number, localAddress: string, body: { email: string; password: string }): Promise<{ status: number; body: { error?: { details: { limit?: string } } } }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      { host: '127.0.0.1', port, localAddress, method: 'POST', path: '/api/v1/auth/login', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || 'null') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
