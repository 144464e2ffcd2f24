import { DataSource } from 'typeorm';
import { newId } from '@app/database';
import { startApi } from './support/api-app';
import { bearer, closeTestDataSource, seedOrganization, SeededOrg, testDataSource } from './support/seed';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, asserted field by field
type Json = any;

const HOUR = 3600_000;
const hourOf = (t: number) => Math.floor(t / HOUR) * HOUR;

/**
 * `GET /stats/overview` (the dashboard's Overview) on the run's PostgreSQL: rows are written at chosen times (a test
 * cannot wait hours for traffic to fall into other hours), then the endpoint's buckets, latency percentile, failing
 * webhooks and organization scope are checked. The dashboard e2e shows the same figures for traffic it makes.
 */
describe('GET /stats/overview', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let acme: SeededOrg;
  let globex: SeededOrg;
  let db: DataSource;
  const now = Date.now();
  let failingHook: string;

  const session = async (org: SeededOrg, status: string) => {
    const id = newId('ses');
    await db.query(`INSERT INTO sessions (id, organization_id, label, status) VALUES ($1, $2, $3, $4)`, [id, org.id, `s-${status}`, status]);
    return id;
  };
  const message = (org: SeededOrg, sessionId: string, direction: 'in' | 'out', at: number, fromHistory = false) =>
    db.query(
      `INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, type, status, created_at, from_history)
       VALUES ($1, $2, $3, $4, $5, '15550001111@s.whatsapp.net', 'text', $6, $7, $8)`,
      [newId('msg'), org.id, sessionId, newId('msg').slice(4), direction, direction === 'in' ? 'received' : 'sent', new Date(at), fromHistory],
    );
  const webhook = async (org: SeededOrg, url: string, failingSince: number | null) => {
    const id = newId('whk');
    await db.query(
      `INSERT INTO webhooks (id, organization_id, url, events, retry_policy, failing_since) VALUES ($1, $2, $3, '{*}', '{"policy":"constant","delaySeconds":1,"attempts":1}', $4)`,
      [id, org.id, url, failingSince === null ? null : new Date(failingSince)],
    );
    return id;
  };
  const delivery = (org: SeededOrg, webhookId: string, at: number, d: { status: string; latencyMs?: number; error?: string; code?: number }) =>
    db.query(
      `INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, last_status_code, last_error, created_at, updated_at, delivered_at)
       VALUES ($1, $2, $3, $4, 'message.received', $5, 1, $6, $7, $8, $8, $9)`,
      [newId('dlv'), webhookId, newId('evt'), org.id, d.status, d.code ?? null, d.error ?? null, new Date(at), d.latencyMs === undefined ? null : new Date(at + d.latencyMs)],
    );
  const overview = async (token: string): Promise<Json> => {
    const res = await api.http().get('/api/v1/stats/overview').set(bearer(token));
    expect(res.status).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    api = await startApi();
    acme = await seedOrganization('Acme Stats');
    globex = await seedOrganization('Globex Stats');
    db = await testDataSource();

    const working = await session(acme, 'working');
    await session(acme, 'working');
    await session(acme, 'failed');
    await session(acme, 'scan_qr_code');
    const theirs = await session(globex, 'working');

    await message(acme, working, 'in', now - 3 * HOUR);
    await message(acme, working, 'in', now - 3 * HOUR + 1000);
    await message(acme, working, 'out', now - 3 * HOUR + 2000);
    await message(acme, working, 'in', now);
    await message(acme, working, 'in', now, true); // a history sync: not traffic
    await message(acme, working, 'out', now - 30 * HOUR); // before the window
    await message(globex, theirs, 'in', now);

    failingHook = await webhook(acme, 'https://failing.example.com/hook', now - 2 * HOUR);
    const healthy = await webhook(acme, 'https://healthy.example.com/hook', null);
    for (const latencyMs of [100, 200, 1000]) await delivery(acme, healthy, now - HOUR, { status: 'delivered', latencyMs, code: 200 });
    await delivery(acme, failingHook, now - HOUR - 1000, { status: 'dead', error: 'HTTP 500', code: 500 });
    await delivery(acme, failingHook, now - HOUR, { status: 'pending', error: 'HTTP 503', code: 503 });
    await delivery(acme, failingHook, now - HOUR, { status: 'pending' }); // not tried yet: neither outcome
    const theirHook = await webhook(globex, 'https://theirs.example.com/hook', now - HOUR);
    await delivery(globex, theirHook, now - HOUR, { status: 'dead', error: 'HTTP 404', code: 404 });
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
  });

  it("counts the organization's sessions by status, and its messages and deliveries per hour over 24 hours", async () => {
    const body = await overview(acme.adminKey);
    expect(body.sessions).toEqual({
      total: 4,
      byStatus: { stopped: 0, starting: 0, scan_qr_code: 1, working: 2, reconnecting: 0, failed: 1, logged_out: 0 },
    });

    expect(body.messages).toHaveLength(24);
    const hours = body.messages.map((h: Json) => h.hour);
    expect(hours.every((h: number, i: number) => i === 0 || h - hours[i - 1] === HOUR)).toBe(true);
    expect(hours[23]).toBe(hourOf(body.generatedAt));
    const at = (list: Json[], t: number) => list.find((h) => h.hour === hourOf(t));
    expect(at(body.messages, now - 3 * HOUR)).toEqual({ hour: hourOf(now - 3 * HOUR), received: 2, sent: 1 });
    expect(at(body.messages, now)).toEqual({ hour: hourOf(now), received: 1, sent: 0 });
    const totals = body.messages.reduce((t: Json, h: Json) => ({ received: t.received + h.received, sent: t.sent + h.sent }), { received: 0, sent: 0 });
    expect(totals).toEqual({ received: 3, sent: 1 });

    expect(body.deliveries).toHaveLength(24);
    // p95 of 100, 200, 1000 ms (linear interpolation): 200 + 0.9 × 800
    expect(at(body.deliveries, now - HOUR)).toEqual({ hour: hourOf(now - HOUR), delivered: 3, failed: 2, p95LatencyMs: 920 });
    expect(body.deliveries.filter((h: Json) => h.delivered || h.failed)).toHaveLength(1);
    expect(at(body.deliveries, now)).toEqual({ hour: hourOf(now), delivered: 0, failed: 0, p95LatencyMs: null });
  });

  it('lists the webhooks failing now with their newest error, and nothing of another organization', async () => {
    const body = await overview(acme.adminKey);
    expect(body.failingWebhooks).toEqual([
      {
        id: failingHook,
        url: 'https://failing.example.com/hook',
        failingSince: now - 2 * HOUR,
        disabledAt: null,
        lastError: 'HTTP 503',
        lastStatusCode: 503,
        lastFailedAt: now - HOUR,
      },
    ]);
    const theirs = await overview(globex.adminKey);
    expect(theirs.sessions.total).toBe(1);
    expect(theirs.messages.reduce((n: number, h: Json) => n + h.received, 0)).toBe(1);
    expect(theirs.failingWebhooks.map((w: Json) => w.url)).toEqual(['https://theirs.example.com/hook']);
  });

  it('shows delivery figures only to a caller who manages webhooks, and refuses a caller without a credential', async () => {
    const viewer = await overview(acme.users.viewer.token);
    expect(viewer.sessions.total).toBe(4);
    expect(viewer.messages).toHaveLength(24);
    expect(viewer).toMatchObject({ deliveries: null, failingWebhooks: null });
    const anonymous = await api.http().get('/api/v1/stats/overview');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('unauthorized');
  });
});
