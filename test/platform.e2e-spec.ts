import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../apps/api/src/bootstrap';
import { startApi } from './support/api-app';
import { FORBIDDEN_TARGET_HOSTS } from './support/forbidden-targets';
import { freePort, startApp } from './support/processes';
import { execFileRegistered } from './support/process-registry';
import { REPO_ROOT } from './support/run-context';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg } from './support/seed';


describe('platform: errors, private targets, operability, docs, configuration, CLI', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let org: SeededOrg;

  beforeAll(async () => {
    // this file runs the API as production would: private webhook targets refused
    process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'false';
    process.env.BODY_LIMIT_BYTES = '4096';
    api = await startApi();
    org = await seedOrganization('Platform Co');
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
    delete process.env.BODY_LIMIT_BYTES;
    process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
  });

  it.each(FORBIDDEN_TARGET_HOSTS.map((host) => `http://${host}/hook`))('refuses the private target %s with 422', async (url) => {
    const res = await api.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).send({ url });
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields.url[0]).toMatch(/not allowed/);
  });

  it('refuses a private target on PATCH too, and accepts a public one', async () => {
    const created = await api.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).send({ url: 'https://93.184.215.14/hook' });
    expect(created.status).toBe(201);
    const res = await api.http().patch(`/api/v1/webhooks/${created.body.id}`).set(bearer(org.adminKey)).send({ url: 'http://10.0.0.1/x' });
    expect(res.status).toBe(422);
  });

  it('413 payload_too_large for an oversize body, in the envelope', async () => {
    const res = await api
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(org.adminKey))
      .send({ url: 'https://example.com', customHeaders: { 'X-Big': 'x'.repeat(5000) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: { code: 'payload_too_large', message: expect.any(String), details: {} } });
  });

  it('unknown routes and methods are 404 not_found in the envelope, with no framework shape', async () => {
    for (const res of [
      await api.http().get('/api/v1/nothing-here').set(bearer(org.adminKey)),
      await api.http().get('/nothing'),
      await api.http().put('/api/v1/webhooks/whk_x').set(bearer(org.adminKey)).send({}),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String), details: {} } });
      expect(res.body).not.toHaveProperty('statusCode');
    }
  });

  it('echoes a sane X-Request-Id and mints one otherwise', async () => {
    const echoed = await api.http().get('/healthz').set('X-Request-Id', 'trace-abc-123');
    expect(echoed.headers['x-request-id']).toBe('trace-abc-123');
    const minted = await api.http().get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(minted.headers['x-request-id']).toMatch(/^[0-9A-Z]{26}$/);
  });

  it('/healthz, /readyz (PostgreSQL and Redis), and /metrics with the HTTP histogram by route and status on the ops port only', async () => {
    expect((await api.http().get('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await api.http().get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { postgres: true, redis: true } });
    await api.http().get('/api/v1/webhooks/whk_missing').set(bearer(org.adminKey));
    expect((await api.http().get('/metrics')).status).toBe(404);
    expect((await api.ops().get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await api.ops().get('/readyz')).status).toBe(200);
    const metrics = await api.ops().get('/metrics');
    expect(metrics.status).toBe(200);
    // one prefix and an `app` label on every series, Node's defaults included
    const names = [...metrics.text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? /gm)];
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter(([, name]) => !name.startsWith('gw_')).map(([, name]) => name)).toEqual([]);
    expect(names.filter(([, , labels]) => !labels?.includes('app="api"')).map(([, name]) => name)).toEqual([]);
    expect(metrics.text).toMatch(/gw_http_request_duration_seconds_count\{app="api",method="GET",route="\/api\/v1\/webhooks\/:id",status="404"\} [1-9]/);
  });

  it('serves Swagger UI and the OpenAPI document, and docs/openapi.json matches the code', async () => {
    const ui = await api.http().get('/api/docs/');
    expect(ui.status).toBe(200);
    expect(ui.text).toMatch(/swagger/i);
    const served = await api.http().get('/api/docs-json');
    expect(served.status).toBe(200);
    expect(served.body.paths).toHaveProperty('/api/v1/webhooks/{id}');
    const committed = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'openapi.json'), 'utf8'));
    // run `npm run openapi` after changing the API, and commit docs/openapi.json
    expect(JSON.parse(JSON.stringify(buildOpenApiDocument(api.app)))).toEqual(committed);
  });

  it('a bad configuration value stops the process with one line naming the variable', async () => {
    const entry = join(REPO_ROOT, 'dist/apps/api/src/main.js');
    for (const [name, value] of [
      ['PORT', 'not-a-port'],
      ['DATABASE_URL', 'mysql://x'],
      ['SECRET_ENCRYPTION_KEY', 'dG9vLXNob3J0'],
    ]) {
      const err = await execFileRegistered(process.execPath, [entry], { env: { ...process.env, [name]: value } }).catch((e) => e);
      expect(err.code).toBe(78);
      const lines = String(err.stderr).trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(name);
    }
    const prod = await execFileRegistered(process.execPath, [entry], { env: { ...process.env, NODE_ENV: 'production', JWT_SECRET: '' } }).catch((e) => e);
    expect(prod.code).toBe(78);
    expect(String(prod.stderr)).toContain('JWT_SECRET');
  });

  it('logs carry the request id and never the Authorization header or the secret', async () => {
    const port = await freePort();
    const proc = await startApp('api', { PORT: String(port), LOG_LEVEL: 'info' }, `http://127.0.0.1:${port}/healthz`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/webhooks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${org.adminKey}`, 'Content-Type': 'application/json', 'X-Request-Id': 'log-check-1' },
        body: JSON.stringify({ url: 'https://example.com/logged', secret: 'never-log-this-secret' }),
      });
      expect(res.status).toBe(201);
      await new Promise((r) => setTimeout(r, 300));
      const out = proc.output();
      expect(out).toContain('log-check-1');
      expect(out).not.toContain(org.adminKey);
      expect(out).not.toContain('never-log-this-secret');
    } finally {
      await proc.stop();
    }
  });

  it('admin CLI: org:create, user:create, apikey:create print JSON only on stdout; the key works; revoke stops it', async () => {
    const cli = (...args: string[]) => execFileRegistered(process.execPath, [join(REPO_ROOT, 'dist/apps/cli/src/main.js'), ...args], { env: process.env });
    const email = `cli-${Date.now()}@example.test`;
    const created = await cli('org:create', '--name', 'Cli Co', '--owner-email', email, '--owner-password', 'owner-password-1');
    const out = JSON.parse(created.stdout);
    expect(out).toEqual({
      organization: { id: expect.stringMatching(/^org_/), name: 'Cli Co' },
      user: { id: expect.stringMatching(/^usr_/), organizationId: out.organization.id, email, role: 'owner' },
    });
    const member = JSON.parse((await cli('user:create', '--org', out.organization.id, '--email', `m-${email}`, '--password', 'member-pass-1', '--role', 'member')).stdout);
    expect(member.user.role).toBe('member');
    const key = JSON.parse((await cli('apikey:create', '--org', out.organization.id, '--name', 'ci', '--permissions', 'sessions:read,webhooks:manage')).stdout);
    expect(key).toEqual({ id: expect.stringMatching(/^key_/), name: 'ci', token: expect.stringMatching(/^gwk_/), permissions: ['sessions:read', 'webhooks:manage'] });
    expect((await api.http().get('/api/v1/webhooks').set(bearer(key.token))).status).toBe(200);
    const login = await api.http().post('/api/v1/auth/login').send({ email, password: 'owner-password-1' });
    expect(login.status).toBe(200);
    await cli('apikey:revoke', '--id', key.id);
    expect((await api.http().get('/api/v1/webhooks').set(bearer(key.token))).status).toBe(401);
    const bad = await cli('user:create', '--org', out.organization.id, '--email', 'x@example.test', '--password', 'password-1', '--role', 'emperor').catch((e) => e);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
  });
});
