import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (runs may overlap); a small media cap so its limit is cheap to hit
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:messages-batch-${process.pid}`;
process.env.MEDIA_MAX_BYTES = '65536';

import { newId } from '@app/database';
import { GatewaySignals } from '@app/fleet';
import { SendSignal } from '@app/messaging';
import { createRedis, RedisKeys } from '@app/redis';
import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { waitFor } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';

const TO = '15550009999@s.whatsapp.net';
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Bulk send (issue 24 item 3): POST /sessions/{id}/messages:batch, per-item outcomes, rates, order, idempotency keys. */
describe('Bulk send (messages:batch)', () => {
  let app: INestApplication;
  let org: SeededOrg;
  let other: SeededOrg;
  const fakeGateway = `gw-batch-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const batch = (sessionId: string, body: unknown, token = org.adminKey) =>
    api().post(`/api/v1/sessions/${sessionId}/messages:batch`).set(bearer(token)).send(body as object);
  const send = (sessionId: string, body: object) => api().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(org.adminKey)).send(body);
  const rowsOf = async (sessionId: string) => {
    const db = await testDataSource();
    return db.query('SELECT id, text, seq::int AS seq, idempotency_key FROM messages WHERE session_id = $1 ORDER BY seq', [sessionId]) as Promise<
      Array<{ id: string; text: string; seq: number; idempotency_key: string | null }>
    >;
  };
  /** A session row as the gateway leaves it once connected, held by a gateway id no process owns (nothing sends). */
  const sessionRow = async (organizationId: string, opts: { status?: string; ratePerMin?: number; ratePerHour?: number } = {}) => {
    const db = await testDataSource();
    const id = newId('ses');
    await db.query(
      `INSERT INTO sessions (id, organization_id, label, status, gateway_id, phone_number, wa_jid, rate_per_min, rate_per_hour)
       VALUES ($1, $2, 'fixture', $3, $4, '15550001234', '15550001234@s.whatsapp.net', $5, $6)`,
      [id, organizationId, opts.status ?? 'working', fakeGateway, opts.ratePerMin ?? 1000, opts.ratePerHour ?? 10000],
    );
    return id;
  };

  beforeAll(async () => {
    app = await createApiApp({ quiet: true });
    await app.init();
    org = await seedOrganization('Batch Inc');
    other = await seedOrganization('Other Batch Org');
  });

  afterAll(async () => {
    await app?.close();
    await closeTestDataSource();
  });

  it('accepts every message in order: one Message per item, numbered in the order of the batch, one signal to the gateway', async () => {
    const sessionId = await sessionRow(org.id);
    const redis = createRedis(process.env.REDIS_URL!);
    const seen: string[] = [];
    const stop = await new SendSignal(new RedisKeys(process.env.REDIS_KEY_PREFIX!)).listen(new GatewaySignals(redis), fakeGateway, (id) => seen.push(id));
    try {
      const items = [
        { to: '+1 555-000-9999', text: 'first' },
        { to: TO, type: 'image', text: 'a caption', media: { base64: b64('png-bytes'), mimetype: 'image/png' } },
        { to: TO, type: 'location', location: { latitude: 1.5, longitude: 2.5 } },
        { to: TO, text: 'last', mentions: ['15550008888'] },
      ];
      const res = await batch(sessionId, { messages: items }, org.users.member.token);
      expect(res.status).toBe(202);
      expect(res.body.results).toHaveLength(4);
      for (const r of res.body.results) expect(r).toMatchObject({ status: 202, error: null, message: { sessionId, organizationId: org.id, status: 'queued', chatJid: TO } });
      expect(res.body.results.map((r: { message: { type: string } }) => r.message.type)).toEqual(['text', 'image', 'location', 'text']);
      expect(res.body.results[1].message.media).toEqual({ mimetype: 'image/png', size: 9, filename: null, caption: 'a caption' });
      const rows = await rowsOf(sessionId);
      expect(rows.map((r) => r.id)).toEqual(res.body.results.map((r: { message: { id: string } }) => r.message.id));
      // consecutive numbers, in the batch's order
      expect(rows.map((r) => r.seq - rows[0].seq)).toEqual([0, 1, 2, 3]);
      const db = await testDataSource();
      const [media] = await db.query('SELECT length(data)::int AS n FROM message_media WHERE message_id = $1', [res.body.results[1].message.id]);
      expect(media.n).toBe(9);
      await waitFor(() => seen.includes(sessionId), 5000, 'the send signal');
    } finally {
      await stop();
      redis.disconnect();
    }
  });

  it('a bad message is its own 422 (or 404, 413) and the others are accepted; nothing is stored for it', async () => {
    const sessionId = await sessionRow(org.id);
    const res = await batch(sessionId, {
      messages: [
        { to: TO, text: 'ok 1' },
        { to: TO },
        'not an object',
        { to: TO, text: 'bad key', idempotencyKey: 'tab\there' },
        { to: TO, text: 'unknown field', colour: 'red' },
        { to: TO, text: 'reply to a stranger', quotedMessageId: 'msg_01J0000000000000000000000X' },
        { to: TO, type: 'document', media: { base64: b64('x'.repeat(70000)), mimetype: 'application/pdf' } },
        { to: TO, text: 'ok 2' },
      ],
    });
    expect(res.status).toBe(202);
    const statuses = res.body.results.map((r: { status: number }) => r.status);
    expect(statuses).toEqual([202, 422, 422, 422, 422, 404, 413, 202]);
    const [, noText, notObject, badKey, unknown, stranger, tooLarge] = res.body.results;
    expect(noText).toMatchObject({ message: null, error: { code: 'validation_error', details: { fields: { text: expect.any(Array) } } } });
    expect(notObject.error.details.fields).toEqual({ message: ['must be a JSON object'] });
    expect(Object.keys(badKey.error.details.fields)).toEqual(['idempotencyKey']);
    expect(Object.keys(unknown.error.details.fields)).toEqual(['colour']);
    expect(stranger.error).toMatchObject({ code: 'not_found', details: { quotedMessageId: 'msg_01J0000000000000000000000X' } });
    expect(tooLarge.error.code).toBe('payload_too_large');
    expect((await rowsOf(sessionId)).map((r) => r.text)).toEqual(['ok 1', 'ok 2']);
  });

  it('counts every message against the session rates: the prefix that fits is accepted, the rest 429, and the next send too', async () => {
    const sessionId = await sessionRow(org.id, { ratePerMin: 3 });
    const res = await batch(sessionId, { messages: [1, 2, 3, 4, 5].map((i) => ({ to: TO, text: `m${i}` })) });
    expect(res.status).toBe(202);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([202, 202, 202, 429, 429]);
    for (const refused of res.body.results.slice(3)) {
      expect(refused.error).toMatchObject({ code: 'rate_limited', details: { limit: 'ratePerMin', retryAfterSeconds: expect.any(Number) } });
      expect(refused.error.details.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.error.details.retryAfterSeconds).toBeLessThanOrEqual(60);
    }
    expect((await rowsOf(sessionId)).map((r) => r.text)).toEqual(['m1', 'm2', 'm3']);
    // the window is full: a single send is refused as well, and a refused item counted nothing
    expect((await send(sessionId, { to: TO, text: 'single' })).status).toBe(429);

    // a bad or refused item is not counted either: 2 slots, one bad message, two good ones → both good accepted
    const two = await sessionRow(org.id, { ratePerMin: 2 });
    const mixed = await batch(two, { messages: [{ to: TO }, { to: TO, text: 'a' }, { to: TO, text: 'b' }] });
    expect(mixed.body.results.map((r: { status: number }) => r.status)).toEqual([422, 202, 202]);

    // ratePerHour names itself
    const hourly = await sessionRow(org.id, { ratePerMin: 10, ratePerHour: 1 });
    const h = await batch(hourly, { messages: [{ to: TO, text: '1' }, { to: TO, text: '2' }] });
    expect(h.body.results.map((r: { status: number }) => r.status)).toEqual([202, 429]);
    expect(h.body.results[1].error.details.limit).toBe('ratePerHour');
    expect(h.body.results[1].error.details.retryAfterSeconds).toBeGreaterThan(60);
  });

  it('concurrent batches and single sends of one session never exceed its rate', async () => {
    const sessionId = await sessionRow(org.id, { ratePerMin: 25 });
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, (_, b) => batch(sessionId, { messages: Array.from({ length: 10 }, (_, i) => ({ to: TO, text: `b${b}-${i}` })) })),
      ...Array.from({ length: 5 }, (_, i) => send(sessionId, { to: TO, text: `s${i}` })),
    ]);
    const accepted =
      answers.slice(0, 4).flatMap((a) => a.body.results.filter((r: { status: number }) => r.status === 202)).length +
      answers.slice(4).filter((a) => a.status === 202).length;
    expect(accepted).toBe(25);
    expect(await rowsOf(sessionId)).toHaveLength(25);
  });

  it('honours idempotency keys: of earlier sends, of earlier batches and repeated inside the batch, counted once', async () => {
    const sessionId = await sessionRow(org.id, { ratePerMin: 4 });
    const single = await send(sessionId, { to: TO, text: 'single' }).set('Idempotency-Key', 'k-single');
    expect(single.status).toBe(202);
    const first = await batch(sessionId, {
      messages: [
        { to: TO, text: 'a', idempotencyKey: 'k-a' },
        { to: TO, text: 'single again', idempotencyKey: 'k-single' },
        { to: TO, text: 'a again', idempotencyKey: 'k-a' },
        { to: TO, text: 'b', idempotencyKey: 'k-b' },
      ],
    });
    expect(first.body.results.map((r: { status: number }) => r.status)).toEqual([202, 202, 202, 202]);
    const ids = first.body.results.map((r: { message: { id: string } }) => r.message.id);
    expect(ids[1]).toBe(single.body.id);
    expect(ids[2]).toBe(ids[0]);
    expect(new Set(ids).size).toBe(3);
    // single + a + b counted: one slot left
    expect((await rowsOf(sessionId)).map((r) => r.idempotency_key)).toEqual(['k-single', 'k-a', 'k-b']);

    // the whole batch again: the same messages, nothing new, nothing counted, although one slot is left
    const again = await batch(sessionId, { messages: [{ to: TO, text: 'a', idempotencyKey: 'k-a' }, { to: TO, text: 'b', idempotencyKey: 'k-b' }] });
    expect(again.body.results.map((r: { message: { id: string } }) => r.message.id)).toEqual([ids[0], ids[3]]);
    expect(await rowsOf(sessionId)).toHaveLength(3);
    const last = await batch(sessionId, { messages: [{ to: TO, text: 'c', idempotencyKey: 'k-c' }, { to: TO, text: 'd', idempotencyKey: 'k-d' }] });
    expect(last.body.results.map((r: { status: number }) => r.status)).toEqual([202, 429]);
    // the refused key was not taken: once the window has room it is a new message
    const db = await testDataSource();
    await db.query('UPDATE sessions SET rate_per_min = 10 WHERE id = $1', [sessionId]);
    const retried = await batch(sessionId, { messages: [{ to: TO, text: 'd', idempotencyKey: 'k-d' }] });
    expect(retried.body.results[0]).toMatchObject({ status: 202, message: { text: 'd' } });

    // a key older than 24 h is free again
    await db.query(`UPDATE messages SET created_at = now() - interval '25 hours' WHERE id = $1`, [ids[0]]);
    const later = await batch(sessionId, { messages: [{ to: TO, text: 'a later', idempotencyKey: 'k-a' }] });
    expect(later.body.results[0].status).toBe(202);
    expect(later.body.results[0].message.id).not.toBe(ids[0]);
  });

  it('concurrent batches repeating one key store one message', async () => {
    const sessionId = await sessionRow(org.id);
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => batch(sessionId, { messages: [{ to: TO, text: `own ${i}` }, { to: TO, text: 'race', idempotencyKey: 'same' }] })));
    expect(answers.map((a) => a.status)).toEqual(Array(5).fill(202));
    expect(new Set(answers.map((a) => a.body.results[1].message.id)).size).toBe(1);
    const rows = await rowsOf(sessionId);
    expect(rows.filter((r) => r.idempotency_key === 'same')).toHaveLength(1);
    expect(rows).toHaveLength(6);
  });

  it('keeps each batch contiguous and in order beside concurrent sends of the same session', async () => {
    const sessionId = await sessionRow(org.id);
    await Promise.all([
      ...Array.from({ length: 3 }, (_, b) => batch(sessionId, { messages: Array.from({ length: 20 }, (_, i) => ({ to: TO, text: `b${b} ${String(i).padStart(2, '0')}` })) })),
      ...Array.from({ length: 10 }, (_, i) => send(sessionId, { to: TO, text: `s ${i}` })),
    ]);
    const rows = await rowsOf(sessionId);
    expect(rows).toHaveLength(70);
    for (let b = 0; b < 3; b++) {
      const mine = rows.filter((r) => r.text.startsWith(`b${b} `));
      expect(mine.map((r) => r.text)).toEqual(Array.from({ length: 20 }, (_, i) => `b${b} ${String(i).padStart(2, '0')}`));
      expect(mine[19].seq - mine[0].seq).toBe(19);
    }
  });

  it('refuses the whole request for a bad envelope (422), an unknown session (404) and a session that cannot send (409)', async () => {
    const sessionId = await sessionRow(org.id);
    const envelopes: Array<[unknown, string]> = [
      [[{ to: TO, text: 'x' }], 'body'],
      [{}, 'messages'],
      [{ messages: [] }, 'messages'],
      [{ messages: Array.from({ length: 101 }, () => ({ to: TO, text: 'x' })) }, 'messages'],
      [{ messages: { 0: { to: TO, text: 'x' } } }, 'messages'],
      [{ messages: [{ to: TO, text: 'x' }], extra: 1 }, 'extra'],
    ];
    for (const [body, field] of envelopes) {
      const res = await batch(sessionId, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(Object.keys(res.body.error.details.fields)).toEqual([field]);
    }
    expect(await rowsOf(sessionId)).toEqual([]);
    expect((await batch(sessionId, { messages: Array.from({ length: 100 }, (_, i) => ({ to: TO, text: `${i}` })) })).status).toBe(202);

    const foreign = await sessionRow(other.id);
    expect((await batch(foreign, { messages: [{ to: TO, text: 'x' }] })).status).toBe(404);
    expect((await batch(newId('ses'), { messages: [{ to: TO, text: 'x' }] })).status).toBe(404);
    const stopped = await sessionRow(org.id, { status: 'stopped' });
    const refused = await batch(stopped, { messages: [{ to: TO, text: 'x' }] });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', details: { status: 'stopped' } });
    expect(await rowsOf(foreign)).toEqual([]);
    expect(await rowsOf(stopped)).toEqual([]);
    // a key without messages:send
    const reader = await org.apiKey(['sessions:read']);
    expect((await batch(sessionId, { messages: [{ to: TO, text: 'x' }] }, reader.token)).status).toBe(403);
  });
});
