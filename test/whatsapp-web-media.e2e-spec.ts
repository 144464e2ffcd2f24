import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';
import request from 'supertest';
import { loadRunContext } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:whatsapp-web-media-${process.pid}`;
process.env.COMMAND_TIMEOUT_MS = '8000';

import { AppProcess, freePort, startApp, startSimGateway, waitFor } from './support/processes';
import { simControl } from './support/sim-control';
import { bearer, closeTestDataSource, SeededOrg, seedOrganization, testDataSource } from './support/seed';
import { sessionProbes, storedEvents } from './support/session-probes';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's and the simulator's JSON, asserted field by field
type Json = any;

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const b64 = (data: Buffer) => data.toString('base64');

/** A mono 16-bit WAV of a tone, loud then quiet (what a voice note's bars should show). */
function voiceWav(seconds: number, rate = 8000): Buffer {
  const frames = seconds * rate;
  const pcm = Buffer.alloc(frames * 2);
  for (let i = 0; i < frames; i++) pcm.writeInt16LE(Math.round((i < frames / 2 ? 30000 : 3000) * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + pcm.length, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([h, pcm]);
}

/**
 * Media and history on the real engine (Baileys 7.0.0-rc14) against the simulator's WhatsApp Web front door (issue
 * 18): Baileys asks `media_conn`, uploads encrypted media to the door's HTTPS media host (its CA handed to the gateway
 * with the test trust), and the contact downloads and decrypts it; a contact's media is uploaded encrypted for the
 * device and downloaded over the API byte for byte; the history the phone sends on pairing is stored.
 *
 * The API runs as its own process here (Baileys, which downloads inbound media, is ESM: jest cannot load it), under the
 * test seam (WHATSAPP_EMULATOR_URL): media is downloaded only from WhatsApp's CDN, or under the seam from the emulator's
 * one media host, trusting its CA (issue 37).
 */
describe('Media and history on the Baileys engine against the WhatsApp Web front door', () => {
  jest.setTimeout(60_000);
  let sim: AppProcess;
  let gateway: AppProcess;
  let apiProcess: AppProcess;
  let apiUrl: string;
  let simUrl: string;
  let org: SeededOrg;
  let sessionId: string;
  const gatewayId = `gw-waweb-media-${process.pid}`;
  const debugLogs: Record<string, string> = process.env.WHATSAPP_WEB_E2E_LOG ? { LOG_LEVEL: 'debug' } : {};
  const gatewayTuning = { RECONNECT_BASE_DELAY_MS: '100', GATEWAY_HEARTBEAT_MS: '1000', GATEWAY_TTL_MS: '10000', ...debugLogs };
  const ACCOUNT = '15557772000';
  const CONTACT = '15557772001@s.whatsapp.net';
  const OLD_FRIEND = '15557772002@s.whatsapp.net';

  const api = () => request(apiUrl);
  const { get: simGet, post: simFetch } = simControl(() => simUrl);
  const simPost = async (path: string, body: object = {}): Promise<{ status: number; body: Json }> => {
    const res = await simFetch(path, body);
    return { status: res.status, body: await res.json() };
  };
  const { waitStatus } = sessionProbes(api, () => org.adminKey);
  const sendOverApi = async (body: object) => {
    const res = await api().post(`/api/v1/sessions/${sessionId}/messages`).set(bearer(org.adminKey)).send(body);
    expect(res.status).toBe(202);
    return waitFor(async () => {
      const m = (await api().get(`/api/v1/sessions/${sessionId}/messages/${res.body.id}`).set(bearer(org.adminKey))).body;
      if (m.status === 'failed') throw new Error(`message ${res.body.id} failed: ${JSON.stringify(m.error ?? m)}`);
      return m.status === 'sent' ? (m as { id: string; waMessageId: string }) : null;
    }, 30000, `message ${res.body.id} to be sent`);
  };
  const onNetwork = async (waMessageId: string): Promise<Json> => (await simGet(`/sim/messages?sessionId=${sessionId}`)).data.find((m: Json) => m.id === waMessageId);

  beforeAll(async () => {
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, { engine: 'baileys', sim: { SIM_QR_INTERVAL_MS: '60000', LOG_LEVEL: 'info', ...debugLogs }, gateway: gatewayTuning }));
    const trust = (await (await fetch(`${simUrl}/sim/whatsapp-web/trust`)).json()) as { mediaCa?: string; mediaHost?: string };
    expect(trust.mediaCa).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(trust.mediaHost).toMatch(/^127\.0\.0\.1:\d+$/);
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    // the emulator's media host is on loopback: the API downloads from it only under the test seam (issue 37)
    apiProcess = await startApp('api', { PORT: String(port), NETWORK_SIM_URL: simUrl, WHATSAPP_EMULATOR_URL: simUrl }, `${apiUrl}/healthz`);
    org = await seedOrganization('WhatsApp Web Media Inc');
    const s = await api().post('/api/v1/sessions').set(bearer(org.adminKey)).send({ label: 'Media', syncHistory: 'recent' });
    expect(s.status).toBe(201);
    sessionId = s.body.id;
    await waitStatus(sessionId, 'scan_qr_code', 20000);
    const qr = (await api().get(`/api/v1/sessions/${sessionId}/qr`).set(bearer(org.adminKey))).body.qr;
    const history = {
      chats: [{ jid: OLD_FRIEND, name: 'Old Friend', unreadCount: 2, archived: true }],
      messages: [
        { chatJid: OLD_FRIEND, text: 'from the archive 1' },
        { chatJid: OLD_FRIEND, text: 'my old answer', fromMe: true },
        { chatJid: OLD_FRIEND, text: 'from the archive 2' },
      ],
    };
    expect((await simPost(`/sim/sessions/${sessionId}/scan`, { phoneNumber: ACCOUNT, qr, history })).status).toBe(200);
    await waitStatus(sessionId, 'working', 60000);
  }, 150_000);

  afterAll(async () => {
    if (process.env.WHATSAPP_WEB_E2E_LOG) writeFileSync(process.env.WHATSAPP_WEB_E2E_LOG, `${gateway?.output()}\n---- simulator ----\n${sim?.output()}\n---- api ----\n${apiProcess?.output()}`);
    await apiProcess?.stop();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('stores the history the phone sends on pairing (history.synced), its messages marked fromHistory', async () => {
    const synced = await waitFor(async () => {
      const events = await storedEvents(sessionId, 'history.synced');
      return events.length ? events : null;
    }, 30000, 'history.synced');
    expect(synced.map((e) => e.payload)).toEqual([expect.objectContaining({ chats: 1, messages: 3 })]);
    const db = await testDataSource();
    const rows: Array<{ text: string; direction: string }> = await db.query(
      'SELECT text, direction FROM messages WHERE session_id = $1 AND from_history ORDER BY text',
      [sessionId],
    );
    expect(rows).toEqual([
      { text: 'from the archive 1', direction: 'in' },
      { text: 'from the archive 2', direction: 'in' },
      { text: 'my old answer', direction: 'out' },
    ]);
    const chats = (await api().get(`/api/v1/sessions/${sessionId}/chats`).set(bearer(org.adminKey))).body.data as Json[];
    const chat = chats.find((c) => c.jid === OLD_FRIEND);
    expect(chat).toMatchObject({ name: 'Old Friend', archived: true });
    // history is no live traffic
    expect(await storedEvents(sessionId, 'message.received')).toEqual([]);
  });

  it('sends an image, a document, a voice note and a sticker: the contact downloads and decrypts each, bytes equal', async () => {
    const image = await sharp({ create: { width: 48, height: 32, channels: 3, background: { r: 200, g: 30, b: 90 } } }).png().toBuffer();
    const pdf = Buffer.from('%PDF-1.4\n% a small invoice for the media host\n');
    const voice = voiceWav(2);
    const sticker = await sharp({ create: { width: 64, height: 64, channels: 4, background: { r: 0, g: 120, b: 255, alpha: 1 } } }).webp().toBuffer();

    const sentImage = await sendOverApi({ to: CONTACT, type: 'image', text: 'a red picture', media: { base64: b64(image), mimetype: 'image/png', filename: 'red.png' } });
    expect(await onNetwork(sentImage.waMessageId)).toMatchObject({
      type: 'image',
      text: 'a red picture',
      media: { mimetype: 'image/png', size: image.length, caption: 'a red picture', sha256: sha256(image) },
    });
    const sentPdf = await sendOverApi({ to: CONTACT, type: 'document', media: { base64: b64(pdf), mimetype: 'application/pdf', filename: 'invoice.pdf' } });
    expect(await onNetwork(sentPdf.waMessageId)).toMatchObject({ type: 'document', media: { mimetype: 'application/pdf', filename: 'invoice.pdf', size: pdf.length, sha256: sha256(pdf) } });
    const sentVoice = await sendOverApi({ to: CONTACT, type: 'voice', media: { base64: b64(voice), mimetype: 'audio/wav' } });
    expect(await onNetwork(sentVoice.waMessageId)).toMatchObject({ type: 'voice', ptt: true, media: { mimetype: 'audio/ogg; codecs=opus', size: voice.length, sha256: sha256(voice) } });
    const sentSticker = await sendOverApi({ to: CONTACT, type: 'sticker', media: { base64: b64(sticker), mimetype: 'image/webp' } });
    expect(await onNetwork(sentSticker.waMessageId)).toMatchObject({ type: 'sticker', media: { mimetype: 'image/webp', size: sticker.length, sha256: sha256(sticker) } });
  });

  it('receives a contact\'s image uploaded encrypted to the media host; GET …/media returns the exact bytes', async () => {
    const image = await sharp({ create: { width: 40, height: 40, channels: 3, background: { r: 10, g: 200, b: 40 } } }).jpeg().toBuffer();
    const res = await simPost(`/sim/sessions/${sessionId}/inbound`, { from: CONTACT, type: 'image', text: 'look at this', media: { base64: b64(image), mimetype: 'image/jpeg', filename: 'green.jpg' } });
    expect(res.status).toBe(200);
    const received = await waitFor(async () => {
      const events = await storedEvents(sessionId, 'message.received');
      return events.map((e) => e.payload.message as Json).find((m) => m.waMessageId === res.body.id);
    }, 20000, 'the contact\'s image');
    expect(received).toMatchObject({ type: 'image', from: CONTACT, media: { mimetype: 'image/jpeg', size: image.length, caption: 'look at this' } });
    const download = await api()
      .get(`/api/v1/sessions/${sessionId}/messages/${received.id}/media`)
      .set(bearer(org.adminKey))
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(download.status).toBe(200);
    expect(sha256(download.body as Buffer)).toBe(sha256(image));
    expect((download.body as Buffer).equals(image)).toBe(true);
  });
});
