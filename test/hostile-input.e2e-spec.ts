import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { OpenAPIObject, ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace, so gateways of other e2e files never take its sessions; the API runs as in
// production, with private webhook targets refused
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:hostile-${process.pid}`;
process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'false';

import { buildOpenApiDocument } from '../apps/api/src/bootstrap';
import { startApi } from './support/api-app';
import { FORBIDDEN_TARGET_HOSTS } from './support/forbidden-targets';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';

type Api = Awaited<ReturnType<typeof startApi>>;
const ENVELOPE = { error: { code: expect.any(String), message: expect.any(String), details: expect.any(Object) } };
const WRITE_METHODS = ['post', 'put', 'patch', 'delete'] as const;
const METHODS = ['get', ...WRITE_METHODS] as const;

/** One raw HTTP exchange: what clients will not send, sent byte for byte; resolves with the status and JSON body. */
function rawExchange(port: number, request: Buffer | string): Promise<{ status: number; body: unknown; raw: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(typeof request === 'string' ? Buffer.from(request, 'latin1') : request));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = raw.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      let body: unknown;
      try {
        body = JSON.parse(rest.join('\r\n\r\n'));
      } catch {
        body = rest.join('\r\n\r\n');
      }
      resolve({ status, body, raw });
    });
  });
}

describe('hostile input: every refusal a 4xx in the envelope, with no side effect', () => {
  let api: Api;
  let port: number;
  let org: SeededOrg;
  let doc: OpenAPIObject;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl: string;
  let session: { id: string };
  let webhookId: string;
  const gatewayId = `gw-hostile-${process.pid}`;

  const { get: simGet } = simControl(() => simUrl);
  const getSession = async (id: string) => (await api.http().get(`/api/v1/sessions/${id}`).set(bearer(org.adminKey))).body;

  beforeAll(async () => {
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    const healthPort = await freePort();
    gateway = await startApp(
      'gateway',
      { GATEWAY_ID: gatewayId, GATEWAY_ENGINE: 'sim', NETWORK_SIM_URL: simUrl, GATEWAY_HEALTH_PORT: String(healthPort), GATEWAY_HEARTBEAT_MS: '300' },
      `http://127.0.0.1:${healthPort}/healthz`,
    );
    api = await startApi();
    await api.app.listen(0, '127.0.0.1');
    port = (api.app.getHttpServer().address() as AddressInfo).port;
    doc = JSON.parse(JSON.stringify(buildOpenApiDocument(api.app)));
    org = await seedOrganization('Hostile Co');
    const created = await api.http().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Target' });
    expect(created.status).toBe(201);
    session = created.body;
    await waitFor(async () => ((await getSession(session.id)).status === 'scan_qr_code' ? true : null), 10000, 'QR');
    await fetch(`${simUrl}/sim/sessions/${session.id}/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phoneNumber: '15550007777' }) });
    await waitFor(async () => ((await getSession(session.id)).status === 'working' ? true : null), 10000, 'working');
    webhookId = (await api.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).send({ url: 'https://example.com/hook' })).body.id;
  });

  afterAll(async () => {
    await api?.app.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
    process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
  });

  /** Every operation of the OpenAPI document, so a route added later is covered without touching this file. */
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method]! })),
    );
  const send = (method: (typeof METHODS)[number], url: string) => api.http()[method](url).set(bearer(org.adminKey));

  it('a NUL byte in any path parameter of any route is a 4xx in the envelope', async () => {
    const withParams = operations().filter((o) => o.path.includes('{'));
    expect(withParams.length).toBeGreaterThan(10);
    for (const { path, method } of withParams) {
      for (const param of path.match(/\{[^}]+\}/g)!) {
        const url = path.replace(/\{[^}]+\}/g, (p) => (p === param ? 'x%00y' : p === '{id}' ? session.id : 'x'));
        const res = await send(method, url).send(method === 'get' || method === 'delete' ? undefined : {});
        expect({ url, method, status: res.status }).toEqual({ url, method, status: 422 });
        expect(res.body).toEqual({ error: { code: 'validation_error', message: 'request is invalid', details: { fields: { path: [expect.stringMatching(/NUL/)] } } } });
      }
    }
    for (const url of ['/api/v1/sessions/%00', '/api/v1/webhooks/whk_%00', '/api/v1/sessions/%FF', '/api/v1/sessions/%E0%A4%A']) {
      const res = await send('get', url);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(ENVELOPE);
    }
  });

  it('a NUL in a query value is refused, naming the parameter', async () => {
    const res = await send('get', `/api/v1/sessions/${session.id}/messages?chatJid=a%00b`);
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields).toEqual({ chatJid: [expect.stringMatching(/NUL/)] });
  });

  /** The string properties of an operation's JSON body, from its schema. */
  const stringFields = (op: NonNullable<OpenAPIObject['paths'][string]['post']>): string[] => {
    const body = op.requestBody as { content?: Record<string, { schema?: SchemaObject | ReferenceObject }> } | undefined;
    const schema = body?.content?.['application/json']?.schema;
    if (!schema) return [];
    const resolved = '$ref' in schema ? (doc.components!.schemas![schema.$ref.split('/').pop()!] as SchemaObject) : schema;
    return Object.entries(resolved.properties ?? {})
      .filter(([, p]) => (p as SchemaObject).type === 'string')
      .map(([name]) => name);
  };

  // PostgreSQL stores neither a NUL nor a lone UTF-16 surrogate in text or json: both once reached it as a 500
  it.each([
    ['a NUL', 'a\u0000b', /NUL/],
    ['a lone UTF-16 surrogate', 'a\ud800b', /surrogate/],
  ])('%s inside any string field of any write body is 422 naming the field, and nothing changes', async (_what, hostile, reason) => {
    const db = await testDataSource();
    const counts = async () =>
      (await db.query(
        `SELECT (SELECT count(*) FROM sessions) s, (SELECT count(*) FROM webhooks) w, (SELECT count(*) FROM messages) m,
                (SELECT count(*) FROM groups) g, (SELECT count(*) FROM api_keys) k, (SELECT max(updated_at) FROM sessions) su,
                (SELECT max(updated_at) FROM webhooks) wu`,
      ))[0];
    const before = await counts();
    let checked = 0;
    for (const { path, method, op } of operations().filter((o) => o.method !== 'get' && o.method !== 'delete')) {
      const url = path.replace('{id}', path.startsWith('/api/v1/webhooks') ? webhookId : session.id).replace(/\{[^}]+\}/g, 'x');
      for (const field of stringFields(op)) {
        const res = await send(method, url).send({ [field]: hostile });
        expect({ url, field, status: res.status }).toEqual({ url, field, status: 422 });
        expect(res.body.error.details.fields).toEqual({ [field]: [expect.stringMatching(reason)] });
        checked++;
      }
    }
    // sessions (label), webhooks (url, secret, sessionId), groups (name), messages (type, to, ...), login (email, password)
    expect(checked).toBeGreaterThan(10);
    for (const body of [{ email: `${hostile}@x.test`, password: 'p' }, { email: 'owner@x.test', password: hostile }]) {
      const res = await api.http().post('/api/v1/auth/login').send(body);
      expect(res.status).toBe(422);
    }
    const nested = await send('post', '/api/v1/webhooks').send({ url: 'https://example.com', customHeaders: { 'X-A': hostile }, events: ['ok', hostile] });
    expect(nested.status).toBe(422);
    expect(await counts()).toEqual(before);
  });

  it('a group name with a NUL creates nothing on the network and stores nothing', async () => {
    const res = await send('post', `/api/v1/sessions/${session.id}/groups`).send({ name: 'a\u0000b' });
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields).toEqual({ name: [expect.stringMatching(/NUL/)] });
    expect((await simGet(`/sim/groups?sessionId=${session.id}`)).data).toEqual([]);
    const db = await testDataSource();
    expect(await db.query('SELECT * FROM groups WHERE session_id = $1', [session.id])).toEqual([]);
    // the same request without the NUL still works, so the refusal was about the byte
    const ok = await send('post', `/api/v1/sessions/${session.id}/groups`).send({ name: 'ab' });
    expect(ok.status).toBe(201);
    expect((await simGet(`/sim/groups?sessionId=${session.id}`)).data).toHaveLength(1);
  });

  it('a repeated group creation returns the first group and leaves one group on the network', async () => {
    const body = { name: 'Retry team', participants: ['15557770001@s.whatsapp.net'] };
    const first = await send('post', `/api/v1/sessions/${session.id}/groups`).send(body);
    const retry = await send('post', `/api/v1/sessions/${session.id}/groups`).send(body);
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    const named = (await simGet(`/sim/groups?sessionId=${session.id}`)).data.filter((g: { subject: string }) => g.subject === 'Retry team');
    expect(named).toHaveLength(1);
  });

  it('customHeaders refuses Content-Encoding, Date and a set larger than receivers accept (8 KiB as sent), on create and PATCH', async () => {
    const db = await testDataSource();
    const stored = async () => (await db.query('SELECT custom_headers FROM webhooks WHERE id = $1', [webhookId]))[0].custom_headers;
    const before = await stored();
    // 2 × ("X-Big-n: " + 4000 + CRLF) = 8022 bytes; a third of 171 bytes as sent makes 8193, one over
    const big = { 'X-Big-1': 'a'.repeat(4000), 'X-Big-2': 'b'.repeat(4000) };
    const tooBig = { ...big, 'X-Big-3': 'c'.repeat(160) };
    for (const customHeaders of [{ 'Content-Encoding': 'gzip' }, { date: 'Wed, 21 Oct 2015 07:28:00 GMT' }, tooBig]) {
      for (const res of [
        await send('post', '/api/v1/webhooks').send({ url: 'https://example.com/h', customHeaders }),
        await send('patch', `/api/v1/webhooks/${webhookId}`).send({ customHeaders }),
      ]) {
        expect(res.status).toBe(422);
        expect(res.body.error.code).toBe('validation_error');
        expect(Object.keys(res.body.error.details.fields)).toEqual(['customHeaders']);
      }
    }
    expect(await stored()).toEqual(before);
    // just under the bound is accepted, and the refusal said how many bytes it counted
    const ok = await send('patch', `/api/v1/webhooks/${webhookId}`).send({ customHeaders: big });
    expect(ok.status).toBe(200);
    expect(ok.body.customHeaders).toEqual(big);
    const refused = await send('patch', `/api/v1/webhooks/${webhookId}`).send({ customHeaders: tooBig });
    expect(refused.body.error.details.fields.customHeaders.join(' ')).toMatch(/8193 bytes.*8192/);
    expect((await send('patch', `/api/v1/webhooks/${webhookId}`).send({ customHeaders: {} })).status).toBe(200);
  });

  it('JSON nested deeper than 32 levels is 422 before validation, on every write route', async () => {
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    for (const [url, raw] of [
      ['/api/v1/webhooks', `{"url":"https://example.com","customHeaders":${deep(5000)}}`],
      ['/api/v1/webhooks', `{"url":"https://example.com","events":${deepArray(20000)}}`],
      ['/api/v1/sessions', deep(40)],
      [`/api/v1/sessions/${session.id}/messages`, `{"type":"text","to":"1555","text":"x","x":${deepArray(3000)}}`],
      ['/api/v1/auth/login', deep(100)],
    ]) {
      const res = await api.http().post(url).set(bearer(org.adminKey)).set('Content-Type', 'application/json').send(raw);
      expect({ url, status: res.status }).toEqual({ url, status: 422 });
      expect(Object.values(res.body.error.details.fields as Record<string, string[]>)[0][0]).toMatch(/deeper than 32/);
    }
    // 31 levels below the body are still a normal validation question
    const shallow = await api.http().post('/api/v1/sessions').set(bearer(org.adminKey)).set('Content-Type', 'application/json').send(`{"label":"x","y":${deep(30)}}`);
    expect(shallow.status).toBe(422);
    expect(shallow.body.error.details.fields).toHaveProperty('y');
  });

  it('prototype-named keys are refused by name instead of silently dropped', async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const raw = `{"url":"https://example.com/proto","customHeaders":{"X-A":"1","${key}":{"polluted":"yes"}}}`;
      const res = await api.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).set('Content-Type', 'application/json').send(raw);
      expect(res.status).toBe(422);
      expect(res.body.error.details.fields).toEqual({ [`customHeaders.${key}`]: [`key "${key}" is not allowed`] });
      const top = await api.http().post('/api/v1/sessions').set(bearer(org.adminKey)).set('Content-Type', 'application/json').send(`{"label":"x","${key}":{}}`);
      expect(top.status).toBe(422);
      expect(top.body.error.details.fields).toHaveProperty(key);
    }
    const list = await send('get', '/api/v1/webhooks?limit=100');
    expect(list.body.data.map((w: { url: string }) => w.url)).not.toContain('https://example.com/proto');
  });

  it('a Content-Encoding that does not match the body is 400, an unknown one 415, and a real gzip body is decoded', async () => {
    const mismatched = await send('post', '/api/v1/sessions').set('Content-Type', 'application/json').set('Content-Encoding', 'gzip').send('{"label":"plain"}');
    expect(mismatched.status).toBe(400);
    expect(mismatched.body).toEqual({ error: { code: 'bad_request', message: expect.stringMatching(/Content-Encoding/), details: {} } });
    const deflate = await send('post', '/api/v1/sessions').set('Content-Type', 'application/json').set('Content-Encoding', 'deflate').send('{"label":"plain"}');
    expect(deflate.status).toBe(400);
    const unknown = await send('post', '/api/v1/sessions').set('Content-Type', 'application/json').set('Content-Encoding', 'zstd').send('{"label":"plain"}');
    expect(unknown.status).toBe(415);
    expect(unknown.body.error.code).toBe('unsupported_media_type');
    const charset = await send('post', '/api/v1/sessions').set('Content-Type', 'application/json; charset=koi8-x').send('{"label":"plain"}');
    expect(charset.status).toBe(415);
    expect(charset.body).toEqual(ENVELOPE);
    const gz = gzipSync(Buffer.from('{"label":"zipped"}'));
    const decoded = await rawExchange(
      port,
      Buffer.concat([
        Buffer.from(
          `POST /api/v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.adminKey}\r\nContent-Type: application/json\r\n` +
            `Content-Encoding: gzip\r\nContent-Length: ${gz.length}\r\nConnection: close\r\n\r\n`,
        ),
        gz,
      ]),
    );
    expect(decoded.status).toBe(201);
    expect(decoded.body).toMatchObject({ label: 'zipped' });
  });

  it('a chunked body (Transfer-Encoding, no Content-Length) is parsed like any other, and refused like any other', async () => {
    // the body parsers sit behind one layer that only requests with a body enter: a body without Content-Length must
    // still reach them, or the route would see no body at all
    const chunked = (body: string) =>
      `POST /api/v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.adminKey}\r\nContent-Type: application/json\r\n` +
      `Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const created = await rawExchange(port, chunked('{"label":"chunked"}'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ label: 'chunked' });
    const malformed = await rawExchange(port, chunked('{"label":'));
    expect(malformed.status).toBe(422);
    expect(malformed.body).toEqual({ error: { code: 'validation_error', message: 'request body is not valid JSON', details: { fields: { body: ['is not valid JSON'] } } } });
  });

  it('what Node\'s HTTP parser refuses is answered in the envelope too', async () => {
    const head = (extra: string, target = '/api/v1/sessions') => `GET ${target} HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\n\r\n`;
    const cases: Array<[string, string, number, string]> = [
      ['headers above 16 KiB', head(`X-Big: ${'a'.repeat(20000)}\r\n`), 431, 'headers_too_large'],
      ['a URL above the parser limit', head('', `/api/v1/sessions/${'a'.repeat(20000)}`), 414, 'uri_too_long'],
      ['a URL above 8 KiB', head('', `/api/v1/sessions/${'a'.repeat(9000)}`), 414, 'uri_too_long'],
      ['a control byte in a header value', head('X-A: a\x01b\r\n'), 400, 'bad_request'],
      ['a control byte in the Content-Type', `POST /api/v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\x00\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`, 400, 'bad_request'],
      ['a space in a header name', head('Bad Header: 1\r\n'), 400, 'bad_request'],
      ['a garbage request line', 'NOT HTTP AT ALL\r\n\r\n', 400, 'bad_request'],
      ['a bad Content-Length', 'POST /api/v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'bad_request'],
    ];
    for (const [what, request, status, code] of cases) {
      const res = await rawExchange(port, request);
      expect({ what, status: res.status }).toEqual({ what, status });
      expect(res.body).toEqual({ error: { code, message: expect.any(String), details: {} } });
    }
    // the server still answers normally afterwards
    expect((await api.http().get('/healthz')).status).toBe(200);
  });

  describe('SSRF: webhook targets refused at create and update', () => {
    it.each(FORBIDDEN_TARGET_HOSTS.map((host) => `http://${host}/hook`))('%s is 422 naming WEBHOOK_ALLOW_PRIVATE_TARGETS', async (url) => {
      const res = await send('post', '/api/v1/webhooks').send({ url });
      expect(res.status).toBe(422);
      expect(res.body.error.details.fields.url[0]).toMatch(/not allowed: .*WEBHOOK_ALLOW_PRIVATE_TARGETS/);
      const patched = await send('patch', `/api/v1/webhooks/${webhookId}`).send({ url });
      expect(patched.status).toBe(422);
    });

    it('public names and addresses, IDN included, are still accepted', async () => {
      for (const url of ['https://93.184.215.14/hook', 'http://[2606:4700:4700::1111]/hook', 'http://[::ffff:0:808:808]/hook']) {
        const res = await send('post', '/api/v1/webhooks').send({ url });
        expect({ url, status: res.status }).toEqual({ url, status: 201 });
      }
    });
  });
});
