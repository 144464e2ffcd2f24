import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { newId, OrganizationsRepository, Session } from '@app/database';
import { buildOpenApiDocument } from '../apps/api/src/bootstrap';
import { startApi } from './support/api-app';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, testDataSource, testDb } from './support/seed';

/**
 * Property-based fuzz over every write operation of the OpenAPI document (issue 12 item 8): arbitrary JSON bodies,
 * the operation's own field names with values of any type, hostile strings (NUL, unicode, huge numbers, nesting).
 * Whatever comes in: never a 500, every refusal in the error envelope, and a refusal changes none of the
 * organization's rows. 501/503 are allowed only as the product's own answers (`not_implemented`,
 * `gateway_unavailable`): no gateway runs in this suite, so commands that need one say so.
 */
const CASES_PER_OPERATION = Number(process.env.FUZZ_CASES_PER_OPERATION ?? 150);
const ALLOWED_5XX: Record<number, string> = { 501: 'not_implemented', 503: 'gateway_unavailable' };

interface WriteOperation {
  id: string;
  method: 'post' | 'patch' | 'put' | 'delete';
  path: string;
  fields: string[];
}

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 40 }).map((s) => `${s}\u0000${s}`),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\uD800', '😀'.repeat(50), 'x'.repeat(5000), '__proto__', 'constructor', '../../etc', '%00', 'http://LOCALHOST.', 'https://[::ffff:7f00:1]/'),
);
const hostileNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 1e-320), fc.bigInt().map((b) => Number(b)));
const nested = fc.integer({ min: 20, max: 400 }).map((depth) => {
  let v: unknown = 'deep';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
});
const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 4 }), hostileString, hostileNumber, nested, fc.constant(null));

