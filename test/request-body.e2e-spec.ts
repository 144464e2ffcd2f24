import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { OpenAPIObject } from '@nestjs/swagger';
import { buildOpenApiDocument } from '../apps/api/src/bootstrap';
import { startApi } from './support/api-app';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, seedStoppedSession, testDataSource } from './support/seed';

/**
 * What a request body may be (issue 37 item 6): well-formed UTF-8 only; an operation the document gives no body
 * refuses fields as every other operation refuses unknown ones; an operation whose body the document marks optional
 * takes a request without one. Both lists come from the OpenAPI document, so an operation added later is covered.
 */
type Api = Awaited<ReturnType<typeof startApi>>;
type Method = 'post' | 'put' | 'patch' | 'delete';
const WRITE_METHODS: Method[] = ['post', 'put', 'patch', 'delete'];

/** A value for each path parameter that passes its format, naming nothing that exists: the handler answers 404. */
const PARAM_VALUES: Record<string, string> = {
  jid: '15550009999@s.whatsapp.net',
  groupJid: '120363000000000000@g.us',
  messageId: 'msg_01JD8Y4ZK3V9W6T2M0QX7R5B1C',
  deliveryId: 'dlv_01JD8Y4ZK3V9W6T2M0QX7R5B1C',
  callId: 'CALL0000000000',
  labelId: '1',
};

