import { DataSource } from 'typeorm';
import { EVENT_TYPES } from '@app/contracts';
import { newId, Session, Webhook } from '@app/database';
import { startApi } from './support/api-app';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, testDataSource } from './support/seed';

describe('webhook registration API (seed 4.4 to 4.6)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let acme: SeededOrg;
  let globex: SeededOrg;
  let db: DataSource;
  // the seed's 2.3 fields plus issue 23's delivery controls (additive)
  const SEED_FIELDS = ['active', 'createdAt', 'customHeaders', 'disabledAt', 'disabledReason', 'events', 'id', 'organizationId', 'rateLimitPerSecond', 'retryPolicy', 'sessionId', 'updatedAt', 'url'];

  beforeAll(async () => {
    api = await startApi();
    acme = await seedOrganization('Acme');
    globex = await seedOrganization('Globex');
    db = await testDataSource();
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
  });

  const create = (org: SeededOrg, body: unknown) => api.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).send(body as object);
  const makeSession = async (org: SeededOrg) =>
    (
      await db.getRepository(Session).save({
        id: newId('ses'),
        organizationId: org.id,
        createdByUserId: null,
        gatewayId: null,
        label: 'test',
        status: 'stopped',
        desiredState: 'stopped',
      } as Partial<Session>)
    ).id;

  it('creates with the defaults of CONTRACT 4 and exactly the seed fields', async () => {
    const before = Date.now();
    const res = await create(acme, { url: 'https://example.com/hook' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(SEED_FIELDS);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^whk_/),
      organizationId: acme.id,
      url: 'https://example.com/hook',
      events: ['*'],
      sessionId: null,
      active: true,
      customHeaders: {},
      retryPolicy: { policy: 'exponential', delaySeconds: 2, attempts: 15 },
    });
    expect(res.body.createdAt).toBeGreaterThanOrEqual(before - 1000);
    expect(res.body.updatedAt).toBe(res.body.createdAt);
  });

  it('completes a partial retryPolicy with the defaults and keeps every given field', async () => {
    const sessionId = await makeSession(acme);
    const res = await create(acme, {
      url: 'http://example.com/a',
      events: ['message.received', 'session.connected'],
      sessionId,
      active: false,
      customHeaders: { 'X-Tenant': 'acme', Authorization: 'Bearer downstream' },
      retryPolicy: { policy: 'linear', attempts: 5 },
      secret: 'shh',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      events: ['message.received', 'session.connected'],
      sessionId,
      active: false,
      customHeaders: { 'X-Tenant': 'acme', Authorization: 'Bearer downstream' },
      retryPolicy: { policy: 'linear', delaySeconds: 2, attempts: 5 },
    });
  });

  it('accepts header values with Latin-1 text and tabs, and private targets while WEBHOOK_ALLOW_PRIVATE_TARGETS=true', async () => {
    const headers = await create(acme, { url: 'https://example.com/latin', customHeaders: { 'X-A': 'caf\u00e9\tok', 'X-Proxy-Note': 'not a proxy header' } });
    expect(headers.status).toBe(201);
    expect(headers.body.customHeaders).toEqual({ 'X-A': 'caf\u00e9\tok', 'X-Proxy-Note': 'not a proxy header' });
    // this file runs with private targets allowed, as on-premise deployments do: nothing of the SSRF guard applies
    for (const url of ['http://127.0.0.1:9/hook', 'http://LOCALHOST./hook', 'http://metadata.google.internal/x', 'http://[::ffff:0:7f00:1]/hook']) {
      const res = await create(acme, { url });
      expect({ url, status: res.status }).toEqual({ url, status: 201 });
      expect(res.body.url).toBe(url);
    }
  });

  it('accepts an empty events list (delivers nothing) and stores it as such', async () => {
    const res = await create(acme, { url: 'https://example.com/none', events: [] });
    expect(res.status).toBe(201);
    expect(res.body.events).toEqual([]);
  });

  describe('validation: 422 validation_error naming the field, nothing stored', () => {
    const cases: [string, unknown, string][] = [
      ['url missing', {}, 'url'],
      ['url not a URL', { url: 'not a url' }, 'url'],
      ['url relative', { url: '/hooks' }, 'url'],
      ['url with another scheme', { url: 'ftp://example.com/x' }, 'url'],
      ['url too long', { url: `https://example.com/${'a'.repeat(2048)}` }, 'url'],
      ['url not a string', { url: 42 }, 'url'],
      ['events not an array', { url: 'https://example.com', events: 'message.received' }, 'events'],
      ['events with an empty string', { url: 'https://example.com', events: [''] }, 'events'],
      ['events with a non-string', { url: 'https://example.com', events: [1] }, 'events'],
      ['sessionId unknown', { url: 'https://example.com', sessionId: 'ses_nope' }, 'sessionId'],
      ['active not boolean', { url: 'https://example.com', active: 'yes' }, 'active'],
      ['customHeaders not an object', { url: 'https://example.com', customHeaders: ['a'] }, 'customHeaders'],
      ['customHeaders value not a string', { url: 'https://example.com', customHeaders: { 'X-A': 1 } }, 'customHeaders'],
      ['customHeaders invalid name', { url: 'https://example.com', customHeaders: { 'Bad Name': 'x' } }, 'customHeaders'],
      ['customHeaders CR/LF in value', { url: 'https://example.com', customHeaders: { 'X-A': 'a\r\nX-Injected: 1' } }, 'customHeaders'],
      ['customHeaders Host', { url: 'https://example.com', customHeaders: { Host: 'evil' } }, 'customHeaders'],
      ['customHeaders Content-Length', { url: 'https://example.com', customHeaders: { 'content-length': '1' } }, 'customHeaders'],
      ['customHeaders Transfer-Encoding', { url: 'https://example.com', customHeaders: { 'Transfer-Encoding': 'chunked' } }, 'customHeaders'],
      ['customHeaders Connection', { url: 'https://example.com', customHeaders: { Connection: 'close' } }, 'customHeaders'],
      ['retryPolicy not an object', { url: 'https://example.com', retryPolicy: 'fast' }, 'retryPolicy'],
      ['retryPolicy.policy unknown', { url: 'https://example.com', retryPolicy: { policy: 'fibonacci' } }, 'retryPolicy.policy'],
      ['retryPolicy.delaySeconds 0', { url: 'https://example.com', retryPolicy: { delaySeconds: 0 } }, 'retryPolicy.delaySeconds'],
      ['retryPolicy.delaySeconds too big', { url: 'https://example.com', retryPolicy: { delaySeconds: 3601 } }, 'retryPolicy.delaySeconds'],
      ['retryPolicy.delaySeconds fractional', { url: 'https://example.com', retryPolicy: { delaySeconds: 1.5 } }, 'retryPolicy.delaySeconds'],
      ['retryPolicy.attempts 0', { url: 'https://example.com', retryPolicy: { attempts: 0 } }, 'retryPolicy.attempts'],
      ['retryPolicy.attempts 31', { url: 'https://example.com', retryPolicy: { attempts: 31 } }, 'retryPolicy.attempts'],
      ['retryPolicy unknown field', { url: 'https://example.com', retryPolicy: { jitter: true } }, 'retryPolicy.jitter'],
      ['unknown body field', { url: 'https://example.com', colour: 'blue' }, 'colour'],
      ['secret empty', { url: 'https://example.com', secret: '' }, 'secret'],
      ['secret not a string', { url: 'https://example.com', secret: 123 }, 'secret'],
      ['url with a leading space', { url: ' https://example.com/hook' }, 'url'],
      ['url with a trailing newline', { url: 'https://example.com/hook\n' }, 'url'],
      ['url with a tab inside', { url: 'https://exam\tple.com/hook' }, 'url'],
      ['url with user:pass@', { url: 'https://user:pass@example.com/hook' }, 'url'],
      ['url with an empty userinfo', { url: 'https://@example.com/hook' }, 'url'],
      ['customHeaders value beyond Latin-1', { url: 'https://example.com', customHeaders: { 'X-A': 'caf\u00e9 \u2603' } }, 'customHeaders'],
      ['customHeaders value with a control character', { url: 'https://example.com', customHeaders: { 'X-A': 'a\u0007b' } }, 'customHeaders'],
      ['customHeaders value with DEL', { url: 'https://example.com', customHeaders: { 'X-A': 'a\u007fb' } }, 'customHeaders'],
      ['customHeaders Expect', { url: 'https://example.com', customHeaders: { Expect: '100-continue' } }, 'customHeaders'],
      ['customHeaders Upgrade', { url: 'https://example.com', customHeaders: { Upgrade: 'websocket' } }, 'customHeaders'],
      ['customHeaders Keep-Alive', { url: 'https://example.com', customHeaders: { 'Keep-Alive': 'timeout=5' } }, 'customHeaders'],
      ['customHeaders TE', { url: 'https://example.com', customHeaders: { TE: 'trailers' } }, 'customHeaders'],
      ['customHeaders Trailer', { url: 'https://example.com', customHeaders: { Trailer: 'X-A' } }, 'customHeaders'],
      ['customHeaders Proxy-Authorization', { url: 'https://example.com', customHeaders: { 'Proxy-Authorization': 'Basic x' } }, 'customHeaders'],
      ['customHeaders Proxy-Connection', { url: 'https://example.com', customHeaders: { 'proxy-connection': 'close' } }, 'customHeaders'],
    ];
    it.each(cases)('%s', async (_, body, field) => {
      const before = await db.getRepository(Webhook).count({ where: { organizationId: acme.id } });
      const res = await create(acme, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(Object.keys(res.body.error.details.fields)).toContain(field);
      expect(await db.getRepository(Webhook).count({ where: { organizationId: acme.id } })).toBe(before);
    });

    it('another organization\'s session is refused as sessionId', async () => {
      const foreign = await makeSession(globex);
      const res = await create(acme, { url: 'https://example.com', sessionId: foreign });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.error.details.fields)).toEqual(['sessionId']);
    });

    it.each([
      ['malformed JSON', '{"url": "https://example.com",'],
      ['a JSON array', '[{"url": "https://example.com"}]'],
      ['a JSON string', '"https://example.com"'],
      ['a JSON number', '42'],
      ['JSON null', 'null'],
    ])('a body that is %s', async (_, raw) => {
      const res = await api.http().post('/api/v1/webhooks').set(bearer(acme.adminKey)).set('Content-Type', 'application/json').send(raw);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.fields).toHaveProperty('body');
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.js|node_modules/);
    });
  });

  it('GET returns the webhook, GET list paginates, both without the secret', async () => {
    const org = await seedOrganization('Lister');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(org, { url: `https://example.com/${i}`, secret: `sec-${i}` })).body.id);
    const one = await api.http().get(`/api/v1/webhooks/${ids[2]}`).set(bearer(org.adminKey));
    expect(one.status).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(SEED_FIELDS);
    expect(one.body.url).toBe('https://example.com/2');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { data: { id: string }[]; nextCursor: string | null } } = await api
        .http()
        .get('/api/v1/webhooks')
        .query(cursor ? { limit: 2, cursor } : { limit: 2 })
        .set(bearer(org.adminKey));
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      for (const w of page.body.data) expect(Object.keys(w).sort()).toEqual(SEED_FIELDS);
      seen.push(...page.body.data.map((w) => w.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const bad = await api.http().get('/api/v1/webhooks').query({ limit: 0 }).set(bearer(org.adminKey));
    expect(bad.status).toBe(422);
  });

  it('the secret is never returned and never stored in plaintext', async () => {
    const secret = 'plaintext-secret-value-7f3a';
    const created = await create(acme, { url: 'https://example.com/s', secret });
    const id = created.body.id;
    const responses = [
      created,
      await api.http().get(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey)),
      await api.http().get('/api/v1/webhooks').query({ limit: 100 }).set(bearer(acme.adminKey)),
      await api.http().patch(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey)).send({ secret: 'rotated-secret-value-9c1d' }),
    ];
    for (const res of responses) {
      expect(res.status).toBeLessThan(300);
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain('rotated-secret-value-9c1d');
      expect(res.text).not.toMatch(/secret/i);
    }
    const [row] = await db.query('SELECT * FROM webhooks WHERE id = $1', [id]);
    expect(JSON.stringify(row)).not.toContain('rotated-secret-value-9c1d');
    expect(row.secret_encrypted).toMatch(/^v1\.[0-9a-f]{8}\./);
  });

  it('secret rotation: a new value replaces it, omitting keeps it, null clears it', async () => {
    const id = (await create(acme, { url: 'https://example.com/r', secret: 'first' })).body.id;
    const stored = async () => (await db.getRepository(Webhook).findOneByOrFail({ id })).secretEncrypted;
    const first = await stored();
    await api.http().patch(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey)).send({ active: false }).expect(200);
    expect(await stored()).toBe(first);
    await api.http().patch(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey)).send({ secret: 'second' }).expect(200);
    const second = await stored();
    expect(second).not.toBe(first);
    expect(second).not.toBeNull();
    await api.http().patch(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey)).send({ secret: null }).expect(200);
    expect(await stored()).toBeNull();
  });

  it('rateLimitPerSecond: optional whole number 1-10000, null clears it; re-enabling clears a disabled state', async () => {
    for (const bad of [0, 1.5, 10_001, 'fast']) {
      const res = await create(acme, { url: 'https://example.com/limited', rateLimitPerSecond: bad });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.error.details.fields)).toEqual(['rateLimitPerSecond']);
    }
    const created = await create(acme, { url: 'https://example.com/limited', rateLimitPerSecond: 5 });
    expect(created.body).toMatchObject({ rateLimitPerSecond: 5, disabledAt: null, disabledReason: null });
    const id = created.body.id as string;
    const cleared = await api.http().patch(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey)).send({ rateLimitPerSecond: null });
    expect(cleared.body.rateLimitPerSecond).toBeNull();
    // as the dispatchers leave a webhook they disabled (test/webhook-fairness.e2e-spec.ts covers the whole path)
    await db.query(`UPDATE webhooks SET active = false, disabled_at = now(), disabled_reason = 'failing', failing_since = now() WHERE id = $1`, [id]);
    const disabled = await api.http().get(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey));
    expect(disabled.body).toMatchObject({ active: false, disabledAt: expect.any(Number), disabledReason: 'failing' });
    const enabled = await api.http().patch(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey)).send({ active: true });
    expect(enabled.body).toMatchObject({ active: true, disabledAt: null, disabledReason: null });
    const [row] = await db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [id]);
    expect(row.failing_since).toBeNull();
  });

  it('a partial PATCH leaves the other fields as they were', async () => {
    const sessionId = await makeSession(acme);
    const original = (
      await create(acme, {
        url: 'https://example.com/p',
        events: ['message.received'],
        sessionId,
        customHeaders: { 'X-A': '1' },
        retryPolicy: { policy: 'constant', delaySeconds: 7, attempts: 4 },
      })
    ).body;
    const res = await api.http().patch(`/api/v1/webhooks/${original.id}`).set(bearer(acme.adminKey)).send({ events: ['*'], retryPolicy: { attempts: 9 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...original,
      events: ['*'],
      retryPolicy: { policy: 'constant', delaySeconds: 7, attempts: 9 },
      updatedAt: expect.any(Number),
    });
    expect(res.body.updatedAt).toBeGreaterThanOrEqual(original.updatedAt);
    const cleared = await api.http().patch(`/api/v1/webhooks/${original.id}`).set(bearer(acme.adminKey)).send({ sessionId: null });
    expect(cleared.body.sessionId).toBeNull();
    expect(cleared.body.url).toBe('https://example.com/p');
  });

  it('a failed PATCH changes nothing', async () => {
    const original = (await create(acme, { url: 'https://example.com/f', secret: 'keep-me' })).body;
    const row = async () => db.getRepository(Webhook).findOneByOrFail({ id: original.id });
    const before = await row();
    for (const body of [
      { url: 'https://example.com/changed', events: 'nope' },
      { active: false, retryPolicy: { attempts: 99 } },
      { url: null },
      { events: null },
      { customHeaders: { Host: 'x' }, active: false },
      { sessionId: 'ses_missing', url: 'https://example.com/changed' },
      { secret: 'new', unknownField: 1 },
    ]) {
      const res = await api.http().patch(`/api/v1/webhooks/${original.id}`).set(bearer(acme.adminKey)).send(body);
      expect(res.status).toBe(422);
      expect(await row()).toEqual(before);
    }
    const malformed = await api.http().patch(`/api/v1/webhooks/${original.id}`).set(bearer(acme.adminKey)).set('Content-Type', 'application/json').send('{"active": fal');
    expect(malformed.status).toBe(422);
    expect(await row()).toEqual(before);
  });

  it('another organization\'s webhook is 404 on GET, PATCH and DELETE and absent from its list', async () => {
    const mine = (await create(acme, { url: 'https://example.com/mine' })).body;
    for (const req of [
      api.http().get(`/api/v1/webhooks/${mine.id}`),
      api.http().patch(`/api/v1/webhooks/${mine.id}`).send({ active: false }),
      api.http().delete(`/api/v1/webhooks/${mine.id}`),
    ]) {
      const res = await req.set(bearer(globex.adminKey));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String), details: {} } });
    }
    const list = await api.http().get('/api/v1/webhooks').query({ limit: 100 }).set(bearer(globex.adminKey));
    expect(list.body.data.map((w: { id: string }) => w.id)).not.toContain(mine.id);
    const still = await api.http().get(`/api/v1/webhooks/${mine.id}`).set(bearer(acme.adminKey));
    expect(still.body.active).toBe(true);
  });

  it('events takes `*` and the catalog\'s names only: a typo is 422 naming the known ones, on create and on PATCH', async () => {
    for (const events of [['*'], [...EVENT_TYPES], ['message.received', 'message.ack'], []]) {
      const res = await create(acme, { url: 'https://example.com/events', events });
      expect({ events, status: res.status }).toEqual({ events, status: 201 });
      expect(res.body.events).toEqual(events);
    }
    const typo = await create(acme, { url: 'https://example.com/events', events: ['message.received', 'mesage.received'] });
    expect(typo.status).toBe(422);
    expect(typo.body.error.code).toBe('validation_error');
    const [message] = typo.body.error.details.fields.events as string[];
    expect(message).toContain('"mesage.received"');
    for (const known of ['*', ...EVENT_TYPES]) expect(message).toContain(known);
    // names that do not exist even though they sound right (CONTRACT 6 has `message.ack` for both)
    for (const name of ['message.delivered', 'message.read', 'MESSAGE.RECEIVED', '*.*']) {
      expect((await create(acme, { url: 'https://example.com/events', events: [name] })).status).toBe(422);
    }
    const hook = (await create(acme, { url: 'https://example.com/events' }).expect(201)).body;
    const patch = await api.http().patch(`/api/v1/webhooks/${hook.id}`).set(bearer(acme.adminKey)).send({ events: ['session.statsu'] });
    expect(patch.status).toBe(422);
    expect(patch.body.error.details.fields.events[0]).toContain('session.status');
    expect((await api.http().get(`/api/v1/webhooks/${hook.id}`).set(bearer(acme.adminKey))).body.events).toEqual(['*']);
  });

  it('unknown ids are 404; DELETE is 204 and the webhook is gone', async () => {
    expect((await api.http().get('/api/v1/webhooks/whk_unknown').set(bearer(acme.adminKey))).status).toBe(404);
    expect((await api.http().patch('/api/v1/webhooks/whk_unknown').set(bearer(acme.adminKey)).send({ active: true })).status).toBe(404);
    const id = (await create(acme, { url: 'https://example.com/d' })).body.id;
    const del = await api.http().delete(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey));
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await api.http().get(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey))).status).toBe(404);
    expect((await api.http().delete(`/api/v1/webhooks/${id}`).set(bearer(acme.adminKey))).status).toBe(404);
  });
});
