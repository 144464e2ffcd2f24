import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { newApiKeyToken, sha256Hex } from '@app/crypto';
import { newId, OrganizationsRepository, Webhook } from '@app/database';
import { createRedis, LoginBackoff, type Redis, RedisKeys, RequestRateLimits } from '@app/redis';
import { PrincipalCache } from '../apps/api/src/auth/principal-cache';
import { startApi } from './support/api-app';
import { waitFor } from './support/processes';
import { loadRunContext } from './support/run-context';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, testDataSource, testDb } from './support/seed';

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
    organizations = new OrganizationsRepository(await testDb());
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

  /** A session row as a gateway leaves it once connected, held by a gateway id no process owns (nothing sends). */
  const workingSession = async (organizationId: string, ratePerMin = 1000) => {
    const id = newId('ses');
    await (await testDataSource()).query(
      `INSERT INTO sessions (id, organization_id, label, status, gateway_id, phone_number, wa_jid, rate_per_min, rate_per_hour)
       VALUES ($1, $2, 'limits', 'working', 'gw-limits-nobody', '15550001234', '15550001234@s.whatsapp.net', $3, 10000)`,
      [id, organizationId, ratePerMin],
    );
    return id;
  };
  const send = (api: Api, token: string, sessionId: string, body: object = { to: '15550009999', text: 'hi' }) =>
    api.http().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(token)).send(body);
  /** A credential's window under a strict API's prefix: the keys RequestRateLimits counts it in. */
  const credentialWindow = (redis: Redis, name: string, token: string) =>
    new RequestRateLimits(redis, new RedisKeys(`${ctx.redisPrefix}:${name}`)).prepare([{ name: 'credential', subject: `key:${sha256Hex(token)}`, window: { limit: 1, windowMs: 60_000 } }]).keys[0];
  /** Requests the key until the API's principal cache serves it (the guard then accepts it from memory): how many it took. */
  const untilKnown = async (api: Api, token: string) => {
    const cache = api.app.get(PrincipalCache);
    let requests = 0;
    await waitFor(async () => {
      if (cache.peek(`key:${sha256Hex(token)}`)) return true;
      requests += 1;
      expect((await api.http().get('/api/v1/sessions').set(bearer(token))).status).toBe(200);
      return false;
    }, 30_000, 'the key in the principal cache');
    return requests;
  };

  it('refuses a plain send over the credential limit with the same 429 as a GET over it, counted in the send’s own round trip', async () => {
    const api = await strictApi('credential-send', { RATE_LIMIT_CREDENTIAL_PER_MIN: '4' });
    const redis = createRedis(ctx.redisUrl);
    try {
      const key = await org.apiKey(['messages:send', 'sessions:read']);
      const sessionId = await workingSession(org.id);
      const used = await untilKnown(api, key.token);
      const limits = api.app.get(RequestRateLimits);
      const prepare = jest.spyOn(limits, 'prepare');
      const hitAll = jest.spyOn(limits, 'hitAll');
      for (let i = used; i < 4; i++) expect((await send(api, key.token, sessionId)).status).toBe(202);
      // the sends' limits went to the send's script: no round trip of their own
      expect(prepare).toHaveBeenCalledTimes(4 - used);
      expect(hitAll).not.toHaveBeenCalled();

      const refusedSend = await send(api, key.token, sessionId);
      const refusedGet = await api.http().get('/api/v1/sessions').set(bearer(key.token));
      expect(refusedSend.status).toBe(429);
      expect(refusedGet.status).toBe(429);
      const sameWait = (body: { error: { message: string; details: Record<string, unknown> } }) => ({
        ...body.error,
        message: body.error.message.replace(/\d+ s$/, 'N s'),
        details: { ...body.error.details, retryAfterSeconds: 'N' },
      });
      expect(sameWait(refusedSend.body)).toEqual(sameWait(refusedGet.body));
      expect(refusedSend.body.error).toMatchObject({ code: 'rate_limited', details: { limit: 'credential' } });
      expect(Number(refusedSend.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refusedSend.headers['retry-after'])).toBeLessThanOrEqual(60);
      // a send that does not reach the script is refused before its own answer too, as by the middleware
      const invalid = await send(api, key.token, sessionId, { to: '15550009999' });
      const quoting = await send(api, key.token, sessionId, { to: '15550009999', text: 'quoting', quotedMessageId: newId('msg') });
      expect([invalid.status, quoting.status]).toEqual([429, 429]);
      expect(sameWait(invalid.body)).toEqual(sameWait(refusedGet.body));
      // a refused send counted nothing: the window holds the 4 accepted requests, no row was stored for it
      expect(await redis.zcard(credentialWindow(redis, 'credential-send', key.token))).toBe(4);
      const rows = await (await testDataSource()).query('SELECT count(*)::int AS n FROM messages WHERE session_id = $1', [sessionId]);
      expect(rows[0].n).toBe(4 - used);
      expect((await api.ops().get('/metrics')).text).toMatch(/gw_api_rate_limited_total\{[^}]*limit="credential"[^}]*\} 4/);
    } finally {
      jest.restoreAllMocks();
      await redis.quit();
      await api.app.close();
    }
  });

  it('counts a send exactly once whichever path answers it', async () => {
    const name = 'once';
    const api = await strictApi(name, {});
    const redis = createRedis(ctx.redisUrl);
    try {
      const key = await org.apiKey(['messages:send', 'sessions:read']);
      const stranger = await seedOrganization('Stranger');
      const strangerKey = await stranger.apiKey(['messages:send', 'sessions:read']);
      const sessionId = await workingSession(org.id, 2);
      const window = credentialWindow(redis, name, key.token);
      const ipWindows = async () => redis.keys(`${ctx.redisPrefix}:${name}:rate:ip:*`);
      let expected = await untilKnown(api, key.token);
      let requests = expected;
      const counted = async (status: number, res: { status: number }) => {
        expect(res.status).toBe(status);
        expected += 1;
        requests += 1;
        expect(await redis.zcard(window)).toBe(expected);
      };

      await counted(202, await send(api, key.token, sessionId)); // the send's script
      await counted(422, await send(api, key.token, sessionId, { to: '15550009999' })); // counted before the session is read
      await counted(404, await send(api, key.token, newId('ses'))); // the script, then the session read
      await counted(202, await api.http().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(key.token)).set('Idempotency-Key', 'once-1').send({ to: '15550009999', text: 'keyed' })); // at once, by the middleware
      await counted(404, await send(api, key.token, sessionId, { to: '15550009999', text: 'quoting', quotedMessageId: newId('msg') })); // counted first, then the old path
      await counted(429, await send(api, key.token, sessionId)); // the session's ratePerMin (2): the request was made

      // another organization's key, once known: its send to this session is 404 and counted against it, not against the session
      requests += await untilKnown(api, strangerKey.token);
      const strangerWindow = credentialWindow(redis, name, strangerKey.token);
      const before = await redis.zcard(strangerWindow);
      expect((await send(api, strangerKey.token, sessionId)).status).toBe(404);
      requests += 1;
      expect(await redis.zcard(strangerWindow)).toBe(before + 1);

      // a known key that may not send is counted at once too, then refused by the guard
      const reader = await org.apiKey(['sessions:read']);
      requests += await untilKnown(api, reader.token);
      const readerWindow = credentialWindow(redis, name, reader.token);
      const read = await redis.zcard(readerWindow);
      expect((await send(api, reader.token, sessionId)).status).toBe(403);
      requests += 1;
      expect(await redis.zcard(readerWindow)).toBe(read + 1);

      // an unknown key is never deferred: counted at once, then refused by the guard
      const unknown = newApiKeyToken();
      expect((await send(api, unknown, sessionId)).status).toBe(401);
      requests += 1;
      expect(await redis.zcard(credentialWindow(redis, name, unknown))).toBe(1);

      // and the IP counted every request once
      const [ip] = await ipWindows();
      expect(await redis.zcard(ip)).toBe(requests);
      expect(await redis.zcard(window)).toBe(expected);
    } finally {
      await redis.quit();
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
