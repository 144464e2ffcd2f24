import { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { startApi } from './support/api-app';
import { loadRunContext } from './support/run-context';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg } from './support/seed';

const ctx = loadRunContext();

/** WAHA users send `X-Api-Key`; it is accepted beside `Authorization: Bearer` on REST, the WebSocket and the limits. */
describe('X-Api-Key header (issue 13 item 5)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let org: SeededOrg;

  beforeAll(async () => {
    api = await startApi();
    org = await seedOrganization('Api Key Header Co');
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
  });

  const me = (headers: Record<string, string>) => api.http().get('/api/v1/auth/me').set(headers);

  it('authenticates an API key sent as X-Api-Key with that key\'s capabilities', async () => {
    const key = await org.apiKey(['sessions:read']);
    const res = await me({ 'X-Api-Key': key.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'apiKey', id: key.id, organizationId: org.id, capabilities: ['sessions:read'] });
    expect((await api.http().get('/api/v1/sessions').set({ 'X-Api-Key': key.token })).status).toBe(200);
    const refused = await api.http().get('/api/v1/webhooks').set({ 'X-Api-Key': key.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'forbidden', details: { required: ['webhooks:manage'] } });
  });

  it('401 in the envelope for an unknown key, a JWT in X-Api-Key, or two headers naming different credentials', async () => {
    const other = await org.apiKey(['*']);
    for (const headers of [
      { 'X-Api-Key': 'gwk_not-a-real-key' },
      { 'X-Api-Key': org.users.owner.token },
      { 'X-Api-Key': org.adminKey, ...bearer(other.token) },
      { 'X-Api-Key': 'garbage', ...bearer(org.adminKey) },
    ]) {
      const res = await me(headers);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String), details: {} } });
    }
    expect((await me({ 'X-Api-Key': org.adminKey, ...bearer(org.adminKey) })).status).toBe(200);
  });

  it('opens the WebSocket with X-Api-Key and refuses a bad one with 401', async () => {
    await api.app.listen(0, '127.0.0.1');
    const url = `ws://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}/api/v1/ws`;
    const outcome = (headers: Record<string, string>) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(url, { headers });
        ws.once('message', () => {
          ws.terminate();
          resolve('open');
        });
        ws.once('unexpected-response', (_req, res) => {
          ws.terminate();
          resolve(`HTTP ${res.statusCode}`);
        });
        ws.once('error', (err) => resolve(`error ${err.message}`));
      });
    expect(await outcome({ 'X-Api-Key': org.adminKey })).toBe('open');
    expect(await outcome({ 'X-Api-Key': 'gwk_not-a-real-key' })).toBe('HTTP 401');
  });

  it('counts X-Api-Key and Bearer requests of one key against the same credential limit', async () => {
    const strict = await startApi({ REDIS_KEY_PREFIX: `${ctx.redisPrefix}:x-api-key`, RATE_LIMIT_CREDENTIAL_PER_MIN: '3' });
    try {
      const key = await org.apiKey(['sessions:read']);
      expect((await strict.http().get('/api/v1/sessions').set({ 'X-Api-Key': key.token })).status).toBe(200);
      expect((await strict.http().get('/api/v1/sessions').set(bearer(key.token))).status).toBe(200);
      expect((await strict.http().get('/api/v1/sessions').set({ 'X-Api-Key': key.token })).status).toBe(200);
      const refused = await strict.http().get('/api/v1/sessions').set(bearer(key.token));
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'rate_limited', details: { limit: 'credential' } });
    } finally {
      await strict.app.close();
    }
  });
});
