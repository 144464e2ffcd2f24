import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';
import { loadRunContext } from './support/run-context';

process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:campaigns-${process.env.E2E_ENGINE ?? 'sim'}-${process.pid}`;

import { GatewayDirectory } from '@app/fleet';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request, startApi } from './support/api-app';
import { E2E_ENGINE, pairSession } from './support/engine';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { startSimGateway } from './support/fleet';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';
import { simControl } from './support/sim-control';

jest.setTimeout(120_000);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Scheduled sends and campaigns (CONTRACT 17, issue 43) with a real gateway process, on both engines (the engine
 * matrix): a scheduled send goes out once when due, a cancelled one never; a campaign with a missing variable is 422
 * naming both; a campaign survives its gateway SIGKILLed and the API restarted mid-way, every recipient gets its
 * message once (the simulator's received log), the counts match, the arrivals are at least minDelayMs apart and not
 * evenly spaced, an opted-out number is skipped; nothing arrives outside the window and no more than the daily cap;
 * a pause stops it; an image campaign sends its file's bytes (stored once) to each recipient once with its own caption,
 * and a media URL aimed at loopback is refused. The full-size fault run and the scale figures are `npm run bench:campaigns`.
 */
describe(`Campaigns and scheduled sends (${E2E_ENGINE} engine)`, () => {
  let app: INestApplication;
  let sim: AppProcess;
  let simUrl: string;
  let gateway: { proc: AppProcess; readyUrl: string };
  let redis: Redis;
  let org: SeededOrg;
  let sessionId: string;
  const gatewayId = `gw-campaigns-${E2E_ENGINE}-${process.pid}`;
  const { get: simGet, post: simPost } = simControl(() => simUrl);
  const api = () => request(app.getHttpServer());
  const path = (p: string) => `/api/v1/sessions/${sessionId}${p}`;
  const simMessages = async (): Promise<Json[]> => (await simGet(`/sim/messages?sessionId=${sessionId}`)).data;
  const number = (i: number) => `1555${String(7000000 + i)}`;

  beforeAll(async () => {
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    gateway = await startSimGateway(simUrl, gatewayId, { GATEWAY_HEARTBEAT_MS: '300', GATEWAY_TTL_MS: '2000' });
    process.env.NETWORK_SIM_URL = simUrl;
    app = await createApiApp({ quiet: true });
    await app.listen(0, '127.0.0.1');
    void (app.getHttpServer().address() as AddressInfo).port;
    redis = createRedis(process.env.REDIS_URL!);
    org = await seedOrganization('Campaigns Inc');
    const directory = new GatewayDirectory(redis, new RedisKeys(process.env.REDIS_KEY_PREFIX!));
    await waitFor(async () => (await directory.live()).some((g) => g.id === gatewayId), 15000, 'the gateway to take sessions');
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Campaigns', ratePerMin: 10000, ratePerHour: 1000000 });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    await pairSession({ api, token: org.adminKey, simUrl, sessionId, phoneNumber: '15550004242' });
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await gateway?.proc.stop();
    await sim?.stop();
    redis?.disconnect();
    await closeTestDataSource();
  });

  it('a scheduled send is stored scheduled, goes out once when due; a cancelled one never', async () => {
    const due = await api().post(path('/messages')).set(bearer(org.adminKey)).send({ to: number(900), text: 'due soon', sendAt: Date.now() + 1500 });
    expect(due.status).toBe(202);
    expect(due.body).toMatchObject({ status: 'scheduled', sendAt: expect.any(Number) });
    const later = await api().post(path('/messages')).set(bearer(org.adminKey)).send({ to: number(901), text: 'never', sendAt: Date.now() + 3_600_000 });
    expect(later.body.status).toBe('scheduled');
    expect((await api().delete(path(`/messages/${later.body.id}`)).set(bearer(org.adminKey))).status).toBe(204);
    expect((await api().get(path(`/messages/${later.body.id}`)).set(bearer(org.adminKey))).body.status).toBe('cancelled');
    const ahead = await api().post(path('/messages')).set(bearer(org.adminKey)).send({ to: number(902), text: 'too far', sendAt: Date.now() + 400 * 86_400_000 });
    expect(ahead.status).toBe(422);

    await waitFor(async () => (await api().get(path(`/messages/${due.body.id}`)).set(bearer(org.adminKey))).body.status === 'sent', 20_000, 'the scheduled send sent');
    const got = await simMessages();
    expect(got.filter((m) => m.id === due.body.waMessageId)).toHaveLength(1);
    expect(got.some((m) => m.text === 'never')).toBe(false);
  });

  it('a recipient without a variable the template uses is a 422 naming both, so is a 10,001st recipient; nothing is stored', async () => {
    const res = await api()
      .post(path('/campaigns'))
      .set(bearer(org.adminKey))
      .send({ name: 'bad', message: { text: 'Hi {{name}} {{code}}' }, recipients: [{ to: number(1), variables: { name: 'A', code: '1' } }, { to: number(2), variables: { name: 'B' } }] });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toMatchObject({ recipient: { index: 1, to: `${number(2)}@s.whatsapp.net` }, variable: 'code' });
    // 10,000 recipients at most
    const tooMany = await api()
      .post(path('/campaigns'))
      .set(bearer(org.adminKey))
      .send({ name: 'big', message: { text: 'Hi' }, recipients: Array.from({ length: 10_001 }, (_, i) => ({ to: `1555${String(1000000 + i)}` })) });
    expect(tooMany.status).toBe(422);
    expect(JSON.stringify(tooMany.body.error.details)).toContain('10001');
    expect((await api().get(path('/campaigns')).set(bearer(org.adminKey))).body.data).toHaveLength(0);
  });

  it('survives its gateway SIGKILLed and the API restarted mid-way: every recipient gets the message exactly once, paced, and the campaign completes', async () => {
    const n = 40;
    const optedOut = number(5);
    // the contact answers STOP before the campaign: it is skipped as opted out
    expect((await simPost(`/sim/sessions/${sessionId}/inbound`, { from: `${optedOut}@s.whatsapp.net`, text: ' stop ' })).status).toBe(200);
    await waitFor(async () => (await api().get(path('/opt-outs')).set(bearer(org.adminKey))).body.data.length === 1, 10_000, 'the opt-out recorded');

    const csv = ['to,name', ...Array.from({ length: n }, (_, i) => `${number(i)},Name ${i}`)].join('\n');
    const pacing = { minDelayMs: 150, maxDelayMs: 300, typing: false };
    const created = await api().post(path('/campaigns')).set(bearer(org.adminKey)).send({ name: 'spring', message: { text: 'Hello {{name}}' }, recipientsCsv: csv, pacing, skipNotOnWhatsApp: false });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(created.body.counts).toMatchObject({ total: n, pending: n });

    const campaignTexts = async () => (await simMessages()).filter((m) => typeof m.text === 'string' && m.text.startsWith('Hello Name'));
    await waitFor(async () => (await campaignTexts()).length >= 10, 30_000, 'ten campaign messages sent');
    await gateway.proc.kill();
    // a send scheduled for a time that passes while no gateway runs: sent once when the session is back
    const missed = await api().post(path('/messages')).set(bearer(org.adminKey)).send({ to: number(903), text: 'missed while down', sendAt: Date.now() + 300 });
    expect(missed.body.status).toBe('scheduled');
    await waitFor(async () => Date.now() > missed.body.sendAt + 200, 5_000, 'its time to pass while the gateway is down');
    gateway = await startSimGateway(simUrl, gatewayId, { GATEWAY_HEARTBEAT_MS: '300', GATEWAY_TTL_MS: '2000' });
    // the API restarted mid-way too (it holds nothing of a running campaign: the gateway goes on while it is down)
    await waitFor(async () => (await campaignTexts()).length >= 20, 30_000, 'twenty campaign messages sent');
    await app.close();
    app = await createApiApp({ quiet: true });
    await app.listen(0, '127.0.0.1');
    await waitFor(async () => (await api().get(path(`/campaigns/${id}`)).set(bearer(org.adminKey))).body.status === 'completed', 60_000, 'the campaign completed');

    const got = await campaignTexts();
    const byRecipient = new Map<string, number>();
    for (const m of got) byRecipient.set(m.to, (byRecipient.get(m.to) ?? 0) + 1);
    // n - 1 recipients (one opted out), each exactly once
    expect(byRecipient.size).toBe(n - 1);
    expect([...byRecipient.values()].every((c) => c === 1)).toBe(true);
    expect(byRecipient.has(`${optedOut}@s.whatsapp.net`)).toBe(false);
    expect(got.find((m) => m.to === `${number(7)}@s.whatsapp.net`)?.text).toBe('Hello Name 7');
    await waitFor(async () => (await api().get(path(`/messages/${missed.body.id}`)).set(bearer(org.adminKey))).body.status === 'sent', 20_000, 'the missed send sent');
    expect((await simMessages()).filter((m) => m.text === 'missed while down')).toHaveLength(1);

    const view = (await api().get(path(`/campaigns/${id}`)).set(bearer(org.adminKey))).body;
    expect(view.counts).toMatchObject({ total: n, pending: 0, sent: n - 1, optedOut: 1, failed: 0, skipped: 0 });
    // two recipients answer: `replied` counts them (the counters kept on the row by the inbound message's insert), and
    // every counter equals a full recount of the recipients and their messages (what the views computed before issue 43's
    // counters: a counter that drifted from the rows fails here)
    for (const i of [7, 8]) expect((await simPost(`/sim/sessions/${sessionId}/inbound`, { from: `${number(i)}@s.whatsapp.net`, text: 'thanks' })).status).toBe(200);
    await waitFor(async () => (await api().get(path(`/campaigns/${id}`)).set(bearer(org.adminKey))).body.counts.replied === 2, 20_000, 'two replies counted');
    const recount = async (): Promise<Json> => (await (await testDataSource()).query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE s = 'pending')::int AS pending,
              count(*) FILTER (WHERE s IN ('sent', 'delivered', 'read'))::int AS sent, count(*) FILTER (WHERE s IN ('delivered', 'read'))::int AS delivered,
              count(*) FILTER (WHERE s = 'read')::int AS read, count(*) FILTER (WHERE s = 'failed')::int AS failed,
              count(*) FILTER (WHERE s = 'skipped')::int AS skipped, count(*) FILTER (WHERE s = 'optedOut')::int AS "optedOut",
              count(*) FILTER (WHERE replied)::int AS replied
         FROM (SELECT CASE WHEN r.status <> 'queued' THEN r.status WHEN m.status IN ('sent', 'delivered', 'read', 'failed') THEN m.status
                           WHEN m.status = 'played' THEN 'read' WHEN m.status = 'cancelled' THEN 'cancelled' ELSE 'queued' END AS s,
                      (m.sent_at IS NOT NULL AND EXISTS (SELECT 1 FROM messages i WHERE i.session_id = m.session_id AND i.chat_jid = m.chat_jid
                         AND i.direction = 'in' AND i.created_at > m.sent_at)) AS replied
                 FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id WHERE r.campaign_id = $1) v`,
      [id],
    ))[0];
    // receipts may still be arriving: the view and a recount agree once they are in (a drifted counter never does)
    let last: Json[] = [];
    await waitFor(async () => {
      last = [(await api().get(path(`/campaigns/${id}`)).set(bearer(org.adminKey))).body.counts, await recount()];
      return Object.keys(last[1]).every((k) => last[0][k] === last[1][k]) && Object.keys(last[0]).length === Object.keys(last[1]).length;
    }, 20_000, 'the counters to equal a recount').catch(() => undefined);
    expect(last[0]).toEqual(last[1]);
    expect(last[1].replied).toBe(2);
    const recipients: Json[] = (await api().get(path(`/campaigns/${id}/recipients?limit=100`)).set(bearer(org.adminKey))).body.data;
    expect(recipients.filter((r) => r.status === 'sent')).toHaveLength(n - 1);
    // its events (the outbox every destination reads): progress, and completed once with the final counts
    const events: Json[] = await (await testDataSource()).query(`SELECT type, envelope FROM events WHERE type LIKE 'campaign.%' AND envelope->'payload'->>'campaignId' = $1`, [id]);
    expect(events.filter((e) => e.type === 'campaign.progress').length).toBeGreaterThanOrEqual(1);
    const completed = events.filter((e) => e.type === 'campaign.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0].envelope.payload.counts).toMatchObject({ total: n, sent: n - 1, optedOut: 1 });

    // pacing on the receiving side: the simulator's arrival times, each at least minDelayMs after the one before, and
    // not a fixed gap (a draw in [minDelayMs, maxDelayMs] each time; all 38 below the middle: odds 2^-38)
    const arrivals = got.map((m) => m.timestamp as number).sort((a, b) => a - b);
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(pacing.minDelayMs);
    expect(gaps.some((g) => g > (pacing.minDelayMs + pacing.maxDelayMs) / 2)).toBe(true);
  });

  it('nothing is sent outside the window, a daily cap holds in the window’s time zone (the receiving side), numbers not on WhatsApp are skipped', async () => {
    // a fixed-offset zone where it is about noon now: midnight and the window's 18:00 are hours away whenever this runs
    const offset = Math.max(-11, Math.min(12, 12 - new Date().getUTCHours()));
    const timeZone = offset === 0 ? 'UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
    const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
    const recipients = (tag: number) => Array.from({ length: 6 }, (_, i) => ({ to: number(tag + i) }));
    const pacing = { minDelayMs: 50, maxDelayMs: 100, typing: false };
    // the capped one checks numbers (skipNotOnWhatsApp by default): the 2nd and 4th are not on WhatsApp
    const onWhatsApp = [0, 2, 4, 5].map((i) => number(200 + i));
    for (const phoneNumber of onWhatsApp) expect((await simPost('/sim/contacts', { phoneNumber, name: `Contact ${phoneNumber}` })).status).toBe(200);
    const capped = await api()
      .post(path('/campaigns'))
      .set(bearer(org.adminKey))
      .send({ name: 'capped', message: { text: 'Capped hello' }, recipients: recipients(200), pacing: { ...pacing, perDay: 3 }, window: { days, from: '00:00', to: '23:59', timeZone } });
    const closed = await api()
      .post(path('/campaigns'))
      .set(bearer(org.adminKey))
      .send({ name: 'evening', message: { text: 'Evening hello' }, recipients: recipients(300), pacing, window: { days, from: '18:00', to: '20:00', timeZone }, skipNotOnWhatsApp: false });
    expect([capped.status, closed.status]).toEqual([201, 201]);
    const local = DateTime.now().setZone(timeZone);
    const view = async (id: string) => (await api().get(path(`/campaigns/${id}`)).set(bearer(org.adminKey))).body;
    // the scheduler parks each where its rule says: the capped one at the zone's next midnight after its third send, the
    // other at the window's opening today
    const midnight = local.startOf('day').plus({ days: 1 }).toMillis();
    const opens = local.set({ hour: 18, minute: 0, second: 0, millisecond: 0 }).toMillis();
    await waitFor(async () => (await view(capped.body.id)).nextSendAt === midnight, 30_000, 'the capped campaign parked until midnight');
    await waitFor(async () => (await view(closed.body.id)).nextSendAt === opens, 30_000, 'the closed campaign parked until 18:00');
    const got = await simMessages();
    // three sends (the cap), to the first three numbers on WhatsApp; the two others skipped, not counted in the cap
    expect(got.filter((m) => m.text === 'Capped hello').map((m) => m.to).sort()).toEqual(onWhatsApp.slice(0, 3).map((p) => `${p}@s.whatsapp.net`));
    expect(got.filter((m) => m.text === 'Evening hello')).toHaveLength(0);
    expect((await view(capped.body.id)).counts).toMatchObject({ total: 6, sent: 3, skipped: 2, pending: 1 });
    const skipped: Json[] = (await api().get(path(`/campaigns/${capped.body.id}/recipients?status=skipped`)).set(bearer(org.adminKey))).body.data;
    expect(skipped.map((r) => r.to).sort()).toEqual([number(201), number(203)].map((p) => `${p}@s.whatsapp.net`));
    for (const id of [capped.body.id, closed.body.id]) expect((await api().post(path(`/campaigns/${id}:cancel`)).set(bearer(org.adminKey))).status).toBe(200);
  });

  it('a pause stops it within a second; resume finishes it; each recipient still once', async () => {
    const n = 15;
    const recipients = Array.from({ length: n }, (_, i) => ({ to: number(100 + i), variables: { i: String(i) } }));
    const created = await api().post(path('/campaigns')).set(bearer(org.adminKey)).send({ name: 'pausable', message: { text: 'Pause {{i}}' }, recipients, pacing: { minDelayMs: 100, maxDelayMs: 200, typing: true }, skipNotOnWhatsApp: false });
    const id = created.body.id;
    const texts = async () => (await simMessages()).filter((m) => typeof m.text === 'string' && m.text.startsWith('Pause '));
    await waitFor(async () => (await texts()).length >= 3, 30_000, 'three sent');
    const paused = await api().post(path(`/campaigns/${id}:pause`)).set(bearer(org.adminKey));
    expect(paused.status).toBe(200);
    expect(paused.body.status).toBe('paused');
    // within a second of the pause nothing more goes out: the count a second later is the count for the next 2 s
    await new Promise((r) => setTimeout(r, 1000));
    const atPause = (await texts()).length;
    await new Promise((r) => setTimeout(r, 2000));
    expect((await texts()).length).toBe(atPause);
    expect((await api().post(path(`/campaigns/${id}:pause`)).set(bearer(org.adminKey))).status).toBe(409);

    expect((await api().post(path(`/campaigns/${id}:resume`)).set(bearer(org.adminKey))).status).toBe(200);
    await waitFor(async () => (await api().get(path(`/campaigns/${id}`)).set(bearer(org.adminKey))).body.status === 'completed', 60_000, 'the campaign completed');
    const got = await texts();
    expect(new Set(got.map((m) => m.to)).size).toBe(n);
    expect(got).toHaveLength(n);
  });

  it('an image campaign: each recipient gets the image (same bytes) once with its own caption; the file is stored once; a loopback media URL is 422 and stores nothing', async () => {
    const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    // a PNG (the API takes its MIME type from its first bytes: none is given)
    const image = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), randomBytes(4096)]);
    const names = ['Ana', 'Bo', 'Cy'];
    const recipients = names.map((name, i) => ({ to: number(400 + i), variables: { name } }));
    const created = await api()
      .post(path('/campaigns'))
      .set(bearer(org.adminKey))
      .send({
        name: 'menu',
        message: { type: 'image', text: 'Hi {{name}}', media: { base64: image.toString('base64') } },
        recipients,
        pacing: { minDelayMs: 50, maxDelayMs: 100, typing: false },
        skipNotOnWhatsApp: false,
      });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const db = await testDataSource();
    // the file's bytes are stored once, for the campaign; no recipient's message has a copy of its own
    const stored: Json[] = await db.query(`SELECT octet_length(data) AS size FROM campaign_media WHERE campaign_id = $1`, [id]);
    expect(stored).toEqual([{ size: image.length }]);
    await waitFor(async () => (await api().get(path(`/campaigns/${id}`)).set(bearer(org.adminKey))).body.status === 'completed', 60_000, 'the image campaign completed');
    const copies: Json[] = await db.query(`SELECT count(*)::int AS n FROM message_media mm JOIN messages m ON m.id = mm.message_id WHERE m.campaign_id = $1`, [id]);
    expect(copies[0].n).toBe(0);

    const images = (await simMessages()).filter((m) => m.type === 'image' && recipients.some((r) => m.to === `${r.to}@s.whatsapp.net`));
    // each recipient exactly once, the same bytes, its own caption
    expect(images.map((m) => m.to).sort()).toEqual(recipients.map((r) => `${r.to}@s.whatsapp.net`).sort());
    for (const [i, r] of recipients.entries()) {
      const got = images.find((m) => m.to === `${r.to}@s.whatsapp.net`);
      expect(got).toMatchObject({ sends: 1, media: { mimetype: 'image/png', size: image.length, sha256: sha256(image), caption: `Hi ${names[i]}` } });
    }
    const view = (await api().get(path(`/campaigns/${id}`)).set(bearer(org.adminKey))).body;
    expect(view.counts).toMatchObject({ total: 3, sent: 3, failed: 0, pending: 0 });
    // the campaign sends nothing more: its file is forgotten
    expect(await db.query(`SELECT 1 FROM campaign_media WHERE campaign_id = $1`, [id])).toHaveLength(0);

    // a media URL a tenant aims at this machine: refused by the address guard (an API as production runs it), nothing stored
    const strict = await startApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const loopback = await strict
        .http()
        .post(path('/campaigns'))
        .set(bearer(org.adminKey))
        .send({ name: 'loopback', message: { type: 'image', text: 'Hi {{name}}', media: { url: `${simUrl}/healthz` } }, recipients });
      expect(loopback.status).toBe(422);
      expect(loopback.body.error.details.fields['message.media.url'][0]).toMatch(/not allowed/);
    } finally {
      await strict.app.close();
    }
    expect(await db.query(`SELECT 1 FROM campaigns WHERE session_id = $1 AND name = 'loopback'`, [sessionId])).toHaveLength(0);
  });

  it('a media campaign may carry a file larger than the ordinary body limit; cancelled before it starts, it sends nothing and its file is forgotten', async () => {
    // 1.5 MiB of PDF: 2 MiB of base64, above BODY_LIMIT_BYTES (1 MiB), within MEDIA_MAX_BYTES
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(1.5 * 1024 * 1024)]);
    const created = await api()
      .post(path('/campaigns'))
      .set(bearer(org.adminKey))
      .send({ name: 'brochure', message: { type: 'document', text: 'For {{name}}', media: { base64: pdf.toString('base64'), filename: 'brochure.pdf' } }, recipients: [{ to: number(410), variables: { name: 'Di' } }], startAt: Date.now() + 3_600_000 });
    expect(created.status).toBe(201);
    const db = await testDataSource();
    expect(await db.query(`SELECT octet_length(data) AS size FROM campaign_media WHERE campaign_id = $1`, [created.body.id])).toEqual([{ size: pdf.length }]);
    expect((await api().post(path(`/campaigns/${created.body.id}:cancel`)).set(bearer(org.adminKey))).status).toBe(200);
    expect(await db.query(`SELECT 1 FROM campaign_media WHERE campaign_id = $1`, [created.body.id])).toHaveLength(0);
    expect((await simMessages()).filter((m) => m.to === `${number(410)}@s.whatsapp.net`)).toHaveLength(0);
  });
  it('recording a campaign message sent rewrites its recipient only when its replied flag changes; the counters follow', async () => {
    // in a transaction rolled back at the end; the record runs in a savepoint, so the rows it writes carry its own xid
    const qr = (await testDataSource()).createQueryRunner();
    await qr.connect();
    await qr.startTransaction();
    try {
      const c = `cmp_xmin_${process.pid}`;
      await qr.query(
        `INSERT INTO campaigns (id, organization_id, session_id, name, status, message, pacing, skip_not_on_whatsapp, total, start_at, next_send_at)
         VALUES ($1, $2, $3, 'xmin', 'running', '{"type":"text","text":"hi"}', '{"minDelayMs":1000,"maxDelayMs":3000}', false, 2, now(), now())`,
        [c, org.id, sessionId],
      );
      const chat = (i: number) => `${number(900 + i)}@s.whatsapp.net`;
      await qr.query(`INSERT INTO campaign_recipients (campaign_id, position, to_jid, status) VALUES ($1, 0, $2, 'pending'), ($1, 1, $3, 'pending')`, [c, chat(0), chat(1)]);
      for (const i of [0, 1]) {
        await qr.query(
          `INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, type, status, campaign_id) VALUES ($1, $2, $3, $4, 'out', $5, 'text', 'queued', $6)`,
          [`${c}_m${i}`, org.id, sessionId, `${c}_w${i}`, chat(i), c],
        );
        await qr.query(`UPDATE campaign_recipients SET status = 'queued', message_id = $2 WHERE campaign_id = $1 AND position = $3`, [c, `${c}_m${i}`, i]);
      }
      // the second recipient answered before the send is recorded as an hour ago: recorded, it becomes replied
      await qr.query(
        `INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, type, status) VALUES ($1, $2, $3, $4, 'in', $5, 'text', 'received')`,
        [`${c}_in`, org.id, sessionId, `${c}_win`, chat(1)],
      );
      await qr.query('SAVEPOINT record');
      await qr.query(`UPDATE messages SET status = 'sent', sent_at = now() - interval '1 hour' WHERE id = ANY($1)`, [[`${c}_m0`, `${c}_m1`]]);
      const rows: Json[] = await qr.query(
        `SELECT r.position, r.replied, r.xmin::text = m.xmin::text AS rewritten FROM campaign_recipients r JOIN messages m ON m.id = r.message_id
          WHERE r.campaign_id = $1 ORDER BY r.position`,
        [c],
      );
      expect(rows).toEqual([
        { position: 0, replied: false, rewritten: false },
        { position: 1, replied: true, rewritten: true },
      ]);
      const [counts] = await qr.query(`SELECT count_pending, count_sent, count_replied FROM campaigns WHERE id = $1`, [c]);
      expect(counts).toEqual({ count_pending: 0, count_sent: 2, count_replied: 1 });
    } finally {
      await qr.rollbackTransaction();
      await qr.release();
    }
  });
});
