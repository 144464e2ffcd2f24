import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadRunContext } from './support/run-context';

process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:proxy-${process.pid}`;

import { SecretBox } from '@app/crypto';
import { GroupsRepository, SessionsRepository } from '@app/database';
import { createApiApp } from '../apps/api/src/bootstrap';
import { PgSessionRecords } from '../apps/gateway/src/sessions/pg-session-records';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, freePort, startApp } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';

const PROXY = 'socks5://alice:s3cret-pass@proxy.example:1080';

/**
 * Issue 19 item 10: a session's optional proxy. Given on create or PATCH, stored sealed with SecretBox (nothing readable
 * in the row), shown masked, opened only by the gateway's records (what the engine connects through); bad input is a
 * 422 naming the field that changes nothing; null removes it.
 */
describe('Session proxy setting', () => {
  let app: NestExpressApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let org: SeededOrg;

  const api = () => request(app.getHttpServer());
  const rowOf = async (id: string) =>
    ((await (await testDataSource()).query('SELECT proxy_url, proxy_url_shown FROM sessions WHERE id = $1', [id])) as Array<{ proxy_url: string | null; proxy_url_shown: string | null }>)[0];
  const gatewayRecords = async () => {
    const db = await testDataSource();
    return new PgSessionRecords('gw', new SessionsRepository(db), new GroupsRepository(db), new SecretBox([Buffer.from(process.env.SECRET_ENCRYPTION_KEY!, 'base64')]));
  };

  beforeAll(async () => {
    const simPort = await freePort();
    const simUrl = `http://127.0.0.1:${simPort}`;
    const healthPort = await freePort();
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    gateway = await startApp(
      'gateway',
      { GATEWAY_ID: `gw-proxy-${process.pid}`, GATEWAY_ENGINE: 'sim', NETWORK_SIM_URL: simUrl, GATEWAY_HEALTH_PORT: String(healthPort), GATEWAY_HEARTBEAT_MS: '300' },
      `http://127.0.0.1:${healthPort}/healthz`,
    );
    app = await createApiApp({ quiet: true });
    await app.listen(0, '127.0.0.1');
    org = await seedOrganization('Proxy Inc');
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('is stored sealed, shown masked, opened for the gateway, changed by PATCH and removed with null', async () => {
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Proxied', proxyUrl: PROXY });
    expect(created.status).toBe(201);
    expect(created.body.proxyUrl).toBe('socks5://***@proxy.example:1080');
    expect(JSON.stringify(created.body)).not.toContain('s3cret');
    const row = await rowOf(created.body.id);
    expect(row.proxy_url).toMatch(/^v1\./);
    expect(row.proxy_url).not.toContain('s3cret');
    expect(row.proxy_url).not.toContain('proxy.example');
    expect((await (await gatewayRecords()).find(created.body.id))?.proxyUrl).toBe(PROXY);

    const got = await api().get(`/api/v1/sessions/${created.body.id}`).set(bearer(org.adminKey));
    expect(got.body.proxyUrl).toBe('socks5://***@proxy.example:1080');
    const listed = await api().get('/api/v1/sessions').set(bearer(org.adminKey));
    expect(JSON.stringify(listed.body)).not.toContain('s3cret');

    const patched = await api().patch(`/api/v1/sessions/${created.body.id}`).set(bearer(org.adminKey)).send({ proxyUrl: 'http://10.0.0.5:3128' });
    expect(patched.status).toBe(200);
    expect(patched.body.proxyUrl).toBe('http://10.0.0.5:3128');
    expect((await (await gatewayRecords()).find(created.body.id))?.proxyUrl).toBe('http://10.0.0.5:3128');

    // a PATCH of another field leaves it alone
    expect((await api().patch(`/api/v1/sessions/${created.body.id}`).set(bearer(org.adminKey)).send({ label: 'Renamed' })).body.proxyUrl).toBe('http://10.0.0.5:3128');

    const removed = await api().patch(`/api/v1/sessions/${created.body.id}`).set(bearer(org.adminKey)).send({ proxyUrl: null });
    expect(removed.body.proxyUrl).toBeNull();
    expect(await rowOf(created.body.id)).toEqual({ proxy_url: null, proxy_url_shown: null });
    expect((await (await gatewayRecords()).find(created.body.id))?.proxyUrl).toBeNull();
  });

  it('refuses what is not a proxy URL with 422 validation_error naming proxyUrl, changing nothing', async () => {
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Direct' });
    expect(created.body.proxyUrl).toBeNull();
    for (const proxyUrl of ['ftp://proxy.example:21', 'proxy.example:1080', 'socks5://', 'http://a b:1', 42, true, 'x'.repeat(3000)]) {
      const res = await api().patch(`/api/v1/sessions/${created.body.id}`).set(bearer(org.adminKey)).send({ proxyUrl });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(JSON.stringify(res.body.error)).toContain('proxyUrl');
    }
    expect(await rowOf(created.body.id)).toEqual({ proxy_url: null, proxy_url_shown: null });
    const refused = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Bad', proxyUrl: 'gopher://x' });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body.error)).toContain('proxyUrl');
  });
});
