import type { NestExpressApplication } from '@nestjs/platform-express';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (runs may overlap), so the wipe below deletes only what this file's processes wrote
// (and per engine: `npm test` runs this file on both engines in one process, docs/testing.md)
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:flow-${process.env.E2E_ENGINE ?? 'sim'}-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = process.env.E2E_ENGINE === 'baileys' ? '8000' : '4000';

import type { EventEnvelope } from '@app/contracts';
import { GroupsRepository } from '@app/database';
import { GatewayDirectory } from '@app/fleet';
import { createRedis, RedisKeys } from '@app/redis';
import type { Redis } from 'ioredis';
import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { E2E_ENGINE, engineEnv, pairSession } from './support/engine';
import { AppProcess, freePort, startApp, waitFor } from './support/processes';
import { createWebhookRow, Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource, testDb } from './support/seed';
import { MESSAGE_FIELDS } from './support/message-fields';

/** WhatsApp carries a file name on documents only: on the real protocol an image's name does not travel. */
const IMAGE_FILENAME = (name: string) => (E2E_ENGINE === 'baileys' ? null : name);

const OWN_PHONE = '15550001111';
const OWN_JID = `${OWN_PHONE}@s.whatsapp.net`;
const TO = '15550009999@s.whatsapp.net';
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const b64 = (b: Buffer) => b.toString('base64');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the simulator and of event payloads
type Json = any;

// the failure cases restart the gateway (twice for the crash) and wait for the session to work again each time
jest.setTimeout(90000);

/**
 * Messaging end to end (CONTRACT 10): the API (in-process on the `sim` pass; a process on the `baileys` pass, since
 * downloading inbound media loads Baileys, which is ESM-only and which jest cannot load), a gateway, the network
 * simulator and a webhook dispatcher as processes, a webhook receiver and a WebSocket client. One gateway id throughout: the crash and
 * wipe cases restart it (with a fault point or a short TTL) and the session resumes on it from PostgreSQL.
 */
