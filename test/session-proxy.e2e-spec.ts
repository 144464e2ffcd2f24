import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadRunContext } from './support/run-context';

process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:proxy-${process.pid}`;

import { createServer, type AddressInfo, type Server } from 'node:net';
import { maskProxyUrl } from '@app/contracts';
import { SecretBox } from '@app/crypto';
import { GroupsRepository, SessionsRepository } from '@app/database';
import { createApiApp } from '../apps/api/src/bootstrap';
import { PgSessionRecords } from '../apps/gateway/src/sessions/pg-session-records';
import { checkedRequest as request } from './support/api-app';
import { FORBIDDEN_TARGET_HOSTS } from './support/forbidden-targets';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource, testDb } from './support/seed';

const PROXY = 'socks5://alice:s3cret-pass@proxy.example:1080';
/** a public address (nothing answers there from a test machine; the gateway's attempts just fail) */
const PUBLIC_PROXY = 'http://93.184.215.14:3128';

/**
 * Issue 19 item 10: a session's optional proxy. Given on create or PATCH, stored sealed with SecretBox (nothing readable
 * in the row), shown masked, opened only by the gateway's records (what the engine connects through); bad input is a
 * 422 naming the field that changes nothing; null removes it.
 * Issue 37 item 1: the proxy is a host a tenant aims the gateway at, so it passes the address guard when saved (every
 * spelling the webhook guard refuses) and when the Baileys gateway dials it; the tenant reads only `proxy_unreachable`.
 */
describe('Session proxy setting', () => {
  let app: NestExpressApplication;
  let gateway: AppProcess;
  let org: SeededOrg;

  const api = () => request(app.getHttpServer());
  const rowOf = async (id: string) =>
    ((await (await testDataSource()).query('SELECT proxy_url, proxy_url_shown FROM sessions WHERE id = $1', [id])) as Array<{ proxy_url: string | null; proxy_url_shown: string | null }>)[0];
  const gatewayRecords = async () => {
    return new PgSessionRecords('gw', new SessionsRepository(await testDb()), new GroupsRepository(await testDb()), new SecretBox([Buffer.from(process.env.SECRET_ENCRYPTION_KEY!, 'base64')]));
  };

  beforeAll(async () => {
    const healthPort = await freePort();
    // the real engine, with no SESSION_PROXY_ALLOWED: the one place a session's proxy is dialled
    gateway = await startApp(
      'gateway',
      {
        GATEWAY_ID: `gw-proxy-${process.pid}`,
        GATEWAY_ENGINE: 'baileys',
        WHATSAPP_WEB_URL: 'wss://web.whatsapp.invalid/ws/chat',
        WHATSAPP_WEB_VERSION: '2.3000.1012345678',
        GATEWAY_HEALTH_PORT: String(healthPort),
        GATEWAY_HEARTBEAT_MS: '300',
        RECONNECT_BASE_DELAY_MS: '500',
        RECONNECT_MAX_DELAY_MS: '500',
        SESSION_PROXY_ALLOWED: '',
      },
      `http://127.0.0.1:${healthPort}/healthz`,
    );
    delete process.env.SESSION_PROXY_ALLOWED;
    app = await createApiApp({ quiet: true });
    await app.listen(0, '127.0.0.1');
    org = await seedOrganization('Proxy Inc');
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
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

    const patched = await api().patch(`/api/v1/sessions/${created.body.id}`).set(bearer(org.adminKey)).send({ proxyUrl: PUBLIC_PROXY });
    expect(patched.status).toBe(200);
    expect(patched.body.proxyUrl).toBe(PUBLIC_PROXY);
    expect((await (await gatewayRecords()).find(created.body.id))?.proxyUrl).toBe(PUBLIC_PROXY);

    // a PATCH of another field leaves it alone
    expect((await api().patch(`/api/v1/sessions/${created.body.id}`).set(bearer(org.adminKey)).send({ label: 'Renamed' })).body.proxyUrl).toBe(PUBLIC_PROXY);

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

  let direct: string | undefined;
  it.each(FORBIDDEN_TARGET_HOSTS)('refuses the proxy host %s with 422 naming SESSION_PROXY_ALLOWED, on create and on PATCH, changing nothing', async (host) => {
    for (const proxyUrl of [`http://${host}`, `socks5://user:pw@${host}`]) {
      const refused = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Inward', proxyUrl });
      expect({ proxyUrl, status: refused.status, code: refused.body.error?.code }).toEqual({ proxyUrl, status: 422, code: 'validation_error' });
      expect(refused.body.error.details.fields.proxyUrl[0]).toMatch(/not allowed: .*SESSION_PROXY_ALLOWED/);
    }
    direct ??= (await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Direct' })).body.id as string;
    const patched = await api().patch(`/api/v1/sessions/${direct}`).set(bearer(org.adminKey)).send({ proxyUrl: `https://${host}` });
    expect(patched.status).toBe(422);
    expect(patched.body.error.details.fields.proxyUrl[0]).toMatch(/not allowed/);
    expect(await rowOf(direct)).toEqual({ proxy_url: null, proxy_url_shown: null });
  });

  describe('when the gateway dials it', () => {
    let listener: Server;
    let connections = 0;
    beforeAll(async () => {
      listener = createServer((socket) => ((connections += 1), socket.destroy()));
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
    });
    afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

    it('refuses a loopback proxy the API was made to keep (allow-list bypassed): no connection, and the tenant reads only proxy_unreachable', async () => {
      const port = (listener.address() as AddressInfo).port;
      const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Rebound' });
      // as if saved by an API whose SESSION_PROXY_ALLOWED named it, or through a name that now resolves to 127.0.0.1
      const inward = `http://user:pw@127.0.0.1:${port}`;
      const box = new SecretBox([Buffer.from(process.env.SECRET_ENCRYPTION_KEY!, 'base64')]);
      const sessions = new SessionsRepository(await testDb());
      await sessions.patchSettings((await sessions.findInOrganization(org.id, created.body.id))!, { proxyUrlSealed: box.encrypt(inward), proxyUrlShown: maskProxyUrl(inward) });
      expect((await api().post(`/api/v1/sessions/${created.body.id}:restart`).set(bearer(org.adminKey))).status).toBeLessThan(300);

      const conflict = await waitFor(async () => {
        const res = await api().get(`/api/v1/sessions/${created.body.id}/qr`).set(bearer(org.adminKey));
        return res.status === 409 && String(res.body.error.details.reason ?? '').includes('proxy_unreachable') ? res : null;
      }, 20000, 'a 409 saying proxy_unreachable');
      expect(conflict.body.error.details.reason).toMatch(/^connect_failed: proxy_unreachable/);
      const db = await testDataSource();
      // what the tenant reads of the outcome: the QR 409 and its session.status events (the session view shows the
      // proxy the tenant set, masked)
      const told = JSON.stringify([
        conflict.body,
        await db.query(`SELECT envelope FROM events WHERE session_id = $1 AND type = 'session.status'`, [created.body.id]),
      ]);
      for (const secret of [String(port), '127.0.0.1', 'ECONNREFUSED', 'loopback']) expect(told).not.toContain(secret);
      expect(connections).toBe(0);
    });
  });
});
