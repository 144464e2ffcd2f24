import type { NestExpressApplication } from '@nestjs/platform-express';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (runs may overlap)
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:msgactions-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '4000';

import { createApiApp } from '../apps/api/src/bootstrap';
import { checkedRequest as request } from './support/api-app';
import { AppProcess, startSimGateway, waitFor } from './support/processes';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';
import { simControl } from './support/sim-control';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the simulator and of the API
type Json = any;

const OWN_PHONE = '15550002222';
const TO = '15550007777@s.whatsapp.net';
const CONTACT = '15550006666@s.whatsapp.net';
const OTHER = '15550005555@s.whatsapp.net';
/** the simulator's edit window in this file: short, so a test can pass it */
const EDIT_WINDOW_MS = 4000;
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);

/**
 * CONTRACT 12's message actions and send types, and 13's calls, on the `sim` engine: the API in-process, a gateway and
 * the network simulator as processes, a local HTTP server for link previews (loopback is allowed to tests by
 * WEBHOOK_ALLOW_PRIVATE_TARGETS, as for media URLs).
 */
describe('Message actions, new send types and calls (sim engine)', () => {
  let app: NestExpressApplication;
  let sim: AppProcess;
  let gateway: AppProcess;
  let simUrl = '';
  let pages: Server;
  let pagesUrl = '';
  let org: SeededOrg;
  let stranger: SeededOrg;
  let sessionId: string;

  const api = () => request(app.getHttpServer());
  const control = simControl(() => simUrl);
  const { waitStatus } = sessionProbes(api, () => org.adminKey);
  const path = (rest: string) => `/api/v1/sessions/${sessionId}${rest}`;
  const simMessages = async (): Promise<Json[]> => (await control.get(`/sim/messages?sessionId=${sessionId}`)).data;
  const onNetwork = (waMessageId: string) => waitFor(async () => (await simMessages()).find((m) => m.id === waMessageId), 10000, `${waMessageId} on the network`);
  const send = async (body: object): Promise<Json> => {
    const res = await api().post(path('/messages')).set(bearer(org.adminKey)).send(body);
    if (res.status !== 202) throw new Error(`send answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const waitSent = (id: string) =>
    waitFor(async () => {
      const m = (await api().get(path(`/messages/${id}`)).set(bearer(org.adminKey))).body;
      return m.status === 'sent' ? m : null;
    }, 10000, `message ${id} to be sent`);
  const sendAndWait = async (body: object) => waitSent((await send(body)).id);
  const simPost = async (p: string, body: object) => {
    const res = await control.post(p, body);
    const json = await res.json();
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
    return json as Json;
  };
  const events = (type: string) => storedEvents(sessionId, type);
  const waitEvent = (type: string, match: (payload: Json) => boolean) =>
    waitFor(async () => (await events(type)).find((e) => match(e.payload)), 10000, `${type} stored`);
  const inbound = async (text: string): Promise<Json> => {
    const { id } = await simPost(`/sim/sessions/${sessionId}/inbound`, { from: CONTACT, text });
    return waitFor(async () => (await api().get(path('/messages?direction=in')).set(bearer(org.adminKey))).body.data.find((m: Json) => m.waMessageId === id), 10000, 'the inbound message stored');
  };

  beforeAll(async () => {
    pages = createServer((req, res) => {
      if (req.url === '/article') {
        res.writeHead(200, { 'content-type': 'text/html' }).end(
          `<html><head><title>fallback</title><meta property="og:title" content="Gateway &amp; friends">` +
            `<meta property="og:description" content="All about it"><meta property="og:image" content="/cover.jpg"></head><body>hi</body></html>`,
        );
      } else if (req.url === '/cover.jpg') {
        res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    ({ sim, simUrl, gateway } = await startSimGateway(`gw-msgactions-${process.pid}`, {
      sim: { SIM_EDIT_WINDOW_MS: String(EDIT_WINDOW_MS), SIM_QR_INTERVAL_MS: '60000' },
      gateway: { MESSAGE_SWEEP_MS: '300', RECONNECT_BASE_DELAY_MS: '100' },
    }));
    process.env.NETWORK_SIM_URL = simUrl;
    app = await createApiApp({ quiet: true });
    await app.listen(0, '127.0.0.1');
    org = await seedOrganization('Actions Inc');
    stranger = await seedOrganization('Stranger Inc');
    const created = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Actions', ratePerMin: 10000, ratePerHour: 1000000 });
    expect(created.status).toBe(201);
    expect(created.body.rejectCalls).toBe(false);
    sessionId = created.body.id;
    await waitFor(async () => (await control.get(`/sim/sessions/${sessionId}`)).qr, 10000, 'a QR');
    await simPost(`/sim/sessions/${sessionId}/scan`, { phoneNumber: OWN_PHONE });
    await waitStatus(sessionId, 'working');
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await gateway?.stop();
    await sim?.stop();
    await new Promise((resolve) => pages?.close(resolve));
    await closeTestDataSource();
  });

  it('edits an own sent text: the network shows the edit, the log the new text, message.edited the old one', async () => {
    const m = await sendAndWait({ to: TO, text: 'first words' });
    const res = await api().patch(path(`/messages/${m.id}`)).set(bearer(org.adminKey)).send({ text: 'better words' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: m.id, text: 'better words', status: 'sent', editedAt: expect.any(Number) });
    expect((await onNetwork(m.waMessageId)).edits).toEqual([{ text: 'better words', at: expect.any(Number) }]);
    const event = await waitEvent('message.edited', (p) => p.message.id === m.id);
    expect(event.payload).toMatchObject({ previousText: 'first words', message: { text: 'better words' } });
  });

  it('deletes an own sent message for everyone, once', async () => {
    const m = await sendAndWait({ to: TO, text: 'regrettable' });
    expect((await api().delete(path(`/messages/${m.id}`)).set(bearer(org.adminKey))).status).toBe(204);
    expect((await onNetwork(m.waMessageId)).revoked).toEqual(expect.any(Number));
    expect((await api().get(path(`/messages/${m.id}`)).set(bearer(org.adminKey))).body.revokedAt).toEqual(expect.any(Number));
    const event = await waitEvent('message.revoked', (p) => p.messageId === m.id);
    expect(event.payload).toEqual({ messageId: m.id, waMessageId: m.waMessageId, chatJid: TO, by: `${OWN_PHONE}@s.whatsapp.net` });
    // again: nothing more happens
    expect((await api().delete(path(`/messages/${m.id}`)).set(bearer(org.adminKey))).status).toBe(204);
    expect((await events('message.revoked')).filter((e) => e.payload.messageId === m.id)).toHaveLength(1);
    // a deleted message can be neither edited nor forwarded
    expect((await api().patch(path(`/messages/${m.id}`)).set(bearer(org.adminKey)).send({ text: 'x' })).status).toBe(409);
    expect((await api().post(path(`/messages/${m.id}:forward`)).set(bearer(org.adminKey)).send({ to: OTHER })).status).toBe(409);
  });

  it('refuses (409) an edit of a received message and one past the edit window, changing nothing', async () => {
    const received = await inbound('their words');
    const own = await api().patch(path(`/messages/${received.id}`)).set(bearer(org.adminKey)).send({ text: 'mine now' });
    expect(own.status).toBe(409);
    expect(own.body.error.code).toBe('conflict');

    const m = await sendAndWait({ to: TO, text: 'too late to fix' });
    await waitFor(() => Date.now() - m.sentAt > EDIT_WINDOW_MS + 500, EDIT_WINDOW_MS + 5000, 'the edit window to pass');
    const late = await api().patch(path(`/messages/${m.id}`)).set(bearer(org.adminKey)).send({ text: 'fixed' });
    expect(late.status).toBe(409);
    expect((await onNetwork(m.waMessageId)).edits).toEqual([]);
    expect((await api().get(path(`/messages/${m.id}`)).set(bearer(org.adminKey))).body.text).toBe('too late to fix');
  });

  it('forwards a message as a new outbound message, marked forwarded on the network', async () => {
    const m = await sendAndWait({ to: TO, text: 'worth sharing' });
    const res = await api().post(path(`/messages/${m.id}:forward`)).set(bearer(org.adminKey)).send({ to: '+1 555 000 5555' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ direction: 'out', chatJid: OTHER, type: 'text', text: 'worth sharing', status: 'queued' });
    expect(res.body.id).not.toBe(m.id);
    await waitSent(res.body.id);
    expect(await onNetwork(res.body.waMessageId)).toMatchObject({ to: OTHER, type: 'text', text: 'worth sharing', forwarded: true });
    expect((await onNetwork(m.waMessageId)).forwarded).toBe(false);

    const received = await inbound('pass it on');
    const fwd = await api().post(path(`/messages/${received.id}:forward`)).set(bearer(org.adminKey)).send({ to: OTHER });
    expect(fwd.status).toBe(202);
    await waitSent(fwd.body.id);
    expect(await onNetwork(fwd.body.waMessageId)).toMatchObject({ text: 'pass it on', forwarded: true });
  });

  it('sends a voice note (ptt) and a webp sticker; a sticker that is not webp is 422', async () => {
    const voice = await sendAndWait({ to: TO, type: 'voice', media: { base64: Buffer.from('opus-bytes').toString('base64'), mimetype: 'audio/ogg; codecs=opus' } });
    expect(voice.type).toBe('voice');
    expect(await onNetwork(voice.waMessageId)).toMatchObject({ type: 'voice', ptt: true, media: { mimetype: 'audio/ogg; codecs=opus' } });
    const sticker = await sendAndWait({ to: TO, type: 'sticker', media: { base64: Buffer.from('RIFFwebp').toString('base64'), mimetype: 'image/webp' } });
    expect(await onNetwork(sticker.waMessageId)).toMatchObject({ type: 'sticker', ptt: false, media: { mimetype: 'image/webp' } });
    const bad = await api().post(path('/messages')).set(bearer(org.adminKey)).send({ to: TO, type: 'sticker', media: { base64: 'AAAA', mimetype: 'image/png' } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body.error.details)).toContain('media');
  });

  it('votes on a poll: the network records the vote against the poll; options of another poll are 422', async () => {
    const poll = await sendAndWait({ to: TO, type: 'poll', poll: { name: 'Lunch?', options: ['pizza', 'sushi', 'salad'], selectableCount: 2 } });
    const vote = await sendAndWait({ to: TO, type: 'pollVote', pollVote: { pollMessageId: poll.id, options: ['sushi', 'salad'] } });
    expect(await onNetwork(vote.waMessageId)).toMatchObject({ type: 'pollVote', pollVote: { pollWaMessageId: poll.waMessageId, options: ['sushi', 'salad'] } });
    const bad = await api().post(path('/messages')).set(bearer(org.adminKey)).send({ to: TO, type: 'pollVote', pollVote: { pollMessageId: poll.id, options: ['steak'] } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.fields['pollVote.options']).toBeDefined();
  });

  it('gives a text with a URL a link preview from the page, and none with linkPreview: false', async () => {
    const withPreview = await sendAndWait({ to: TO, text: `read ${pagesUrl}/article.` });
    expect((await onNetwork(withPreview.waMessageId)).linkPreview).toEqual({
      url: `${pagesUrl}/article`,
      title: 'Gateway & friends',
      description: 'All about it',
      imageUrl: `${pagesUrl}/cover.jpg`,
      thumbnailBase64: JPEG.toString('base64'),
    });
    const without = await sendAndWait({ to: TO, text: `read ${pagesUrl}/article`, linkPreview: false });
    expect((await onNetwork(without.waMessageId)).linkPreview).toBeNull();
    // a page that cannot be read: sent without a preview
    const missing = await sendAndWait({ to: TO, text: `read ${pagesUrl}/gone` });
    expect((await onNetwork(missing.waMessageId)).linkPreview).toBeNull();
  });

  it('passes on a contact’s edit and delete of a message it sent as message.edited and message.revoked', async () => {
    const received = await inbound('typo hier');
    await simPost(`/sim/sessions/${sessionId}/edit`, { from: CONTACT, waMessageId: received.waMessageId, text: 'typo here' });
    const edited = await waitEvent('message.edited', (p) => p.message.id === received.id);
    expect(edited.payload).toMatchObject({ previousText: 'typo hier', message: { text: 'typo here', direction: 'in' } });
    await simPost(`/sim/sessions/${sessionId}/revoke`, { from: CONTACT, waMessageId: received.waMessageId });
    const revoked = await waitEvent('message.revoked', (p) => p.messageId === received.id);
    expect(revoked.payload).toMatchObject({ waMessageId: received.waMessageId, by: CONTACT });
  });

  it('rejects calls with rejectCalls on (call.incoming with rejected: true), and a ringing call through calls:reject', async () => {
    const on = await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ rejectCalls: true });
    expect(on.status).toBe(200);
    expect(on.body.rejectCalls).toBe(true);
    const { callId: auto } = await simPost(`/sim/sessions/${sessionId}/call`, { from: CONTACT });
    expect((await waitEvent('call.incoming', (p) => p.callId === auto)).payload).toEqual({ callId: auto, from: CONTACT, isVideo: false, isGroup: false, rejected: true });
    expect((await control.get(`/sim/calls?sessionId=${sessionId}`)).data.find((c: Json) => c.callId === auto).rejected).toEqual(expect.any(Number));

    expect((await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ rejectCalls: false })).body.rejectCalls).toBe(false);
    const { callId } = await simPost(`/sim/sessions/${sessionId}/call`, { from: CONTACT, isVideo: true });
    expect((await waitEvent('call.incoming', (p) => p.callId === callId)).payload).toMatchObject({ rejected: false, isVideo: true });
    expect((await control.get(`/sim/calls?sessionId=${sessionId}`)).data.find((c: Json) => c.callId === callId).rejected).toBeNull();
    expect((await api().post(path(`/calls/${callId}:reject`)).set(bearer(org.adminKey))).status).toBe(204);
    expect((await control.get(`/sim/calls?sessionId=${sessionId}`)).data.find((c: Json) => c.callId === callId).rejected).toEqual(expect.any(Number));
    // no longer ringing; a call never placed
    expect((await api().post(path(`/calls/${callId}:reject`)).set(bearer(org.adminKey))).status).toBe(409);
    expect((await api().post(path('/calls/ABCDEF0123:reject')).set(bearer(org.adminKey))).status).toBe(404);
  });

  it('answers 404 to another organization and 422 naming the field, changing nothing', async () => {
    const m = await sendAndWait({ to: TO, text: 'mine alone' });
    const as = bearer(stranger.adminKey);
    expect((await api().patch(path(`/messages/${m.id}`)).set(as).send({ text: 'theirs' })).status).toBe(404);
    expect((await api().delete(path(`/messages/${m.id}`)).set(as)).status).toBe(404);
    expect((await api().post(path(`/messages/${m.id}:forward`)).set(as).send({ to: OTHER })).status).toBe(404);
    expect((await api().post(path('/calls/ABCDEF0123:reject')).set(as)).status).toBe(404);
    expect((await api().patch(path('/messages/msg_unknown')).set(bearer(org.adminKey)).send({ text: 'x' })).status).toBe(404);

    const empty = await api().patch(path(`/messages/${m.id}`)).set(bearer(org.adminKey)).send({ text: '' });
    expect(empty.status).toBe(422);
    expect(empty.body.error.details.fields.text).toBeDefined();
    const badTo = await api().post(path(`/messages/${m.id}:forward`)).set(bearer(org.adminKey)).send({ to: 'nobody' });
    expect(badTo.status).toBe(422);
    expect(badTo.body.error.details.fields.to).toBeDefined();
    expect((await onNetwork(m.waMessageId)).edits).toEqual([]);
  });

  it('counts forwards against the send rate (429 with Retry-After)', async () => {
    const m = await sendAndWait({ to: TO, text: 'popular' });
    await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ ratePerMin: 1 }).expect(200);
    const res = await api().post(path(`/messages/${m.id}:forward`)).set(bearer(org.adminKey)).send({ to: OTHER });
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    await api().patch(`/api/v1/sessions/${sessionId}`).set(bearer(org.adminKey)).send({ ratePerMin: 10000 }).expect(200);
  });

  it('answers 409 while the session is stopped', async () => {
    const m = await sendAndWait({ to: TO, text: 'before the stop' });
    expect((await api().post(`/api/v1/sessions/${sessionId}:stop`).set(bearer(org.adminKey))).status).toBeLessThan(300);
    await waitStatus(sessionId, 'stopped');
    const edit = await api().patch(path(`/messages/${m.id}`)).set(bearer(org.adminKey)).send({ text: 'after' });
    expect(edit.status).toBe(409);
    expect(edit.body.error.details.status).toBe('stopped');
    expect((await api().delete(path(`/messages/${m.id}`)).set(bearer(org.adminKey))).status).toBe(409);
    expect((await api().post(path(`/messages/${m.id}:forward`)).set(bearer(org.adminKey)).send({ to: OTHER })).status).toBe(409);
    expect((await api().post(path('/calls/ABCDEF0123:reject')).set(bearer(org.adminKey))).status).toBe(409);
  });
});