describe(`Messaging end to end (API → gateway → simulator → webhooks and WebSocket, ${E2E_ENGINE} engine)`, () => {
  let app: NestExpressApplication | undefined;
  let apiProcess: AppProcess | undefined;
  let apiUrl: string;
  let sim: AppProcess;
  let gateway: AppProcess;
  let dispatcher: AppProcess;
  let receiver: Receiver;
  let redis: Redis;
  let simUrl: string;
  let gatewayHealthPort: number;
  let org: SeededOrg;
  let sessionId: string;
  let socket: WebSocket;
  const wsEnvelopes: EventEnvelope[] = [];
  const gatewayId = `gw-flow-${E2E_ENGINE}-${process.pid}`;
  const prefix = process.env.REDIS_KEY_PREFIX!;

  const api = () => request(app ? app.getHttpServer() : apiUrl);
  const simGet = async (path: string): Promise<Json> => (await fetch(simUrl + path)).json();
  const simCall = async (method: string, path: string, body: object = {}) => {
    const res = await fetch(simUrl + path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json()) as Json;
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const simMessages = async (): Promise<Json[]> => (await simGet(`/sim/messages?sessionId=${sessionId}`)).data;
  const presenceLog = async (): Promise<Json[]> => (await simGet(`/sim/sessions/${sessionId}/presence-log`)).data;

  const startGateway = async (env: Record<string, string> = {}) =>
    startApp(
      'gateway',
      {
        GATEWAY_ID: gatewayId,
        GATEWAY_HEALTH_PORT: String(gatewayHealthPort),
        ...engineEnv(simUrl, {
          GATEWAY_HEARTBEAT_MS: '300',
          GATEWAY_TTL_MS: '2000',
          RECONNECT_BASE_DELAY_MS: '100',
          MESSAGE_SWEEP_MS: '300',
          TYPING_MIN_MS: '150',
          TYPING_MAX_MS: '300',
          ...env,
        }),
      },
      `http://127.0.0.1:${gatewayHealthPort}/healthz`,
    );
  /** The same gateway id again (its sessions resume from PostgreSQL), with `env` on top of the usual settings. */
  const restartGateway = async (env: Record<string, string> = {}) => {
    await gateway.stop();
    gateway = await startGateway(env);
    await waitFor(async () => (await simGet(`/sim/sessions/${sessionId}`)).connected, 10000, 'the session to reconnect');
    // connected on the network is not yet `working` for the API (the real engine logs in first): sends need working
    await waitFor(async () => (await getSessionNow()).status === 'working', 20000, 'the session to work again');
  };

  const send = async (body: object, headers: Record<string, string> = {}): Promise<Json> => {
    const res = await api().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(org.adminKey)).set(headers).send(body);
    if (res.status !== 202) throw new Error(`send answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const getSessionNow = async (): Promise<Json> => (await api().get(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey))).body;
  const getMessage = async (id: string): Promise<Json> => (await api().get(`/api/v1/sessions/${sessionId}/messages/${id}`).set(bearer(org.adminKey))).body;
  const waitMessageStatus = (id: string, status: string, timeoutMs = 10000) =>
    waitFor(async () => {
      const m = await getMessage(id);
      return m.status === status ? m : null;
    }, timeoutMs, `message ${id} to be ${status}`);

  /** Envelopes of this session the webhook receiver got, once per event id (delivery is at-least-once). */
  const hooked = (event: string): Array<EventEnvelope<Json>> => {
    const seen = new Map<string, EventEnvelope>();
    for (const r of receiver.at('/hook')) {
      const e = JSON.parse(r.rawBody.toString()) as EventEnvelope;
      if (e.event === event && e.sessionId === sessionId) seen.set(e.id, e);
    }
    return [...seen.values()];
  };
  /**
   * Waits until the webhook receiver and the WebSocket both got the one envelope of `event` that `match` selects,
   * and checks they are the same envelope.
   */
  const seenByBoth = async (event: string, match: (payload: Json) => boolean, what = event): Promise<EventEnvelope> => {
    const onHook = await waitFor(() => hooked(event).find((e) => match(e.payload)), 15000, `${what} on the webhook receiver`);
    const onWs = await waitFor(() => wsEnvelopes.find((e) => e.id === onHook.id), 5000, `${what} on the WebSocket`);
    expect(onWs).toEqual(onHook);
    expect(hooked(event).filter((e) => match(e.payload))).toHaveLength(1);
    return onHook;
  };

  beforeAll(async () => {
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    gatewayHealthPort = await freePort();
    sim = await startApp('sim', { SIM_PORT: String(simPort), SIM_QR_INTERVAL_MS: '60000' }, `${simUrl}/healthz`);
    // one by one: should one fail to start, those already started are assigned, so afterAll closes them (an open
    // receiver kept jest from exiting after a gateway on the real engine timed out starting on a loaded machine)
    receiver = await startReceiver();
    dispatcher = await startDispatcherProcess();
    gateway = await startGateway();
    // inbound media of `sim` sessions is streamed from the simulator; of `baileys` sessions downloaded from its
    // WhatsApp Web media host, whose per-run CA the API's test seam trusts (WHATSAPP_EMULATOR_URL, docs/network-sim.md)
    let port: number;
    if (E2E_ENGINE === 'baileys') {
      port = await freePort();
      apiUrl = `http://127.0.0.1:${port}`;
      apiProcess = await startApp('api', { PORT: String(port), NETWORK_SIM_URL: simUrl, WHATSAPP_EMULATOR_URL: simUrl }, `${apiUrl}/healthz`);
    } else {
      process.env.NETWORK_SIM_URL = simUrl;
      app = await createApiApp({ quiet: true });
      await app.listen(0, '127.0.0.1');
      port = (app.getHttpServer().address() as AddressInfo).port;
    }
    redis = createRedis(process.env.REDIS_URL!);
    org = await seedOrganization('Flow Inc');
    await createWebhookRow(await testDataSource(), redis, { organizationId: org.id, url: `${receiver.url}/hook`, events: ['*'] });

    socket = new WebSocket(`ws://127.0.0.1:${port}/api/v1/ws?token=${org.adminKey}`);
    socket.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if (msg.id) wsEnvelopes.push(msg);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('message', () => resolve());
      socket.once('error', reject);
    });

    // the gateway takes sessions once its registry entry is alive (its health answers first, and with a 2 s TTL a
    // heartbeat starved on a loaded machine lapses for a moment): a clean-clone CI once got 503 here
    const directory = new GatewayDirectory(redis, new RedisKeys(process.env.REDIS_KEY_PREFIX!));
    await waitFor(async () => (await directory.live()).some((g) => g.id === gatewayId), 15000, 'the gateway to take sessions');
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Flow', ratePerMin: 10000, ratePerHour: 1000000 });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    await pairSession({ api, token: org.adminKey, simUrl, sessionId, phoneNumber: OWN_PHONE });
  }, 90000);

  afterAll(async () => {
    socket?.terminate();
    await app?.close();
    await apiProcess?.stop();
    await Promise.all([gateway?.stop(), dispatcher?.stop()]);
    await sim?.stop();
    await receiver?.close();
    redis?.disconnect();
    await closeTestDataSource();
  });

  describe('sending', () => {
    const sent: Record<string, Json> = {};
    const image = Buffer.from('png-bytes-of-a-picture');
    const video = Buffer.from('mp4-bytes-0123456789');
    const audio = Buffer.from('ogg-opus-bytes');
    const pdf = Buffer.from('%PDF-1.4 invoice');

    /** The network's one entry of a sent message, sent once from our account to TO. */
    const onNetworkOnce = async (m: Json) => {
      const listed = (await simMessages()).filter((n) => n.id === m.waMessageId);
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ sessionId, from: OWN_JID, to: TO, sends: 1 });
      return listed[0];
    };
    /** message.sent of each, the same envelope on the webhook and the WebSocket, carrying the Message as GET shows it. */
    const publishedAsSent = async (messages: Record<string, Json>) => {
      for (const [name, m] of Object.entries(messages)) {
        const envelope = await seenByBoth('message.sent', (p) => p.message.id === m.id, `message.sent of the ${name}`);
        expect(Object.keys(envelope.payload.message as object).sort()).toEqual(MESSAGE_FIELDS);
        // the envelope is the message when it was recorded sent; what happens to it later (our own reaction to the text,
        // which both engines echo back and the gateway stores on it, sometimes before and sometimes after that record) is
        // GET's, not the envelope's
        expect(envelope.payload.message).toEqual({ ...(await getMessage(m.id)), updatedAt: expect.any(Number), reactions: expect.any(Array) });
        expect(envelope.payload.message).toMatchObject({ status: 'sent', direction: 'out', waMessageId: m.waMessageId, sentAt: expect.any(Number) });
      }
    };

    it('sends a text, a poll and a reaction once to the network (decrypted by the contact on baileys), publishing message.sent on the webhook and the WebSocket', async () => {
      sent.text = await send({ to: TO, text: 'hello there' });
      sent.poll = await send({ to: TO, type: 'poll', poll: { name: 'Lunch?', options: ['pizza', 'sushi'] } });
      sent.reaction = await send({ to: TO, type: 'reaction', reaction: { messageId: sent.text.id, emoji: '👍' } });
      for (const m of Object.values(sent)) await waitMessageStatus(m.id, 'sent', 20000);
      expect(await onNetworkOnce(sent.text)).toMatchObject({ type: 'text', text: 'hello there', quotedWaMessageId: null, mentions: [] });
      expect(await onNetworkOnce(sent.poll)).toMatchObject({ type: 'poll', poll: { name: 'Lunch?', options: ['pizza', 'sushi'], selectableCount: 1 } });
      expect(await onNetworkOnce(sent.reaction)).toMatchObject({ type: 'reaction', reaction: { waMessageId: sent.text.waMessageId, emoji: '👍' } });
      await publishedAsSent({ text: sent.text, poll: sent.poll, reaction: sent.reaction });
    });

    // the text, the poll and the reaction are sent within Baileys' 100 ms flush of its event buffer: the reaction's echo
    // is folded into the buffered echo of the text (its `reactions`), not emitted as messages.reaction (issue 38 item 4)
    it('our own reaction is kept on its target and announced once as message.reaction, on either engine (issue 38)', async () => {
      // Baileys echoes the account's own messages; the sim engine echoes its reactions the same way (sim-connection.ts)
      const e = await seenByBoth('message.reaction', (p) => p.waMessageId === sent.text.waMessageId && p.from === OWN_JID, 'our own reaction');
      expect(e.payload).toEqual({ messageId: sent.text.id, waMessageId: sent.text.waMessageId, chatJid: TO, from: OWN_JID, emoji: '👍' });
      expect((await getMessage(sent.text.id)).reactions).toEqual([{ from: OWN_JID, emoji: '👍' }]);
    });

    it('sends a location, a contact, a reply and mentions once to the network, publishing message.sent', async () => {
      const more: Record<string, Json> = {};
      more.location = await send({ to: TO, type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Berlin' } });
      more.contact = await send({ to: TO, type: 'contact', contact: { fullName: 'Ada Lovelace', phoneNumber: '+44 20 7946 0000' } });
      more.reply = await send({ to: TO, text: 'as I said', quotedMessageId: sent.text.id });
      more.mentions = await send({ to: TO, text: 'hi @15550008888', mentions: ['15550008888@s.whatsapp.net'] });
      for (const m of Object.values(more)) await waitMessageStatus(m.id, 'sent', 20000);
      expect(await onNetworkOnce(more.location)).toMatchObject({ type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Berlin' } });
      expect(await onNetworkOnce(more.contact)).toMatchObject({ type: 'contact', contact: { fullName: 'Ada Lovelace', phoneNumber: expect.stringContaining('442079460000') } });
      expect(await onNetworkOnce(more.reply)).toMatchObject({ type: 'text', text: 'as I said', quotedWaMessageId: sent.text.waMessageId });
      expect(await onNetworkOnce(more.mentions)).toMatchObject({ type: 'text', mentions: ['15550008888@s.whatsapp.net'] });
      await publishedAsSent(more);
      expect((await getMessage(more.reply.id)).quotedMessageId).toBe(sent.text.id);
    });

    it('sends each media type once to the network with its bytes, publishing message.sent', async () => {
      const media: Record<string, Json> = {};
      media.image = await send({ to: TO, type: 'image', text: 'a caption', media: { base64: b64(image), mimetype: 'image/png', filename: 'a.png' } });
      media.video = await send({ to: TO, type: 'video', media: { base64: b64(video), mimetype: 'video/mp4' } });
      media.audio = await send({ to: TO, type: 'audio', media: { base64: b64(audio), mimetype: 'audio/ogg; codecs=opus' } });
      media.document = await send({ to: TO, type: 'document', media: { base64: b64(pdf), mimetype: 'application/pdf', filename: 'invoice.pdf' } });
      for (const m of Object.values(media)) await waitMessageStatus(m.id, 'sent', 20000);
      expect(await onNetworkOnce(media.image)).toMatchObject({
        type: 'image',
        text: 'a caption',
        media: { mimetype: 'image/png', size: image.length, filename: IMAGE_FILENAME('a.png'), caption: 'a caption', sha256: sha256(image) },
      });
      expect(await onNetworkOnce(media.video)).toMatchObject({ type: 'video', media: { mimetype: 'video/mp4', size: video.length, sha256: sha256(video) } });
      expect(await onNetworkOnce(media.audio)).toMatchObject({ type: 'audio', media: { mimetype: 'audio/ogg; codecs=opus', size: audio.length, sha256: sha256(audio) } });
      expect(await onNetworkOnce(media.document)).toMatchObject({ type: 'document', media: { mimetype: 'application/pdf', filename: 'invoice.pdf', sha256: sha256(pdf) } });
      await publishedAsSent(media);
    });

    it('turns the recipient\'s receipts into message.ack after message.sent, and GET shows delivered then read', async () => {
      // Baileys reports its own sends as an `append` upsert inside a buffered function, and a receipt arriving while
      // that buffer is open is folded into it (event-buffer.js): a contact's text taken first shows it was flushed
      const { id: flushed } = await simCall('POST', `/sim/sessions/${sessionId}/inbound`, { from: '15550002020@s.whatsapp.net', text: 'after your messages' });
      await seenByBoth('message.received', (p) => p.message.waMessageId === flushed);
      await simCall('POST', `/sim/sessions/${sessionId}/receipt`, { waMessageId: sent.text.waMessageId, status: 'delivered' });
      const delivered = await seenByBoth('message.ack', (p) => p.messageId === sent.text.id && p.status === 'delivered');
      expect(delivered.payload).toEqual({ messageId: sent.text.id, waMessageId: sent.text.waMessageId, chatJid: TO, status: 'delivered' });
      const sentEnvelope = hooked('message.sent').find((e) => (e.payload.message as Json).id === sent.text.id)!;
      // envelope ids are ULIDs: the order in which the gateway produced them
      expect(delivered.id > sentEnvelope.id).toBe(true);
      expect((await getMessage(sent.text.id)).status).toBe('delivered');

      await simCall('POST', `/sim/sessions/${sessionId}/receipt`, { waMessageId: sent.text.waMessageId, status: 'read' });
      await seenByBoth('message.ack', (p) => p.messageId === sent.text.id && p.status === 'read');
      expect((await getMessage(sent.text.id)).status).toBe('read');
    });

    it('sends an idempotent repeat once: the same Message, one entry on the network', async () => {
      const key = `flow-${Date.now()}`;
      const first = await send({ to: TO, text: 'only once' }, { 'Idempotency-Key': key });
      const again = await send({ to: TO, text: 'only once' }, { 'Idempotency-Key': key });
      expect(again.id).toBe(first.id);
      await waitMessageStatus(first.id, 'sent');
      expect((await simMessages()).filter((n) => n.text === 'only once')).toHaveLength(1);
      await seenByBoth('message.sent', (p) => p.message.id === first.id);
    });

    it('sends texts in acceptance order, also when they are posted concurrently, each once', async () => {
      const sequential: Json[] = [];
      for (let i = 0; i < 5; i++) sequential.push(await send({ to: TO, text: `in order ${i}` }));
      const posted = await Promise.all(Array.from({ length: 8 }, (_, i) => send({ to: TO, text: `burst ${i}` })));
      for (const m of [...sequential, ...posted]) await waitMessageStatus(m.id, 'sent');
      const onNetwork = await simMessages();
      const inOrder = sequential.map((m) => m.waMessageId);
      expect(onNetwork.filter((n) => inOrder.includes(n.id)).map((n) => n.id)).toEqual(inOrder);
      // concurrent POSTs: the order they were accepted in is the order their inserts committed (the session's
      // message number), which is not their id order; the network must see exactly that order
      const burst = posted.map((m) => m.waMessageId);
      const accepted: Array<{ wa_message_id: string }> = await (await testDataSource()).query(
        `SELECT wa_message_id FROM messages WHERE wa_message_id = ANY($1) ORDER BY seq`,
        [burst],
      );
      expect(onNetwork.filter((n) => burst.includes(n.id)).map((n) => n.id)).toEqual(accepted.map((r) => r.wa_message_id));
    });

    it('a burst of concurrent plain sends (grouped accepts): each answered 202 once, stored once, sent once, in acceptance order', async () => {
      const count = 40;
      const posted = await Promise.all(Array.from({ length: count }, (_, i) => send({ to: TO, text: `grouped ${i}` })));
      const ids = posted.map((m) => m.id);
      expect(new Set(ids).size).toBe(count);
      const db = await testDataSource();
      await waitFor(
        async () => (await db.query(`SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND status = 'queued'`, [ids]))[0].n === 0,
        30000,
        'the burst to be sent',
      );
      const stored: Array<{ id: string; wa_message_id: string; status: string }> = await db.query(
        `SELECT id, wa_message_id, status FROM messages WHERE session_id = $1 AND text LIKE 'grouped %' ORDER BY seq`,
        [sessionId],
      );
      // stored once each, as answered, none failed
      expect(stored.map((r) => r.id).sort()).toEqual([...ids].sort());
      expect(new Map(stored.map((r) => [r.id, r.wa_message_id]))).toEqual(new Map(posted.map((m) => [m.id, m.waMessageId])));
      expect(stored.filter((r) => r.status === 'failed')).toEqual([]);
      // on the network once each, in the order of the session's acceptance numbers
      const burst = new Set(stored.map((r) => r.wa_message_id));
      expect((await simMessages()).filter((n) => burst.has(n.id)).map((n) => n.id)).toEqual(stored.map((r) => r.wa_message_id));
    });

    it('with presenceTyping on, shows composing before a text and paused before the next send', async () => {
      expect((await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ presenceTyping: true })).status).toBe(200);
      try {
        const m = await send({ to: '15550004444@s.whatsapp.net', text: 'typed by a human' });
        await waitMessageStatus(m.id, 'sent');
        const log = (await presenceLog()).filter((e) => e.chatJid === '15550004444@s.whatsapp.net');
        expect(log.map((e) => e.presence)).toEqual(['composing', 'paused']);
        const onNetwork = (await simMessages()).find((n) => n.id === m.waMessageId);
        expect(log[0].at).toBeLessThanOrEqual(log[1].at);
        expect(log[1].at).toBeLessThanOrEqual(onNetwork.timestamp);
      } finally {
        await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ presenceTyping: false });
      }
    });

    it('with presenceTyping off, sends without any typing presence', async () => {
      const m = await send({ to: '15550005555@s.whatsapp.net', text: 'no typing' });
      await waitMessageStatus(m.id, 'sent');
      expect((await presenceLog()).filter((e) => e.chatJid === '15550005555@s.whatsapp.net')).toEqual([]);
    });
  });

  describe('inbound', () => {
    const FROM = '15550007777@s.whatsapp.net';
    const GROUP_MEMBER = '15550006666@s.whatsapp.net';
    let ours: Json;
    let poll: Json;

    beforeAll(async () => {
      ours = await send({ to: FROM, text: 'our text' });
      poll = await send({ to: FROM, type: 'poll', poll: { name: 'When?', options: ['today', 'tomorrow'] } });
      await waitMessageStatus(poll.id, 'sent');
    });

    const inbound = async (body: object): Promise<Json> => {
      const { id } = await simCall('POST', `/sim/sessions/${sessionId}/inbound`, body);
      const envelope = await seenByBoth('message.received', (p) => p.message.waMessageId === id, `message.received of ${JSON.stringify(body).slice(0, 60)}`);
      const message = envelope.payload.message as Json;
      expect(Object.keys(message).sort()).toEqual(MESSAGE_FIELDS);
      expect(message).toEqual(await getMessage(message.id));
      expect(message).toMatchObject({ sessionId, organizationId: org.id, direction: 'in', status: 'received', waMessageId: id });
      return message;
    };
    const downloaded = async (messageId: string) => {
      const res = await api().get(`/api/v1/sessions/${sessionId}/messages/${messageId}/media`).set(bearer(org.adminKey)).buffer(true).parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        // the bytes; an error's envelope as JSON (the document check reads it, the message below shows it)
        r.on('end', () => {
          const body = Buffer.concat(chunks);
          cb(null, /json/.test(String(r.headers['content-type'])) ? JSON.parse(body.toString()) : body);
        });
      });
      if (res.status !== 200) throw new Error(`GET …/media answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body as Buffer;
    };

    it('a text, and autoRead marks it read on the network', async () => {
      const m = await inbound({ from: FROM, text: 'hi from a contact' });
      expect(m).toMatchObject({ chatJid: FROM, from: FROM, type: 'text', text: 'hi from a contact', media: null, quotedMessageId: null });
      await waitFor(async () => (await presenceLog()).find((e) => e.type === 'read' && e.waMessageId === m.waMessageId), 10000, 'a read receipt');
    });

    it('an image whose bytes download through GET …/media unchanged', async () => {
      const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 251));
      const m = await inbound({ from: FROM, type: 'image', text: 'look', media: { base64: b64(bytes), mimetype: 'image/jpeg', filename: 'pic.jpg' } });
      expect(m).toMatchObject({ type: 'image', media: { mimetype: 'image/jpeg', size: bytes.length, filename: IMAGE_FILENAME('pic.jpg'), caption: 'look' } });
      expect(sha256(await downloaded(m.id))).toBe(sha256(bytes));
    });

    it('video, audio, document and sticker with their media metadata', async () => {
      expect(await inbound({ from: FROM, type: 'video', text: 'clip', media: { size: 2048 } })).toMatchObject({ type: 'video', media: { mimetype: 'video/mp4', size: 2048, caption: 'clip' } });
      const voice = await inbound({ from: FROM, type: 'audio', media: {} });
      expect(voice).toMatchObject({ type: 'audio', media: { mimetype: 'audio/ogg; codecs=opus', size: 1024 } });
      expect(await downloaded(voice.id)).toHaveLength(1024);
      expect(await inbound({ from: FROM, type: 'document', media: { filename: 'terms.pdf' } })).toMatchObject({ type: 'document', media: { mimetype: 'application/pdf', filename: 'terms.pdf' } });
      expect(await inbound({ from: FROM, type: 'sticker', media: {} })).toMatchObject({ type: 'sticker', media: { mimetype: 'image/webp', size: 1024 } });
    });

    it('a location and a contact', async () => {
      expect(await inbound({ from: FROM, type: 'location', location: { latitude: -33.86, longitude: 151.21, name: 'Sydney' } })).toMatchObject({
        type: 'location',
        location: { latitude: -33.86, longitude: 151.21, name: 'Sydney' },
      });
      expect(await inbound({ from: FROM, type: 'contact', contact: { fullName: 'Grace Hopper', phoneNumber: '15550003030' } })).toMatchObject({
        type: 'contact',
        contact: { fullName: 'Grace Hopper', phoneNumber: '15550003030' },
      });
    });

    it('a reply, its quote resolved to our message id', async () => {
      expect(await inbound({ from: FROM, text: 'replying', quotedWaMessageId: ours.waMessageId })).toMatchObject({ quotedMessageId: ours.id, text: 'replying' });
    });

    it('a group message from a member', async () => {
      const groupJid = '120363000000000077@g.us';
      expect(await inbound({ from: GROUP_MEMBER, chatJid: groupJid, text: 'hello group' })).toMatchObject({ chatJid: groupJid, from: GROUP_MEMBER, text: 'hello group' });
    });

    it('a reaction to our message, resolved to its id', async () => {
      await simCall('POST', `/sim/sessions/${sessionId}/reaction`, { from: FROM, waMessageId: ours.waMessageId, emoji: '❤️' });
      const e = await seenByBoth('message.reaction', (p) => p.waMessageId === ours.waMessageId);
      expect(e.payload).toEqual({ messageId: ours.id, waMessageId: ours.waMessageId, chatJid: FROM, from: FROM, emoji: '❤️' });
    });

    it('a vote on a poll we sent, with option names', async () => {
      await simCall('POST', `/sim/sessions/${sessionId}/poll-vote`, { from: FROM, pollWaMessageId: poll.waMessageId, options: ['tomorrow'] });
      const e = await seenByBoth('poll.vote', (p) => p.pollMessageId === poll.id);
      expect(e.payload).toEqual({ pollMessageId: poll.id, chatJid: FROM, voter: FROM, selectedOptions: ['tomorrow'] });
    });

    it('a presence change and a call', async () => {
      await simCall('POST', `/sim/sessions/${sessionId}/presence`, { jid: FROM, presence: 'recording' });
      const presence = await seenByBoth('presence.update', (p) => p.jid === FROM && p.presence === 'recording');
      expect(presence.payload).toEqual({ chatJid: FROM, jid: FROM, presence: 'recording' });

      const { callId } = await simCall('POST', `/sim/sessions/${sessionId}/call`, { from: FROM, isVideo: true });
      const call = await seenByBoth('call.incoming', (p) => p.callId === callId);
      expect(call.payload).toEqual({ callId, from: FROM, isVideo: true, isGroup: false, rejected: false });
    });

    it('group changes and members, kept in PostgreSQL (member list for group sends)', async () => {
      const created = await api().post(`/api/v1/sessions/${sessionId}/groups`).set(bearer(org.adminKey)).send({ name: 'Team', participants: [GROUP_MEMBER] });
      expect(created.status).toBe(201);
      const groupJid: string = created.body.groupJid;

      // the control API plays an admin it does not name: no actor. One change at a time, as a phone makes them: on
      // WhatsApp each is a notification of its own, and Baileys' event buffer keeps only the first group update of a
      // group per flush (docs/network-sim.md), so two changes landing together would lose the second
      await simCall('PATCH', `/sim/groups/${groupJid}`, { subject: 'Team 2025' });
      const renamed = await seenByBoth('group.update', (p) => p.groupJid === groupJid && 'subject' in p.changes);
      expect(renamed.payload).toEqual({ groupJid, changes: { subject: 'Team 2025' }, actor: null });
      await simCall('PATCH', `/sim/groups/${groupJid}`, { isLocked: true });
      const locked = await seenByBoth('group.update', (p) => p.groupJid === groupJid && 'isLocked' in p.changes);
      expect(locked.payload).toEqual({ groupJid, changes: { isLocked: true }, actor: null });

      await simCall('POST', `/sim/groups/${groupJid}/participants`, { action: 'add', participants: [FROM] });
      const added = await seenByBoth('group.participants', (p) => p.groupJid === groupJid && p.action === 'add');
      expect(added.payload).toEqual({ groupJid, action: 'add', participants: [FROM], actor: null });
      await simCall('POST', `/sim/groups/${groupJid}/participants`, { action: 'remove', participants: [GROUP_MEMBER] });
      await seenByBoth('group.participants', (p) => p.groupJid === groupJid && p.action === 'remove');

      const listed = (await api().get(`/api/v1/sessions/${sessionId}/groups`).set(bearer(org.adminKey))).body.data.find((g: Json) => g.groupJid === groupJid);
      expect(listed).toMatchObject({ subject: 'Team 2025', isLocked: true, participants: 2 });
      const metadata = await new GroupsRepository(await testDb()).metadataOf(sessionId, groupJid);
      expect(metadata?.participants.sort()).toEqual([FROM, OWN_JID].sort());
    });
  });

  describe('failures', () => {
    it('SIGKILL between the network\'s ack and the status update: the resend has the same id, the network lists it once', async () => {
      await restartGateway({ GATEWAY_FAULT: 'crash-after-send' });
      const crashing = gateway;
      const exited = new Promise<void>((resolve) => (crashing.child.exitCode !== null || crashing.child.signalCode !== null ? resolve() : crashing.child.once('exit', () => resolve())));
      const m = await send({ to: TO, text: 'sent across a crash' });
      await exited;
      expect(crashing.child.signalCode).toBe('SIGKILL');
      const onNetwork = (await simMessages()).filter((n) => n.text === 'sent across a crash');
      expect(onNetwork).toHaveLength(1);
      expect((await getMessage(m.id)).status).toBe('queued');

      gateway = await startGateway();
      await waitMessageStatus(m.id, 'sent', 30000);
      const after = (await simMessages()).filter((n) => n.text === 'sent across a crash');
      expect(after).toHaveLength(1);
      expect(after[0].id).toBe(m.waMessageId);
      expect(after[0].sends).toBeGreaterThanOrEqual(2);
      await seenByBoth('message.sent', (p) => p.message.id === m.id);
    });

    it('a message that waits longer than MESSAGE_TTL_SECONDS ends failed with message.failed', async () => {
      await restartGateway({ MESSAGE_TTL_SECONDS: '2' });
      const pid = gateway.child.pid!;
      // a frozen gateway: the session stays `working` in PostgreSQL (the API accepts) but nothing is sent
      process.kill(pid, 'SIGSTOP');
      let m: Json;
      try {
        m = await send({ to: TO, text: 'too late' });
        await new Promise((r) => setTimeout(r, 2500));
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      const failed = await waitMessageStatus(m.id, 'failed');
      expect(failed.error).toBe('expired: waited more than 2 s for a connection');
      const e = await seenByBoth('message.failed', (p) => p.message.id === m.id);
      expect(e.payload.message as Json).toMatchObject({ id: m.id, status: 'failed', error: failed.error, sentAt: null });
      expect((await simMessages()).filter((n) => n.text === 'too late')).toEqual([]);
      await restartGateway();
    });

    it('every Redis key of the run deleted and the send signals lost: each queued message is still sent once (the sweep)', async () => {
      const pid = gateway.child.pid!;
      process.kill(pid, 'SIGSTOP');
      const texts = ['wiped 1', 'wiped 2', 'wiped 3', 'wiped 4'];
      const queued: Json[] = [];
      try {
        // what a Redis restart does to a running gateway: its connections (and the pub/sub signals on them) are gone
        await killRedisClientsOf(redis, pid);
        for (const text of texts) queued.push(await send({ to: TO, text }));
        let deleted = 0;
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
          cursor = next;
          if (keys.length > 0) deleted += await redis.del(...keys);
        } while (cursor !== '0');
        expect(deleted).toBeGreaterThan(0);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      for (const m of queued) await waitMessageStatus(m.id, 'sent', 15000);
      const onNetwork = (await simMessages()).filter((n) => texts.includes(n.text));
      expect(onNetwork.map((n) => n.id)).toEqual(queued.map((m) => m.waMessageId));
      expect(onNetwork.every((n) => n.sends === 1)).toBe(true);
    });
  });
});

/**
 * Closes, from the Redis side, every connection process `pid` holds to Redis (found through /proc: its sockets'
 * local ports), as a Redis restart would. The process is frozen by the caller, so it cannot reconnect in between.
 */
async function killRedisClientsOf(redis: Redis, pid: number): Promise<void> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const target = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })();
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]);
  }
  const redisPort = Number(new URL(process.env.REDIS_URL!).port || 6379);
  const localPorts: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || !inodes.has(cols[9])) continue;
      const [, localPort] = cols[1].split(':');
      const [, remotePort] = cols[2].split(':');
      if (parseInt(remotePort, 16) === redisPort) localPorts.push(parseInt(localPort, 16));
    }
  }
  expect(localPorts.length).toBeGreaterThan(0);
  const clients = String(await redis.client('LIST')).split('\n');
  for (const port of localPorts) {
    const line = clients.find((c) => new RegExp(` addr=[^ ]+:${port} `).test(` ${c} `));
    const id = line && /(?:^| )id=(\d+)/.exec(line)?.[1];
    if (id) await redis.client('KILL', 'ID', id);
  }
}
