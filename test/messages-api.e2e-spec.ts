import type { INestApplication } from '@nestjs/common';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (runs may overlap); a small media cap and fetch timeout so the limits are cheap to hit
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:messages-${process.pid}`;
process.env.MEDIA_MAX_BYTES = '65536';
process.env.MEDIA_FETCH_TIMEOUT_MS = '1000';
process.env.COMMAND_TIMEOUT_MS = '4000';

import { newId } from '@app/database';
import { GatewaySignals } from '@app/fleet';
import { SendSignal } from '@app/messaging';
import { createRedis, RedisKeys } from '@app/redis';
import { createApiApp } from '../apps/api/src/bootstrap';
import { MessagesService, plainAcceptKey } from '../apps/api/src/messages/messages.service';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { Receiver, startReceiver } from './support/receivers';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';
import { MESSAGE_FIELDS } from './support/message-fields';

const WA_MESSAGE_ID = /^3EB0[0-9A-F]{18}$/;
const TO = '15550009999@s.whatsapp.net';
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('Send API and message log', () => {
  let app: INestApplication;
  let org: SeededOrg;
  let other: SeededOrg;
  let receiver: Receiver;
  const fakeGateway = `gw-messages-${process.pid}`;

  const api = () => request(app.getHttpServer());
  const send = (sessionId: string, body: object, token = org.adminKey) => api().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(token)).send(body);
  const rowsOf = async (sessionId: string) => {
    const db = await testDataSource();
    return db.query('SELECT id, status, wa_message_id FROM messages WHERE session_id = $1', [sessionId]) as Promise<Array<{ id: string }>>;
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
    receiver = await startReceiver();
    // the receiver stands in for the simulator's media endpoint (inbound media of `sim` sessions)
    process.env.NETWORK_SIM_URL = receiver.url;
    app = await createApiApp({ quiet: true });
    await app.init();
    org = await seedOrganization('Messages Inc');
    other = await seedOrganization('Other Org');
  });

  afterAll(async () => {
    await app?.close();
    await receiver?.close();
    await closeTestDataSource();
  });

  describe('sending each type', () => {
    let sessionId: string;
    const sent: Record<string, { id: string; waMessageId: string }> = {};

    beforeAll(async () => {
      sessionId = await sessionRow(org.id);
    });

    it('accepts a text (bare digits normalized, mentions kept) as a queued Message with a WhatsApp-like id', async () => {
      const res = await send(sessionId, { to: '+1 555-000-9999', text: 'hello @15550008888', mentions: ['15550008888'] }, org.users.member.token);
      expect(res.status).toBe(202);
      expect(Object.keys(res.body).sort()).toEqual(MESSAGE_FIELDS);
      expect(res.body).toMatchObject({
        sessionId,
        organizationId: org.id,
        direction: 'out',
        chatJid: TO,
        from: '15550001234@s.whatsapp.net',
        type: 'text',
        text: 'hello @15550008888',
        media: null,
        location: null,
        contact: null,
        poll: null,
        quotedMessageId: null,
        status: 'queued',
        error: null,
        sentAt: null,
      });
      expect(res.body.id).toMatch(/^msg_[0-9A-Z]{26}$/);
      expect(res.body.waMessageId).toMatch(WA_MESSAGE_ID);
      expect(res.body.createdAt).toEqual(expect.any(Number));
      sent.text = res.body;
      const db = await testDataSource();
      const [row] = await db.query('SELECT mentions FROM messages WHERE id = $1', [res.body.id]);
      expect(row.mentions).toEqual(['15550008888@s.whatsapp.net']);
    });

    it('accepts media by base64 and by URL with its metadata, and serves the bytes until sent', async () => {
      const image = await send(sessionId, { to: TO, type: 'image', text: 'a caption', media: { base64: b64('png-bytes'), mimetype: 'image/png', filename: 'a.png' } });
      expect(image.status).toBe(202);
      expect(image.body).toMatchObject({ type: 'image', text: null, status: 'queued', media: { mimetype: 'image/png', size: 9, filename: 'a.png', caption: 'a caption' } });
      expect(image.body.waMessageId).toMatch(WA_MESSAGE_ID);

      receiver.respondWith((req) => (req.path === '/clip.mp4' ? { status: 200, headers: { 'content-type': 'video/mp4' }, body: 'video-bytes-0123' } : { status: 404 }));
      const video = await send(sessionId, { to: TO, type: 'video', media: { url: `${receiver.url}/clip.mp4`, mimetype: 'video/mp4' } });
      expect(video.status).toBe(202);
      expect(video.body.media).toEqual({ mimetype: 'video/mp4', size: 16, filename: null, caption: null });

      const audio = await send(sessionId, { to: TO, type: 'audio', media: { base64: b64('ogg'), mimetype: 'audio/ogg; codecs=opus' } });
      expect(audio.status).toBe(202);
      expect(audio.body.media).toEqual({ mimetype: 'audio/ogg; codecs=opus', size: 3, filename: null, caption: null });
      const document = await send(sessionId, { to: TO, type: 'document', media: { base64: b64('%PDF-1.4'), mimetype: 'application/pdf', filename: 'invoice 7.pdf' } });
      expect(document.status).toBe(202);
      expect(document.body.media).toMatchObject({ size: 8, filename: 'invoice 7.pdf' });

      const bytes = await api().get(`/api/v1/sessions/${sessionId}/messages/${video.body.id}/media`).set(bearer(org.users.viewer.token)).buffer(true).parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
      expect(bytes.status).toBe(200);
      expect(bytes.headers['content-type']).toBe('video/mp4');
      expect(bytes.headers['content-length']).toBe('16');
      expect((bytes.body as Buffer).toString()).toBe('video-bytes-0123');
      const doc = await api().get(`/api/v1/sessions/${sessionId}/messages/${document.body.id}/media`).set(bearer(org.adminKey));
      expect(doc.headers['content-disposition']).toBe("inline; filename*=UTF-8''invoice%207.pdf");

      // once sent, the outbound bytes are gone (the gateway marks it sent)
      const db = await testDataSource();
      await db.query(`UPDATE messages SET status = 'sent' WHERE id = $1`, [image.body.id]);
      await db.query(`DELETE FROM message_media WHERE message_id = $1`, [image.body.id]);
      const gone = await api().get(`/api/v1/sessions/${sessionId}/messages/${image.body.id}/media`).set(bearer(org.adminKey));
      expect(gone.status).toBe(404);
      expect(gone.body.error.message).toMatch(/deleted once the message is sent/);
      expect((await api().get(`/api/v1/sessions/${sessionId}/messages/${sent.text.id}/media`).set(bearer(org.adminKey))).status).toBe(404);
    });

    it('accepts location, contact, poll, a reaction to a message of the chat and a reply', async () => {
      const location = await send(sessionId, { to: TO, type: 'location', location: { latitude: -33.86, longitude: 151.2, name: 'Opera' } });
      expect(location.status).toBe(202);
      expect(location.body).toMatchObject({ type: 'location', text: null, location: { latitude: -33.86, longitude: 151.2, name: 'Opera', address: null } });
      const contact = await send(sessionId, { to: TO, type: 'contact', contact: { fullName: 'Ada Lovelace', phoneNumber: '+44 20 7946 0000' } });
      expect(contact.status).toBe(202);
      expect(contact.body.contact).toEqual({ fullName: 'Ada Lovelace', phoneNumber: '+44 20 7946 0000' });
      const poll = await send(sessionId, { to: TO, type: 'poll', poll: { name: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'] } });
      expect(poll.status).toBe(202);
      expect(poll.body.poll).toEqual({ name: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'], selectableCount: 1 });
      const reaction = await send(sessionId, { to: TO, type: 'reaction', reaction: { messageId: sent.text.id, emoji: '👍🏽' } });
      expect(reaction.status).toBe(202);
      expect(reaction.body).toMatchObject({ type: 'reaction', chatJid: TO, status: 'queued' });
      const removal = await send(sessionId, { to: TO, type: 'reaction', reaction: { messageId: sent.text.id, emoji: '' } });
      expect(removal.status).toBe(202);
      const reply = await send(sessionId, { to: TO, text: 'replying', quotedMessageId: sent.text.id });
      expect(reply.status).toBe(202);
      expect(reply.body.quotedMessageId).toBe(sent.text.id);

      const db = await testDataSource();
      const [r] = await db.query('SELECT reaction FROM messages WHERE id = $1', [reaction.body.id]);
      expect(r.reaction).toEqual({ waMessageId: sent.text.waMessageId, emoji: '👍🏽' });
      const [q] = await db.query('SELECT quoted_wa_message_id FROM messages WHERE id = $1', [reply.body.id]);
      expect(q.quoted_wa_message_id).toBe(sent.text.waMessageId);
    });

    it('streams inbound media from the network, 404 once the network no longer has it', async () => {
      const db = await testDataSource();
      const inbound = async (mediaId: string) => {
        const id = newId('msg');
        await db.query(
          `INSERT INTO messages (id, organization_id, session_id, wa_message_id, direction, chat_jid, from_jid, type, media, media_ref, status)
           VALUES ($1, $2, $3, $4, 'in', $5, $5, 'image', $6, $7, 'received')`,
          [id, org.id, sessionId, `IN${mediaId}`, TO, JSON.stringify({ mimetype: 'image/jpeg', size: 11, filename: null, caption: null }), JSON.stringify({ engine: 'sim', mediaId })],
        );
        return id;
      };
      receiver.respondWith((req) => (req.path === '/sim/media/m1' ? { status: 200, body: 'jpeg-bytes!' } : { status: 404 }));
      const kept = await inbound('m1');
      const res = await api().get(`/api/v1/sessions/${sessionId}/messages/${kept}/media`).set(bearer(org.users.viewer.token)).buffer(true).parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('image/jpeg');
      expect((res.body as Buffer).toString()).toBe('jpeg-bytes!');
      const expired = await inbound('m2');
      const gone = await api().get(`/api/v1/sessions/${sessionId}/messages/${expired}/media`).set(bearer(org.adminKey));
      expect([gone.status, gone.body.error.code]).toEqual([404, 'not_found']);
      expect(gone.body.error.message).toMatch(/no longer available/);
      await db.query('DELETE FROM messages WHERE id = ANY($1)', [[kept, expired]]);
    });

    it('lists the log newest first with filters and cursor pages, and returns one message', async () => {
      const all = await api().get(`/api/v1/sessions/${sessionId}/messages?limit=100`).set(bearer(org.users.viewer.token));
      expect(all.status).toBe(200);
      expect(all.body.nextCursor).toBeNull();
      const ids = all.body.data.map((m: { id: string }) => m.id);
      expect(ids).toEqual([...ids].sort().reverse());
      expect(ids).toHaveLength(11);

      const first = await api().get(`/api/v1/sessions/${sessionId}/messages?limit=5`).set(bearer(org.adminKey));
      expect(first.body.data.map((m: { id: string }) => m.id)).toEqual(ids.slice(0, 5));
      const second = await api().get(`/api/v1/sessions/${sessionId}/messages?limit=5&cursor=${first.body.nextCursor}`).set(bearer(org.adminKey));
      expect(second.body.data.map((m: { id: string }) => m.id)).toEqual(ids.slice(5, 10));

      const sentOnes = await api().get(`/api/v1/sessions/${sessionId}/messages?status=sent&direction=out`).set(bearer(org.adminKey));
      expect(sentOnes.body.data.map((m: { type: string }) => m.type)).toEqual(['image']);
      expect((await api().get(`/api/v1/sessions/${sessionId}/messages?direction=in`).set(bearer(org.adminKey))).body.data).toEqual([]);
      const byChat = await api().get(`/api/v1/sessions/${sessionId}/messages?chatJid=15550009999&limit=100`).set(bearer(org.adminKey));
      expect(byChat.body.data).toHaveLength(11);
      expect((await api().get(`/api/v1/sessions/${sessionId}/messages?chatJid=15550007777`).set(bearer(org.adminKey))).body.data).toEqual([]);
      const badFilter = await api().get(`/api/v1/sessions/${sessionId}/messages?status=lost&direction=sideways`).set(bearer(org.adminKey));
      expect(badFilter.status).toBe(422);
      expect(Object.keys(badFilter.body.error.details.fields).sort()).toEqual(['direction', 'status']);

      const one = await api().get(`/api/v1/sessions/${sessionId}/messages/${sent.text.id}`).set(bearer(org.users.viewer.token));
      expect(one.status).toBe(200);
      expect(one.body).toEqual(all.body.data.find((m: { id: string }) => m.id === sent.text.id));
    });
  });

  describe('refusals', () => {
    let sessionId: string;
    let textId: string;

    beforeAll(async () => {
      sessionId = await sessionRow(org.id);
      textId = (await send(sessionId, { to: TO, text: 'target' })).body.id;
    });

    const media = { base64: b64('x'), mimetype: 'image/png' };
    it.each<[string, object, string[]]>([
      ['no to', { text: 'hi' }, ['to']],
      ['a to that is no JID or number', { to: 'bob@example.com', text: 'hi' }, ['to']],
      ['an unknown type', { to: TO, type: 'hologram', text: 'hi' }, ['type']],
      ['a text without text', { to: TO }, ['text']],
      ['an empty text', { to: TO, text: '' }, ['text']],
      ['a text over 4096 characters', { to: TO, text: 'x'.repeat(4097) }, ['text']],
      ['a caption over 1024 characters', { to: TO, type: 'image', text: 'x'.repeat(1025), media }, ['text']],
      ['a caption on audio', { to: TO, type: 'audio', text: 'hi', media }, ['text']],
      ['media on a text', { to: TO, text: 'hi', media }, ['media']],
      ['an image without media', { to: TO, type: 'image' }, ['media']],
      ['media with both url and base64', { to: TO, type: 'image', media: { ...media, url: 'https://example.com/a.png' } }, ['media.url']],
      ['media with neither url nor base64', { to: TO, type: 'image', media: { mimetype: 'image/png' } }, ['media.url']],
      ['media without mimetype', { to: TO, type: 'image', media: { base64: b64('x') } }, ['media.mimetype']],
      ['a non-http media url', { to: TO, type: 'image', media: { url: 'file:///etc/passwd', mimetype: 'image/png' } }, ['media.url']],
      ['media base64 that is not base64', { to: TO, type: 'image', media: { base64: 'not base64!', mimetype: 'image/png' } }, ['media.base64']],
      ['a filename with a slash', { to: TO, type: 'document', media: { ...media, filename: '../etc/passwd' } }, ['media.filename']],
      ['a latitude past 90', { to: TO, type: 'location', location: { latitude: 91, longitude: 0 } }, ['location.latitude']],
      ['a longitude past -180', { to: TO, type: 'location', location: { latitude: 0, longitude: -181 } }, ['location.longitude']],
      ['a location without coordinates', { to: TO, type: 'location', location: {} }, ['location.latitude', 'location.longitude']],
      ['a contact without phone number', { to: TO, type: 'contact', contact: { fullName: 'Ada' } }, ['contact.phoneNumber']],
      ['a contact with letters for a number', { to: TO, type: 'contact', contact: { fullName: 'Ada', phoneNumber: 'call me' } }, ['contact.phoneNumber']],
      ['a reaction of two emoji', { to: TO, type: 'reaction', reaction: { messageId: 'msg_X', emoji: '👍👍' } }, ['reaction.emoji']],
      ['a reaction of text', { to: TO, type: 'reaction', reaction: { messageId: 'msg_X', emoji: 'ok' } }, ['reaction.emoji']],
      ['a reaction without messageId', { to: TO, type: 'reaction', reaction: { emoji: '👍' } }, ['reaction.messageId']],
      ['a poll with one option', { to: TO, type: 'poll', poll: { name: 'Q', options: ['a'] } }, ['poll.options']],
      ['a poll with 13 options', { to: TO, type: 'poll', poll: { name: 'Q', options: Array.from({ length: 13 }, (_, i) => `o${i}`) } }, ['poll.options']],
      ['a poll with repeated options', { to: TO, type: 'poll', poll: { name: 'Q', options: ['a', 'a'] } }, ['poll.options']],
      ['a poll with an empty option', { to: TO, type: 'poll', poll: { name: 'Q', options: ['a', ''] } }, ['poll.options']],
      ['a poll selecting more than its options', { to: TO, type: 'poll', poll: { name: 'Q', options: ['a', 'b'], selectableCount: 3 } }, ['poll.selectableCount']],
      ['a poll without name', { to: TO, type: 'poll', poll: { options: ['a', 'b'] } }, ['poll.name']],
      ['51 mentions', { to: TO, text: 'hi', mentions: Array.from({ length: 51 }, (_, i) => `1555000${String(i).padStart(4, '0')}`) }, ['mentions']],
      ['a group as a mention', { to: TO, text: 'hi', mentions: ['123456789@g.us'] }, ['mentions']],
      ['a quote on a reaction', { to: TO, type: 'reaction', reaction: { messageId: 'msg_X', emoji: '👍' }, quotedMessageId: 'msg_X' }, ['quotedMessageId']],
      ['an unknown field', { to: TO, text: 'hi', priority: 'high' }, ['priority']],
    ])('422 for %s', async (_, body, fields) => {
      const res = await send(sessionId, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(Object.keys(res.body.error.details.fields).sort()).toEqual([...fields].sort());
    });

    it('422 for a body that is not an object, and for a malformed Idempotency-Key', async () => {
      const array = await api().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(org.adminKey)).send([{ to: TO }]);
      expect(array.status).toBe(422);
      expect(array.body.error.details.fields).toEqual({ body: ['must be a JSON object'] });
      for (const key of ['x'.repeat(256), 'naïve', 'tab\there']) {
        const res = await send(sessionId, { to: TO, text: 'hi' }).set('Idempotency-Key', key);
        expect(res.status).toBe(422);
        expect(Object.keys(res.body.error.details.fields)).toEqual(['Idempotency-Key']);
      }
      expect(await rowsOf(sessionId)).toHaveLength(1);
    });

    it('404 for another organization on every endpoint, for an unknown quote or reaction target and a message of another session', async () => {
      const theirSession = await sessionRow(other.id);
      const theirMessage = (await send(theirSession, { to: TO, text: 'theirs' }, other.adminKey)).body.id;
      const paths = [
        ['post', `/api/v1/sessions/${sessionId}/messages`],
        ['get', `/api/v1/sessions/${sessionId}/messages`],
        ['get', `/api/v1/sessions/${sessionId}/messages/${textId}`],
        ['get', `/api/v1/sessions/${sessionId}/messages/${textId}/media`],
        ['get', `/api/v1/sessions/${theirSession}/messages/${theirMessage}`],
      ] as const;
      for (const [method, path] of paths) {
        const token = path.includes(theirSession) ? org.adminKey : other.adminKey;
        const res = await api()[method](path).set(bearer(token)).send(method === 'post' ? { to: TO, text: 'hi' } : undefined);
        expect([path, res.status, res.body.error.code]).toEqual([path, 404, 'not_found']);
      }
      // another organization's session is not found even with a malformed body (404 before 422)
      expect((await send(sessionId, { nonsense: true }, other.adminKey)).status).toBe(404);
      // our session, their message id (and an unknown one): not found
      expect((await api().get(`/api/v1/sessions/${sessionId}/messages/${theirMessage}`).set(bearer(org.adminKey))).status).toBe(404);
      const quote = await send(sessionId, { to: TO, text: 'hi', quotedMessageId: theirMessage });
      expect([quote.status, quote.body.error.details]).toEqual([404, { quotedMessageId: theirMessage }]);
      const react = await send(sessionId, { to: TO, type: 'reaction', reaction: { messageId: 'msg_UNKNOWN', emoji: '👍' } });
      expect([react.status, react.body.error.code]).toEqual([404, 'not_found']);
      // a reaction must go to the chat of the message it reacts to
      const elsewhere = await send(sessionId, { to: '15550001111', type: 'reaction', reaction: { messageId: textId, emoji: '👍' } });
      expect(elsewhere.status).toBe(422);
      expect(Object.keys(elsewhere.body.error.details.fields)).toEqual(['reaction.messageId']);
      expect(await rowsOf(sessionId)).toHaveLength(1);
    });

    it('403 for a viewer and for a key without messages:send, who may still read the log', async () => {
      const viewer = await send(sessionId, { to: TO, text: 'hi' }, org.users.viewer.token);
      expect([viewer.status, viewer.body.error.code]).toEqual([403, 'forbidden']);
      const reader = await org.apiKey(['sessions:read', 'sessions:write']);
      expect((await send(sessionId, { to: TO, text: 'hi' }, reader.token)).status).toBe(403);
      expect((await api().get(`/api/v1/sessions/${sessionId}/messages`).set(bearer(reader.token))).status).toBe(200);
      const sender = await org.apiKey(['messages:send']);
      expect((await send(sessionId, { to: TO, text: 'hi' }, sender.token)).status).toBe(202);
      expect((await api().get(`/api/v1/sessions/${sessionId}/messages`).set(bearer(sender.token))).status).toBe(403);
      expect((await api().post(`/api/v1/sessions/${sessionId}/messages`).send({ to: TO, text: 'hi' })).status).toBe(401);
    });

    it.each(['stopped', 'scan_qr_code', 'logged_out', 'failed'])('409 with the status for a %s session; a reconnecting one accepts', async (status) => {
      const stopped = await sessionRow(org.id, { status });
      const res = await send(stopped, { to: TO, text: 'hi' });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'conflict', details: { status } });
      expect(await rowsOf(stopped)).toEqual([]);
      expect((await send(await sessionRow(org.id, { status: 'reconnecting' }), { to: TO, text: 'hi' })).status).toBe(202);
    });
  });

  describe('idempotency, rates, media limits and the gateway signal', () => {
    it('a repeated Idempotency-Key returns the first message, stores one row and counts once; after 24 h the key is new', async () => {
      const sessionId = await sessionRow(org.id, { ratePerMin: 1 });
      const first = await send(sessionId, { to: TO, text: 'once' }).set('Idempotency-Key', 'order-42');
      expect(first.status).toBe(202);
      // at its limit now: a repeat still answers with the first message, not 429
      const repeat = await send(sessionId, { to: TO, text: 'once' }).set('Idempotency-Key', 'order-42');
      expect(repeat.status).toBe(202);
      expect(repeat.body.id).toBe(first.body.id);
      expect(repeat.body.waMessageId).toBe(first.body.waMessageId);
      expect(await rowsOf(sessionId)).toHaveLength(1);
      const fresh = await send(sessionId, { to: TO, text: 'other' }).set('Idempotency-Key', 'order-43');
      expect(fresh.status).toBe(429);

      const db = await testDataSource();
      await db.query(`UPDATE messages SET created_at = now() - interval '25 hours' WHERE id = $1`, [first.body.id]);
      await db.query(`UPDATE sessions SET rate_per_min = 10 WHERE id = $1`, [sessionId]);
      const later = await send(sessionId, { to: TO, text: 'once' }).set('Idempotency-Key', 'order-42');
      expect(later.status).toBe(202);
      expect(later.body.id).not.toBe(first.body.id);
      expect(await rowsOf(sessionId)).toHaveLength(2);
    });

    it('concurrent repeats of one key store one message', async () => {
      const sessionId = await sessionRow(org.id);
      const answers = await Promise.all(Array.from({ length: 6 }, () => send(sessionId, { to: TO, text: 'race' }).set('Idempotency-Key', 'same')));
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(202));
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
      expect(await rowsOf(sessionId)).toHaveLength(1);
    });

    it('429 with Retry-After past ratePerHour, and a PATCH lowering ratePerMin applies to the next send', async () => {
      const hourly = await sessionRow(org.id, { ratePerMin: 10, ratePerHour: 1 });
      expect((await send(hourly, { to: TO, text: '1' })).status).toBe(202);
      const refused = await send(hourly, { to: TO, text: '2' });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'rate_limited', details: { limit: 'ratePerHour' } });
      const seconds = Number(refused.headers['retry-after']);
      expect(refused.body.error.details.retryAfterSeconds).toBe(seconds);
      expect(seconds).toBeGreaterThan(60);
      expect(seconds).toBeLessThanOrEqual(3600);

      const sessionId = await sessionRow(org.id, { ratePerMin: 20 });
      expect((await send(sessionId, { to: TO, text: '1' })).status).toBe(202);
      expect((await send(sessionId, { to: TO, text: '2' })).status).toBe(202);
      const patched = await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ ratePerMin: 2 });
      expect(patched.status).toBe(200);
      const next = await send(sessionId, { to: TO, text: '3' });
      expect(next.status).toBe(429);
      expect(next.body.error.details.limit).toBe('ratePerMin');
      expect(await rowsOf(sessionId)).toHaveLength(2);
    });

    it('media over the cap is 413 with no row and no slot used; an unreachable or slow URL is 422', async () => {
      const sessionId = await sessionRow(org.id, { ratePerMin: 1 });
      receiver.respondWith((req) => {
        if (req.path === '/big') return { status: 200, body: 'x'.repeat(70_000) };
        if (req.path === '/slow') return new Promise(() => undefined);
        return { status: 404 };
      });
      const big = await send(sessionId, { to: TO, type: 'image', media: { url: `${receiver.url}/big`, mimetype: 'image/png' } });
      expect(big.status).toBe(413);
      expect(big.body.error).toMatchObject({ code: 'payload_too_large', details: { maxBytes: 65536 } });
      const bigBase64 = await send(sessionId, { to: TO, type: 'image', media: { base64: Buffer.alloc(65537).toString('base64'), mimetype: 'image/png' } });
      expect(bigBase64.status).toBe(413);
      expect(Object.keys(bigBase64.body.error.details.fields)).toEqual(['media.base64']);
      const missing = await send(sessionId, { to: TO, type: 'image', media: { url: `${receiver.url}/missing`, mimetype: 'image/png' } });
      expect([missing.status, missing.body.error.message]).toEqual([422, 'media could not be fetched: the media URL answered 404']);
      const slow = await send(sessionId, { to: TO, type: 'image', media: { url: `${receiver.url}/slow`, mimetype: 'image/png' } });
      expect(slow.status).toBe(422);
      expect(slow.body.error.details.fields).toEqual({ 'media.url': ['the media URL did not answer within 1000 ms'] });
      expect(await rowsOf(sessionId)).toEqual([]);
      // none of the refused sends took the session's one slot of the minute
      expect((await send(sessionId, { to: TO, type: 'image', media: { base64: b64('ok'), mimetype: 'image/png' } })).status).toBe(202);
    });

    it('signals the session gateway once the message is stored', async () => {
      const sessionId = await sessionRow(org.id);
      const subscriber = createRedis(process.env.REDIS_URL!);
      const seen: string[] = [];
      const stop = await new SendSignal(new RedisKeys(process.env.REDIS_KEY_PREFIX!)).listen(new GatewaySignals(subscriber), fakeGateway, (id) => seen.push(id));
      try {
        const res = await send(sessionId, { to: TO, text: 'nudge' });
        expect(res.status).toBe(202);
        await waitFor(() => seen.includes(sessionId), 5000, 'the send signal');
        expect(await rowsOf(sessionId)).toMatchObject([{ id: res.body.id, status: 'queued' }]);
      } finally {
        await stop();
        await subscriber.quit();
      }
    });
  });

  describe('concurrent plain sends of one session (the accept group)', () => {
    it('the first is stored alone, those arriving while its statement runs as one statement, with one signal per statement', async () => {
      const sessionId = await sessionRow(org.id);
      const marker = await sessionRow(org.id);
      const subscriber = createRedis(process.env.REDIS_URL!);
      const seen: string[] = [];
      const stop = await new SendSignal(new RedisKeys(process.env.REDIS_KEY_PREFIX!)).listen(new GatewaySignals(subscriber), fakeGateway, (id) => seen.push(id));
      const db = await testDataSource();
      const holder = db.createQueryRunner();
      const accepts = app.get(MessagesService).plainAccepts;
      const count = 12;
      try {
        // the session row held: the first accept's statement waits for it, and the others wait for that statement
        await holder.connect();
        await holder.startTransaction();
        await holder.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [sessionId]);
        const posted = Promise.all(Array.from({ length: count }, (_, i) => send(sessionId, { to: TO, text: `together ${i}` })));
        await waitFor(() => accepts.waitingFor(plainAcceptKey(org.id, sessionId)) === count - 1, 20000, 'the others to wait behind the first');
        await holder.commitTransaction();
        const answers = await posted;
        expect(answers.map((a) => a.status)).toEqual(Array(count).fill(202));

        const rows: Array<{ id: string; seq: number; created_at: Date }> = await db.query(
          'SELECT id, seq::int AS seq, created_at FROM messages WHERE session_id = $1 ORDER BY seq',
          [sessionId],
        );
        expect(rows.map((r) => r.id).sort()).toEqual(answers.map((a) => a.body.id).sort());
        // consecutive numbers; two statements (a statement's rows share its transaction's now())
        expect(rows.map((r) => r.seq - rows[0].seq)).toEqual(Array.from({ length: count }, (_, i) => i));
        const statements = new Set(rows.map((r) => r.created_at.toISOString()));
        expect(statements.size).toBe(2);
        expect(rows.filter((r) => r.created_at.getTime() === rows[0].created_at.getTime())).toHaveLength(1);

        // the API publishes on one connection, in order: once the marker's signal is heard, the group's were too
        expect((await send(marker, { to: TO, text: 'marker' })).status).toBe(202);
        await waitFor(() => seen.includes(marker), 5000, 'the marker signal');
        expect(seen.filter((id) => id === sessionId)).toHaveLength(2);
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
        await stop();
        await subscriber.quit();
      }
    });

    it('a group refused together (the session stopped meanwhile): each send answers its own 409, stores nothing, gives its slot back', async () => {
      const sessionId = await sessionRow(org.id);
      const db = await testDataSource();
      const holder = db.createQueryRunner();
      const accepts = app.get(MessagesService).plainAccepts;
      const count = 5;
      try {
        // the rates are kept by the first send; then the session stops while the others are grouped behind a held row
        expect((await send(sessionId, { to: TO, text: 'first' })).status).toBe(202);
        await holder.connect();
        await holder.startTransaction();
        await holder.query(`UPDATE sessions SET status = 'stopped' WHERE id = $1`, [sessionId]);
        const posted = Promise.all(Array.from({ length: count }, (_, i) => send(sessionId, { to: TO, text: `refused ${i}` })));
        await waitFor(() => accepts.waitingFor(plainAcceptKey(org.id, sessionId)) === count - 1, 20000, 'the others to wait behind the first');
        await holder.commitTransaction();
        const answers = await posted;
        expect(answers.map((a) => [a.status, a.body.error?.code, a.body.error?.details?.status])).toEqual(Array(count).fill([409, 'conflict', 'stopped']));
        expect(await rowsOf(sessionId)).toHaveLength(1);
        // each refused send gave its slot back: as many as the minute allows are accepted again once it works
        await db.query(`UPDATE sessions SET status = 'working' WHERE id = $1`, [sessionId]);
        expect((await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ ratePerMin: count + 1 })).status).toBe(200);
        const again = await Promise.all(Array.from({ length: count }, (_, i) => send(sessionId, { to: TO, text: `again ${i}` })));
        expect(again.map((a) => a.status)).toEqual(Array(count).fill(202));
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
      }
    });
  });

  describe('two API processes sending to one session', () => {
    const apis: AppProcess[] = [];
    const urls: string[] = [];

    beforeAll(async () => {
      for (let i = 0; i < 2; i += 1) {
        const port = await freePort();
        // the default media cap, so the send route's body limit (not BODY_LIMIT_BYTES) is what a big base64 meets
        apis.push(await startApp('api', { PORT: String(port), MEDIA_MAX_BYTES: String(16 * 1024 * 1024) }, `http://127.0.0.1:${port}/healthz`));
        urls.push(`http://127.0.0.1:${port}`);
      }
    }, 60000);

    afterAll(async () => {
      await Promise.all(apis.map((a) => a.stop()));
    });

    const post = (base: string, sessionId: string, body: object) =>
      fetch(`${base}/api/v1/sessions/${sessionId}/messages`, {
        method: 'POST',
        headers: { ...bearer(org.adminKey), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    it('accepts exactly ratePerMin concurrent sends across both, refusing the rest with a Retry-After within the minute', async () => {
      const sessionId = await sessionRow(org.id, { ratePerMin: 5, ratePerHour: 100 });
      const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => post(urls[i % 2], sessionId, { to: TO, text: `burst ${i}` })));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 202)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(11);
      for (const refused of answers.filter((a) => a.status === 429)) {
        const body = (await refused.json()) as { error: { code: string; details: { retryAfterSeconds: number; limit: string } } };
        const seconds = Number(refused.headers.get('retry-after'));
        expect(body.error).toMatchObject({ code: 'rate_limited', details: { retryAfterSeconds: seconds, limit: 'ratePerMin' } });
        expect(Number.isInteger(seconds)).toBe(true);
        expect(seconds).toBeGreaterThanOrEqual(1);
        expect(seconds).toBeLessThanOrEqual(60);
      }
      expect(await rowsOf(sessionId)).toHaveLength(5);
      // still full: the next send, on either process, is refused and stores nothing
      expect((await post(urls[0], sessionId, { to: TO, text: 'late' })).status).toBe(429);
      expect((await post(urls[1], sessionId, { to: TO, text: 'late' })).status).toBe(429);
      expect(await rowsOf(sessionId)).toHaveLength(5);
    });

    it('takes a base64 media far above BODY_LIMIT_BYTES on the send route, and keeps the small limit elsewhere', async () => {
      const sessionId = await sessionRow(org.id);
      const bytes = Buffer.alloc(2 * 1024 * 1024, 7);
      const res = await post(urls[0], sessionId, { to: TO, type: 'document', media: { base64: bytes.toString('base64'), mimetype: 'application/octet-stream' } });
      expect(res.status).toBe(202);
      expect(((await res.json()) as { media: { size: number } }).media.size).toBe(bytes.length);
      const elsewhere = await fetch(`${urls[1]}/api/v1/sessions`, {
        method: 'POST',
        headers: { ...bearer(org.adminKey), 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'x'.repeat(2 * 1024 * 1024) }),
      });
      expect(elsewhere.status).toBe(413);
    });
  });
});