describe('request bodies: UTF-8 only, none where the document has none, optional where it says so', () => {
  let api: Api;
  let org: SeededOrg;
  let doc: OpenAPIObject;
  let baseUrl: string;
  let session: { id: string };

  beforeAll(async () => {
    api = await startApi();
    await api.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(api.app.getHttpServer().address() as AddressInfo).port}`;
    doc = buildOpenApiDocument(api.app);
    org = await seedOrganization('Bodies Co');
    session = await seedStoppedSession(org.id, 'Original');
  });

  afterAll(async () => {
    await api?.app.close();
    await closeTestDataSource();
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      WRITE_METHODS.filter((m) => item[m]).map((method) => {
        const url = path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
          name === 'id' ? (path.startsWith('/api/v1/webhooks') ? 'whk_01JD8Y4ZK3V9W6T2M0QX7R5B1C' : 'ses_01JD8Y4ZK3V9W6T2M0QX7R5B1C') : PARAM_VALUES[name] ?? 'x',
        );
        return { path, url, method, body: item[method]!.requestBody as { required?: boolean } | undefined };
      }),
    );
  const call = (method: Method, url: string) => api.http()[method](url).set(bearer(org.adminKey));
  const sessionLabels = async () => (await (await testDataSource()).query('SELECT label FROM sessions WHERE organization_id = $1 ORDER BY label', [org.id])).map((r: { label: string }) => r.label);

  describe('a body that is not well-formed UTF-8 is 400 bad_request and stores nothing', () => {
    const raw = (hex: string) => Buffer.concat([Buffer.from('{"label":"a'), Buffer.from(hex, 'hex'), Buffer.from('b"}')]);
    /** The bytes as they are (supertest would serialize a Buffer as JSON): status and JSON answer. */
    const rawSend = async (method: string, url: string, body: Buffer, headers: Record<string, string> = {}) => {
      const res = await fetch(`${baseUrl}${url}`, { method, headers: { ...bearer(org.adminKey), 'Content-Type': 'application/json', ...headers }, body });
      return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
    };
    const rawPost = (url: string, body: Buffer, headers: Record<string, string> = {}) => rawSend('POST', url, body, headers);
    const label = async () => (await api.http().get(`/api/v1/sessions/${session.id}`).set(bearer(org.adminKey))).body.label;

    it.each([
      ['an invalid byte', 'ff'],
      ['a lone continuation byte', '80'],
      ['an overlong "/"', 'c0af'],
      ['an overlong NUL', 'c080'],
      ['a UTF-16 surrogate encoded in UTF-8', 'eda080'],
      ['a truncated sequence', 'e282'],
      ['a truncated emoji', 'f09f98'],
      ['a code point above U+10FFFF', 'f4908080'],
      ['seven invalid bytes', 'fffefdfcfbfaf9'],
    ])('%s in a session label', async (_what, hex) => {
      for (const [method, url] of [['POST', '/api/v1/sessions'], ['PATCH', `/api/v1/sessions/${session.id}`]]) {
        const res = await rawSend(method, url, raw(hex));
        expect({ method, status: res.status }).toEqual({ method, status: 400 });
        expect(res.body).toEqual({ error: { code: 'bad_request', message: 'request body is not well-formed UTF-8', details: {} } });
      }
      expect(await sessionLabels()).toEqual(['Original']);
    });

    it('on the send and batch routes (their own parsers) and inside a gzip body too', async () => {
      const session = 'ses_01JD8Y4ZK3V9W6T2M0QX7R5B1C';
      const text = (hex: string) => Buffer.concat([Buffer.from('{"to":"15551234567","text":"'), Buffer.from(hex, 'hex'), Buffer.from('"}')]);
      for (const [url, body] of [
        [`/api/v1/sessions/${session}/messages`, text('eda080')],
        [`/api/v1/sessions/${session}/messages:batch`, Buffer.concat([Buffer.from('{"messages":['), text('c0af'), Buffer.from(']}')])],
      ] as const) {
        const res = await rawPost(url, body);
        expect({ url, status: res.status, code: res.body.error?.code }).toEqual({ url, status: 400, code: 'bad_request' });
      }
      const zipped = await rawPost('/api/v1/sessions', gzipSync(raw('ff')), { 'Content-Encoding': 'gzip' });
      expect(zipped.status).toBe(400);
      expect(zipped.body.error?.code).toBe('bad_request');
    });

    it('another charset than UTF-8 is 415', async () => {
      const res = await rawPost('/api/v1/sessions', Buffer.from('{"label":"x"}', 'utf16le'), { 'Content-Type': 'application/json; charset=utf-16le' });
      expect(res.status).toBe(415);
      expect(res.body.error?.code).toBe('unsupported_media_type');
    });

    it('well-formed multi-byte text and emoji are stored as sent', async () => {
      for (const text of ['Café € 日本', 'Team 😀 👩‍👩‍👧', 'ﬁ\u{10FFFF}', 'Original']) {
        const res = await rawSend('PATCH', `/api/v1/sessions/${session.id}`, Buffer.from(JSON.stringify({ label: text }), 'utf8'));
        expect(res.status).toBe(200);
        expect(await label()).toBe(text);
      }
    });
  });

  it('every operation without a request body refuses fields as 422 validation_error naming each, and takes {} or nothing', async () => {
    const bodyless = operations().filter((o) => !o.body);
    expect(bodyless.length).toBeGreaterThan(15);
    for (const { url, method } of bodyless) {
      const none = await call(method, url);
      const empty = await call(method, url).send({});
      // the handler ran (404: nothing of that name) with no body and with {} alike
      expect({ url, method, none: none.status, empty: empty.status }).toEqual({ url, method, none: 404, empty: 404 });
      const fields = await call(method, url).send({ reason: 'spam', unexpected: 1 });
      expect({ url, method, status: fields.status }).toEqual({ url, method, status: 422 });
      expect(fields.body).toEqual({
        error: {
          code: 'validation_error',
          message: 'request is invalid',
          details: { fields: { reason: ['property reason should not exist'], unexpected: ['property unexpected should not exist'] } },
        },
      });
      const list = await call(method, url).send([1]);
      expect({ url, method, status: list.status, code: list.body.error.code }).toEqual({ url, method, status: 422, code: 'validation_error' });
    }
    // credentials are still checked first
    const anonymous = await api.http().post(bodyless.find((o) => o.method === 'post')!.url).send({ unexpected: 1 });
    expect(anonymous.status).toBe(401);
  });

  it('every operation whose body is optional takes a request without one as {}, and still refuses unknown fields', async () => {
    const optional = operations().filter((o) => o.body && o.body.required !== true);
    expect(optional.map((o) => o.path)).toContain('/api/v1/sessions/{id}/chats/{jid}:read');
    for (const { url, method } of optional) {
      const none = await call(method, url);
      const empty = await call(method, url).send({});
      expect({ url, method, none: none.status, empty: empty.status }).toEqual({ url, method, none: 404, empty: 404 });
      const unknown = await call(method, url).send({ unexpected: 1 });
      expect({ url, method, status: unknown.status, fields: unknown.body.error.details.fields }).toEqual({ url, method, status: 422, fields: { unexpected: [expect.any(String)] } });
    }
  });

  it('an operation that needs a body still refuses a request without one', async () => {
    const res = await call('post', '/api/v1/webhooks');
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields).toEqual({ body: ['must be a JSON object'] });
  });
});