describe('fuzzed write endpoints (issue 12 item 8)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let db: DataSource;
  let org: SeededOrg;
  let operations: WriteOperation[];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    api = await startApi();
    db = await testDataSource();
    org = await seedOrganization('Fuzzed');
    const doc = buildOpenApiDocument(api.app);
    const schemas = (doc.components?.schemas ?? {}) as Record<string, { properties?: Record<string, unknown> }>;
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      (['post', 'patch', 'put', 'delete'] as const)
        .filter((m) => item[m])
        .map((method) => {
          const ref = (item[method]!.requestBody as { content?: Record<string, { schema?: { $ref?: string } }> } | undefined)?.content?.['application/json']?.schema?.$ref;
          const fields = Object.keys(schemas[ref?.split('/').pop() ?? '']?.properties ?? {});
          return { id: item[method]!.operationId!, method, path, fields };
        }),
    );
    const session = await db.getRepository(Session).save({
      id: newId('ses'),
      organizationId: org.id,
      createdByUserId: null,
      gatewayId: null,
      label: 'fuzzed',
      status: 'stopped',
      desiredState: 'stopped',
    } as Partial<Session>);
    ids.session = session.id;
    ids.member = org.users.viewer.id;
    // a key of its own to change and revoke, never the fuzzer's
    ids.apiKey = (await org.apiKey(['sessions:read'])).id;
    ids.webhook = (await api.http().post('/api/v1/webhooks').set(bearer(org.adminKey)).send({ url: 'https://example.com/fuzz' }).expect(201)).body.id;
    ids.sink = (
      await api.http().post('/api/v1/event-sinks').set(bearer(org.adminKey)).send({ kind: 'amqp', url: 'amqp://fuzz:secret@rabbitmq.example.com/', exchange: 'fuzz' }).expect(201)
    ).body.id;
    // a valid create would otherwise need a live gateway; at quota it is refused before placement (and changes nothing)
    await new OrganizationsRepository(await testDb()).setQuotas(org.id, { sessions: 1 });
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
  });

  /** Every row the organization holds, as one digest per table. */
  const snapshot = async () =>
    (
      await db.query(
        `SELECT
          (SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY id), '')) FROM sessions t WHERE organization_id = $1) AS sessions,
          (SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY id), '')) FROM webhooks t WHERE organization_id = $1) AS webhooks,
          (SELECT count(*) FROM messages WHERE organization_id = $1) AS messages,
          (SELECT count(*) FROM groups WHERE organization_id = $1) AS groups,
          (SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY id), '')) FROM contacts t WHERE organization_id = $1) AS contacts,
          (SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY jid), '')) FROM chats t WHERE organization_id = $1) AS chats,
          (SELECT count(*) FROM status_posts p JOIN sessions s ON s.id = p.session_id WHERE s.organization_id = $1) AS status_posts,
          (SELECT count(*) FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE w.organization_id = $1) AS deliveries,
          (SELECT md5(coalesce(string_agg(concat_ws('|', id, name, permissions, session_ids, allowed_ips, expires_at, revoked_at), ',' ORDER BY id), '')) FROM api_keys WHERE organization_id = $1) AS api_keys,
          (SELECT md5(coalesce(string_agg(concat_ws('|', id, email, role, name, password_hash, token_version, deleted_at), ',' ORDER BY id), '')) FROM users WHERE organization_id = $1) AS users,
          (SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY id), '')) FROM invitations t WHERE organization_id = $1) AS invitations,
          (SELECT count(*) FROM password_resets r JOIN users u ON u.id = r.user_id WHERE u.organization_id = $1) AS password_resets,
          (SELECT name FROM organizations WHERE id = $1) AS organization`,
        [org.id],
      )
    )[0];

  const pathOf = (op: WriteOperation, param: string | null) =>
    op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
      if (param !== null) return [...Buffer.from(param, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
      if (name === 'userId') return ids.member;
      if (name === 'id' && op.path.startsWith('/api/v1/api-keys')) return ids.apiKey;
      if (name === 'id') return op.path.startsWith('/api/v1/webhooks') ? ids.webhook : op.path.startsWith('/api/v1/event-sinks') ? ids.sink : ids.session;
      return newId('dlv');
    });

  it('never answers 500, always the envelope on a refusal, and a refusal changes nothing', async () => {
    // one line per (kind, status, operation), with its first counterexample, so a report reads at a glance
    const failures = new Map<string, string>();
    const fail = (kind: string, status: number, op: WriteOperation, example: string) => {
      const k = `${kind} ${status} ${op.id}`;
      if (!failures.has(k)) failures.set(k, example);
    };
    let state = await snapshot();
    let cases = 0;
    // printed with any failure: FUZZ_SEED=<seed> replays the run
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    for (const op of operations) {
      const body = fc.oneof(
        { weight: 3, arbitrary: op.fields.length ? fc.dictionary(fc.constantFrom(...op.fields), anyValue, { maxKeys: op.fields.length }) : fc.jsonValue() },
        { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 5 }) },
        { weight: 1, arbitrary: nested },
        { weight: 1, arbitrary: fc.dictionary(hostileString, anyValue, { maxKeys: 5 }) },
      );
      const param = fc.option(hostileString, { freq: 4 });
      await fc.assert(
        fc.asyncProperty(body, param, async (payload, id) => {
          cases++;
          const res = await api.http()[op.method](pathOf(op, id)).set(bearer(org.adminKey)).set('Content-Type', 'application/json').send(JSON.stringify(payload));
          const where = `${op.id} ${JSON.stringify(id)} ${JSON.stringify(payload)?.slice(0, 300)}`;
          if (res.status >= 500 && ALLOWED_5XX[res.status] !== res.body?.error?.code) fail('5xx', res.status, op, where);
          if (res.status >= 400 && typeof res.body?.error?.code !== 'string') fail('no envelope', res.status, op, where);
          const after = await snapshot();
          if (res.status >= 400 && JSON.stringify(after) !== JSON.stringify(state)) fail('refused but changed rows', res.status, op, where);
          state = after;
          return true;
        }),
        { numRuns: CASES_PER_OPERATION, seed },
      );
    }
    expect(cases).toBeGreaterThanOrEqual(operations.length * CASES_PER_OPERATION);
    expect({ seed, failures: [...failures].map(([k, example]) => `${k}: ${example}`) }).toEqual({ seed, failures: [] });
  }, 400_000);
});
