import { ERROR_STATUS } from '@app/contracts';
import { newId } from '@app/database';
import { buildOpenApiDocument } from '../apps/api/src/bootstrap';
import { startApi } from './support/api-app';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, seedStoppedSession } from './support/seed';

type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';
interface Documented {
  id: string;
  method: Method;
  path: string;
  summary?: string;
  description?: string;
  responses: Record<string, Response & { $ref?: string }>;
  security?: unknown[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
}

type Response = { content?: Record<string, { schema?: { $ref?: string }; example?: { error?: { code?: string } } }> };

/** Swagger as good as the API (issue 13 item 6): what Swagger UI shows is what the API does. */
describe('the OpenAPI document a user tries calls from', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let org: SeededOrg;
  let operations: Documented[];
  let components: { responses: Record<string, Response> };

  beforeAll(async () => {
    api = await startApi();
    org = await seedOrganization('Swagger Co');
    const doc = buildOpenApiDocument(api.app);
    components = doc.components as unknown as typeof components;
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      (['get', 'post', 'patch', 'delete', 'put'] as const)
        .filter((m) => item[m])
        .map((method) => ({ ...(item[method] as unknown as Documented), id: item[method]!.operationId!, method, path })),
    );
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
  });

  it('gives every operation a summary and a description', () => {
    expect(operations.filter((o) => !o.summary?.trim() || !o.description?.trim()).map((o) => o.id)).toEqual([]);
  });

  it('documents every error status with the envelope schema and an example of that status\'s code', () => {
    const wrong: string[] = [];
    for (const op of operations) {
      const errors = Object.entries(op.responses).filter(([status]) => Number(status) >= 400);
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      if (!isPublic && !errors.some(([status]) => status === '401')) wrong.push(`${op.id}: no 401`);
      for (const [status, declared] of errors) {
        // the readiness probe's 503 is its own body (which check failed), not an error
        if (op.id === 'Health_readyz' && status === '503') continue;
        const response = declared.$ref ? components.responses[declared.$ref.split('/').pop()!] : declared;
        const json = response.content?.['application/json'];
        const code = json?.example?.error?.code as keyof typeof ERROR_STATUS | undefined;
        if (json?.schema?.$ref !== '#/components/schemas/ErrorEnvelope') wrong.push(`${op.id} ${status}: not the envelope`);
        if (!code || String(ERROR_STATUS[code]) !== status) wrong.push(`${op.id} ${status}: example code ${code}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('answers a refused call with a status its operation documents', async () => {
    const viewer = await org.apiKey(['sessions:read']);
    for (const op of operations.filter((o) => o.id !== 'Auth_login')) {
      const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => `${name}-${newId('msg')}`);
      for (const headers of [{}, bearer(viewer.token)]) {
        const res = await api.http()[op.method](path).set(headers);
        if (res.status >= 400) expect({ op: op.id, status: res.status, documented: String(res.status) in op.responses }).toMatchObject({ documented: true });
      }
    }
  });

  it('has request examples that pass validation when tried, and the webhook ones succeed', async () => {
    const session = await seedStoppedSession(org.id, 'examples');
    const created = await api.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).send({ url: 'https://example.com/examples' }).expect(201);
    const sink = await api.http().post('/api/v1/event-sinks').set(bearer(org.adminKey)).send({ kind: 'nats', url: 'nats://nats.example.com:4222' }).expect(201);
    const withExamples = operations.filter((o) => o.requestBody);
    expect(withExamples.map((o) => o.id).sort()).toEqual(
      [
        'Auth_login', 'Messages_send', 'Sessions_create', 'Sessions_createGroup', 'Sessions_requestCode', 'Sessions_update', 'Webhooks_create', 'Webhooks_update',
        'Contacts_accountPresence', 'Contacts_chatPresence', 'Contacts_check', 'Profile_setPicture', 'Profile_update',
        'AccountExtras_addLabel', 'AccountExtras_follow', 'AccountExtras_postStatus', 'Chats_mute', 'Chats_read', 'Groups_join',
        'Groups_participants', 'Groups_setPicture', 'Groups_update', 'MessageActions_edit', 'MessageActions_forward', 'Messages_sendBatch',
        'EventSinks_create', 'EventSinks_update', 'Campaigns_create', 'Account_accept', 'Account_change', 'Account_reset',
        'Organization_changeRole', 'Organization_createKey', 'Organization_invite', 'Organization_update', 'Organization_updateKey',
        'ChatwootIntegration_put', 'ChatwootWebhook_webhook',
      ].sort(),
    );
    for (const op of withExamples) {
      const examples = Object.values(op.requestBody!.content['application/json'].examples ?? {});
      expect(examples.length).toBeGreaterThan(0);
      // the other path parameters get well-formed values (the example is about the body: a 404 or 409 is fine)
      const path = op.path
        .replace('{id}', op.path.startsWith('/api/v1/webhooks') ? created.body.id : op.path.startsWith('/api/v1/event-sinks') ? sink.body.id : session.id)
        .replace('{jid}', '15551234567@s.whatsapp.net')
        .replace('{groupJid}', '120363000000000000@g.us')
        .replace('{messageId}', 'msg_01JD8Y4ZK3V9W6T2M0QX7R5B1C')
        .replace('{userId}', 'usr_01JD8Y4ZK3V9W6T2M0QX7R5B1C');
      for (const { value } of examples) {
        // a session an example names (a scoped key's sessionIds) is the seeded one: the example is about the shape
        const body = JSON.parse(JSON.stringify(value).replaceAll('ses_01JD3Z8Q5W7N2K4M6P8R0T2V4X', session.id));
        const res = await api.http()[op.method](path).set(bearer(org.adminKey)).send(body as object);
        expect({ op: op.id, status: res.status, code: res.body?.error?.code }).not.toMatchObject({ code: 'validation_error' });
        if (op.id === 'Webhooks_create') expect(res.status).toBe(201);
        if (op.id === 'Webhooks_update') expect(res.status).toBe(200);
        if (op.id === 'EventSinks_create' || op.id === 'EventSinks_update') expect({ op: op.id, status: res.status }).toEqual({ op: op.id, status: op.id === 'EventSinks_create' ? 201 : 200 });
        if (op.id === 'Sessions_update') expect(res.status).toBe(200);
      }
    }
  });

  it('keeps the authorization across reloads of Swagger UI and types the QR PNG as an image', async () => {
    const init = await api.http().get('/api/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toMatch(/"persistAuthorization":\s*true/);
    const qr = operations.find((o) => o.id === 'Sessions_qr')!;
    expect(Object.keys(qr.responses['200'].content ?? {}).sort()).toEqual(['application/json', 'image/png']);
    const doc = await api.http().get('/api/docs-json');
    expect(doc.body.info.description).toContain('/api/v1/ws');
    expect(doc.body.info.description).toContain('message.received');
    expect(doc.body.components.securitySchemes['api-key']).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }));
  });
});
