import { DomainError, OutboundContent, OutboundMessage, SimSentMessage } from '@app/contracts';
import { MediaUnavailableError, SimMediaSource } from '@app/media';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import pino from 'pino';
import { WebSocket } from 'ws';
import { CredentialsUnusableError } from '../apps/gateway/src/engine/credentials-unusable';
import { closeReasonFor, deviceSocketUrl } from '../apps/gateway/src/engine/sim/sim-connection';
import { SimEngine } from '../apps/gateway/src/engine/sim/sim.engine';
import type { EngineConnection, EngineEvent } from '../apps/gateway/src/engine/engine.interface';
import { RunningNetworkSim, startNetworkSim } from '../apps/network-sim/src/network-sim';
import { MemoryAuthStateStore } from './fakes/memory-auth-state';
import { freePort, startApp, waitFor } from './support/processes';

/**
 * The network simulator driven by the `sim` engine, both in this process: what a gateway sees
 * (engine events) and what the network shows (control API) for each step of a device's life.
 */

const logger = pino({ level: 'silent' });
let sim: RunningNetworkSim;
let engine: SimEngine;
let seq = 0;

type EventOf<T extends EngineEvent['type']> = Extract<EngineEvent, { type: T }>;

/** One linked device as a gateway holds it: its auth store, the engine events it saw, its current connection. */
class Device {
  readonly sessionId = `sess_sim_${process.pid}_${++seq}`;
  readonly auth = new MemoryAuthStateStore(this.sessionId);
  readonly events: EngineEvent[] = [];
  conn!: EngineConnection;

  constructor(private readonly simEngine: SimEngine = engine) {}

  async connect(): Promise<number> {
    const from = this.events.length;
    this.conn = await this.simEngine.connect({ sessionId: this.sessionId, auth: this.auth, onEvent: async (e) => void this.events.push(e), logger });
    return from;
  }

  /** The next event of `type` at or after index `from`. */
  next<T extends EngineEvent['type']>(type: T, from = 0, timeoutMs = 5000): Promise<EventOf<T>> {
    return waitFor(() => this.events.slice(from).find((e) => e.type === type) as EventOf<T> | undefined, timeoutMs, `${type} event`);
  }

  since(from: number): EngineEvent['type'][] {
    return this.events.slice(from).map((e) => e.type);
  }

  /** QR flow + scan: a paired, open device. */
  async pair(phoneNumber: string): Promise<EventOf<'open'>> {
    const from = await this.connect();
    const qr = await this.next('qr', from);
    await control('POST', `/sim/sessions/${this.sessionId}/scan`, { phoneNumber, qr: qr.qr }, 200);
    return this.next('open', from);
  }
}

/** A message as the gateway hands it to the engine, with a fresh waMessageId. */
function outbound(to: string, content: OutboundContent, extra: Partial<OutboundMessage> = {}): OutboundMessage {
  return { waMessageId: `3EB0${randomBytes(8).toString('hex').toUpperCase()}`, to, content, quoted: null, mentions: [], ...extra };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's control API is untyped JSON
async function control(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, expectStatus?: number, base = sim.url): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = await res.json();
  if (expectStatus !== undefined && res.status !== expectStatus) {
    throw new Error(`${method} ${path}: expected ${expectStatus}, got ${res.status} ${JSON.stringify(json)}`);
  }
  return json;
}

beforeAll(async () => {
  // rotation is tested on its own simulator; here a QR stays put so event sequences are exact
  sim = await startNetworkSim({ port: 0, host: '127.0.0.1', qrIntervalMs: 60000 });
  engine = new SimEngine({ simUrl: sim.url, requestTimeoutMs: 3000, connectTimeoutMs: 3000 });
});

afterAll(async () => {
  await sim?.close();
});

describe('pairing', () => {
  it('shows a QR, pairs on scan and opens with jid, lid and phone number; the credential is stored', async () => {
    const d = new Device();
    const from = await d.connect();
    const qr = await d.next('qr', from);
    const before = await control('GET', `/sim/sessions/${d.sessionId}`, undefined, 200);
    expect(before).toMatchObject({ state: 'unpaired', qr: qr.qr, jid: null, lid: null, connected: true });

    await control('POST', `/sim/sessions/${d.sessionId}/scan`, { phoneNumber: '+1 555 201 0001' }, 200);
    const open = await d.next('open', from);
    expect(open.account).toEqual({ jid: '15552010001@s.whatsapp.net', lid: expect.stringMatching(/^\d+@lid$/), phoneNumber: '15552010001' });
    expect(open.account.lid).not.toBe('15552010001@lid');
    expect(await d.auth.readCreds()).toMatchObject({ kind: 'sim-device', account: open.account });

    const after = await control('GET', `/sim/sessions/${d.sessionId}`, undefined, 200);
    expect(after).toMatchObject({ state: 'paired', qr: null, jid: open.account.jid, lid: open.account.lid, connected: true });
    await d.conn.close();
  });

  it('gives an unpaired device a new QR on every connection', async () => {
    const d = new Device();
    const first = await d.next('qr', await d.connect());
    await d.conn.close();
    const second = await d.next('qr', await d.connect());
    expect(second.qr).not.toBe(first.qr);
    await d.conn.close();
  });

  it('resumes a stored pairing without a QR after the device closed', async () => {
    const d = new Device();
    const open = await d.pair('15552010002');
    const closing = d.events.length;
    await d.conn.close();
    expect(d.events.slice(closing)).toEqual([{ type: 'close', reason: 'closed_by_us', statusCode: null, message: expect.any(String) }]);
    expect(await control('GET', `/sim/sessions/${d.sessionId}`)).toMatchObject({ state: 'paired', connected: false });

    const from = await d.connect();
    const reopened = await d.next('open', from);
    expect(reopened.account).toEqual(open.account);
    expect(d.since(from)).toEqual(['open']);
    await d.conn.close();
  });

  it('pairs with a pairing code entered on the phone, for the number the device asked for', async () => {
    const d = new Device();
    await d.next('qr', await d.connect());
    const code = await d.conn.requestPairingCode('+1 555-201-0003');
    expect(code).toMatch(/^[A-Z0-9]{8}$/);

    const wrong = await control('POST', `/sim/sessions/${d.sessionId}/pair-code`, { code: code === 'AAAAAAAA' ? 'BBBBBBBB' : 'AAAAAAAA' }, 422);
    expect(wrong.error.code).toBe('validation_error');
    await control('POST', `/sim/sessions/${d.sessionId}/pair-code`, { code }, 200);
    const open = await d.next('open');
    expect(open.account).toMatchObject({ jid: '15552010003@s.whatsapp.net', phoneNumber: '15552010003' });
    await expect(d.conn.requestPairingCode('15552010003')).rejects.toMatchObject({ code: 'conflict' });
    await d.conn.close();
  });

  it('rotates the QR every SIM_QR_INTERVAL_MS while nobody scans, each one a new qr event', async () => {
    const fast = await startNetworkSim({ port: 0, host: '127.0.0.1', qrIntervalMs: 60 });
    try {
      const d = new Device(new SimEngine({ simUrl: fast.url }));
      await d.connect();
      await waitFor(() => d.events.filter((e) => e.type === 'qr').length >= 3, 5000, 'three QR codes');
      const qrs = d.events.filter((e): e is EventOf<'qr'> => e.type === 'qr').map((e) => e.qr);
      expect(new Set(qrs).size).toBe(qrs.length);
      // the QR the network shows is one the device was told about (the latest, unless a rotation is in flight)
      const shown = await control('GET', `/sim/sessions/${d.sessionId}`, undefined, 200, fast.url);
      expect(shown.state).toBe('unpaired');
      await waitFor(() => d.events.some((e) => e.type === 'qr' && e.qr === shown.qr), 2000, 'the shown QR as an event');
      await d.conn.close();
      const closed = await control('GET', `/sim/sessions/${d.sessionId}`, undefined, 200, fast.url);
      expect(closed).toMatchObject({ connected: false, qr: null });
    } finally {
      await fast.close();
    }
  });
});

describe('connection loss', () => {
  it('a drop closes with transient and keeps the pairing', async () => {
    const d = new Device();
    const open = await d.pair('15552010011');
    const from = d.events.length;
    await control('POST', `/sim/sessions/${d.sessionId}/drop`, {}, 200);
    const closed = await d.next('close', from);
    expect(closed.reason).toBe('transient');

    const again = await d.connect();
    expect((await d.next('open', again)).account).toEqual(open.account);
    await d.conn.close();
  });

  it('an unlink by the phone closes with logged_out, and the old credential no longer opens', async () => {
    const d = new Device();
    await d.pair('15552010012');
    const from = d.events.length;
    const view = await control('POST', `/sim/sessions/${d.sessionId}/unlink`, {}, 200);
    expect(view).toMatchObject({ state: 'unlinked', jid: null, lid: null, connected: false });
    expect(await d.next('close', from)).toMatchObject({ reason: 'logged_out', statusCode: 401 });

    const again = await d.connect();
    expect(await d.next('close', again)).toMatchObject({ reason: 'logged_out' });
    expect(d.since(again)).toEqual(['close']);
  });

  it('logout() unlinks on the network and ends with a logged_out close', async () => {
    const d = new Device();
    await d.pair('15552010013');
    const from = d.events.length;
    await d.conn.logout();
    expect(d.since(from)).toEqual(['close']);
    expect(d.events[d.events.length - 1]).toMatchObject({ reason: 'logged_out' });
    expect(await control('GET', `/sim/sessions/${d.sessionId}`)).toMatchObject({ state: 'unlinked', connected: false });
    await d.conn.close(); // idempotent
    expect(d.since(from)).toEqual(['close']);
  });

  it('a second connection for the device replaces the first, which closes with replaced', async () => {
    const d = new Device();
    await d.pair('15552010014');
    const first = d.conn;
    const from = await d.connect();
    expect(await d.next('close', from)).toMatchObject({ reason: 'replaced', statusCode: 440 });
    await d.next('open', from);
    expect(await control('GET', `/sim/sessions/${d.sessionId}`)).toMatchObject({ state: 'paired', connected: true });
    await first.close(); // already closed: no second close event
    expect(d.since(from).filter((t) => t === 'close')).toHaveLength(1);
    await d.conn.close();
  });

  it('a simulator that is down gives a transient close, and calls reject instead of hanging', async () => {
    const port = await freePort();
    const d = new Device(new SimEngine({ simUrl: `http://127.0.0.1:${port}`, requestTimeoutMs: 1000 }));
    const from = await d.connect();
    expect(await d.next('close', from)).toMatchObject({ reason: 'transient' });
    await expect(d.conn.send(outbound('15550000000@s.whatsapp.net', { type: 'text', text: 'hi' }))).rejects.toBeInstanceOf(DomainError);
    await d.conn.close();
    expect(d.since(from)).toEqual(['close']);
  });

  it('a credential that is not the simulator’s: the engine refuses it before connecting, the network closes 4501 on it', async () => {
    const d = new Device();
    await d.auth.writeCreds({ noiseKey: 'something from another engine' });
    await expect(d.connect()).rejects.toBeInstanceOf(CredentialsUnusableError);
    // a device that presents it anyway (an older gateway): the network refuses it as `bad_session`
    const ws = new WebSocket(deviceSocketUrl(sim.url, 'ses_foreign_credential'));
    ws.once('open', () => ws.send(JSON.stringify({ type: 'hello', credential: { noiseKey: 'something from another engine' } })));
    const code = await new Promise<number>((resolve) => ws.once('close', resolve));
    expect(closeReasonFor(code)).toEqual({ reason: 'bad_session', statusCode: null });
  });
});

describe('groups and messages', () => {
  it('creates a group owned by the device, listed by GET /sim/groups', async () => {
    const d = new Device();
    const { account } = await d.pair('15552010021');
    const group = await d.conn.createGroup('Team', ['15559990001@s.whatsapp.net', '15559990002@s.whatsapp.net']);
    expect(group).toEqual({
      groupJid: expect.stringMatching(/^\d+-\d+@g\.us$/),
      subject: 'Team',
      description: '',
      ownerJid: account.jid,
      participants: [account.jid, '15559990001@s.whatsapp.net', '15559990002@s.whatsapp.net'],
      isAnnounce: false,
      isLocked: false,
      // the creator is the group's super admin (docs/groups.md)
      admins: [account.jid],
      superAdmins: [account.jid],
    });
    const listed = await control('GET', `/sim/groups?sessionId=${d.sessionId}`, undefined, 200);
    expect(listed.data).toEqual([expect.objectContaining({ groupJid: group.groupJid, subject: 'Team', sessionId: d.sessionId })]);
    const all = await control('GET', '/sim/groups', undefined, 200);
    expect(all.data.map((g: { groupJid: string }) => g.groupJid)).toContain(group.groupJid);
    await d.conn.close();
  });

  it('refuses a group whose participants are not <digits>@s.whatsapp.net jids, naming them', async () => {
    const d = new Device();
    await d.pair('15552010022');
    const err = await d.conn.createGroup('Bad', ['15559990001@s.whatsapp.net', 'alice', '123@g.us']).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'validation_error', details: { participants: ['alice', '123@g.us'] } });
    expect((await control('GET', `/sim/groups?sessionId=${d.sessionId}`)).data).toEqual([]);
    await d.conn.close();
  });

  it('records sent texts for GET /sim/messages under the waMessageId the device chose', async () => {
    const d = new Device();
    const { account } = await d.pair('15552010023');
    const message = outbound('15559990003@s.whatsapp.net', { type: 'text', text: 'hello there' });
    const sent = await d.conn.send(message);
    expect(sent).toEqual({ waMessageId: message.waMessageId, timestamp: expect.any(Number), raw: expect.any(Uint8Array) });
    const listed = await control('GET', `/sim/messages?sessionId=${d.sessionId}`, undefined, 200);
    expect(listed.data).toEqual([
      {
        id: message.waMessageId,
        sessionId: d.sessionId,
        from: account.jid,
        to: '15559990003@s.whatsapp.net',
        type: 'text',
        text: 'hello there',
        media: null,
        location: null,
        contact: null,
        poll: null,
        reaction: null,
        quotedWaMessageId: null,
        mentions: [],
        timestamp: sent.timestamp,
        sends: 1,
        edits: [],
        revoked: null,
        forwarded: false,
        ptt: false,
        pollVote: null,
        linkPreview: null,
      },
    ]);
    await expect(d.conn.send(outbound('not-a-jid', { type: 'text', text: 'x' }))).rejects.toMatchObject({
      code: 'validation_error',
      details: { to: expect.any(String) },
    });
    await d.conn.close();
  });

  it('pushes inbound messages to the device, and holds those sent while it is offline until it reconnects', async () => {
    const d = new Device();
    await d.pair('15552010024');
    const from = d.events.length;
    const live = await control('POST', `/sim/sessions/${d.sessionId}/inbound`, { from: '15559990004@s.whatsapp.net', text: 'ping' }, 200);
    expect(live.queued).toBe(false);
    const msg = await d.next('message', from);
    expect(msg.message).toEqual({
      id: live.id,
      from: '15559990004@s.whatsapp.net',
      chatJid: '15559990004@s.whatsapp.net',
      text: 'ping',
      timestamp: expect.any(Number),
      fromMe: false,
      type: 'text',
      media: null,
      location: null,
      contact: null,
      poll: null,
      quotedWaMessageId: null,
      mentions: [],
      raw: expect.any(Uint8Array),
    });

    await d.conn.close();
    const offline = await control('POST', `/sim/sessions/${d.sessionId}/inbound`, { from: '15559990005', text: 'while you were away' }, 200);
    expect(offline.queued).toBe(true);
    expect(await control('GET', `/sim/sessions/${d.sessionId}`)).toMatchObject({ pendingInbound: 1 });

    const again = await d.connect();
    const late = await d.next('message', again);
    expect(late.message).toMatchObject({ id: offline.id, from: '15559990005@s.whatsapp.net', text: 'while you were away' });
    expect(d.since(again)).toEqual(['open', 'message']);
    // taken by the device: not delivered a second time
    await waitFor(async () => (await control('GET', `/sim/sessions/${d.sessionId}`)).pendingInbound === 0, 3000, 'ack');
    await d.conn.close();
  });
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

describe('inbound messages of every kind', () => {
  const contact = '15559991001@s.whatsapp.net';

  it('each kind reaches the engine with its documented fields, media as a sim MediaRef', async () => {
    const d = new Device();
    await d.pair('15552010041');
    const pdf = randomBytes(3000);
    const cases: { body: Record<string, unknown>; expected: Record<string, unknown> }[] = [
      {
        body: { from: contact, text: 'see @1555', quotedWaMessageId: '3EB0QUOTED', mentions: ['15550001234@s.whatsapp.net'] },
        expected: { type: 'text', text: 'see @1555', media: null, quotedWaMessageId: '3EB0QUOTED', mentions: ['15550001234@s.whatsapp.net'] },
      },
      {
        body: { from: contact, type: 'image', text: 'a photo', media: { mimetype: 'image/png', size: 2048 } },
        expected: { type: 'image', text: 'a photo', media: { mimetype: 'image/png', size: 2048, filename: null, caption: 'a photo', ref: { engine: 'sim', mediaId: expect.any(String) } } },
      },
      {
        body: { from: contact, type: 'video' },
        expected: { type: 'video', text: null, media: { mimetype: 'video/mp4', size: 1024, filename: null, caption: null, ref: { engine: 'sim', mediaId: expect.any(String) } } },
      },
      {
        body: { from: contact, type: 'audio', media: { mimetype: 'audio/mpeg' } },
        expected: { type: 'audio', text: null, media: expect.objectContaining({ mimetype: 'audio/mpeg', caption: null }) },
      },
      {
        body: { from: contact, type: 'document', text: 'the report', media: { base64: pdf.toString('base64'), mimetype: 'application/pdf', filename: 'report.pdf' } },
        expected: { type: 'document', text: 'the report', media: { mimetype: 'application/pdf', size: 3000, filename: 'report.pdf', caption: 'the report', ref: { engine: 'sim', mediaId: expect.any(String) } } },
      },
      {
        body: { from: contact, type: 'sticker' },
        expected: { type: 'sticker', media: expect.objectContaining({ mimetype: 'image/webp' }) },
      },
      {
        body: { from: contact, type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Berlin' } },
        expected: { type: 'location', text: null, media: null, location: { latitude: 52.52, longitude: 13.405, name: 'Berlin', address: null } },
      },
      {
        body: { from: contact, type: 'contact', contact: { fullName: 'Ada Lovelace', phoneNumber: '+44 20 7946 0000' } },
        expected: { type: 'contact', contact: { fullName: 'Ada Lovelace', phoneNumber: '442079460000' } },
      },
      {
        body: { from: contact, chatJid: '120363000000000001@g.us', text: 'hello group' },
        expected: { type: 'text', chatJid: '120363000000000001@g.us', from: contact, text: 'hello group' },
      },
    ];
    for (const { body, expected } of cases) {
      const from = d.events.length;
      const sent = await control('POST', `/sim/sessions/${d.sessionId}/inbound`, body, 200);
      expect(sent).toEqual({ id: expect.any(String), queued: false });
      const { message } = await d.next('message', from);
      expect(message).toMatchObject({ id: sent.id, from: contact, chatJid: body.chatJid ?? contact, fromMe: false, ...expected });
    }
    await d.conn.close();
  });

  it('media bytes round-trip through SimMediaSource; an unknown media id is MediaUnavailableError', async () => {
    const d = new Device();
    await d.pair('15552010042');
    const bytes = randomBytes(300 * 1024);
    const from = d.events.length;
    await control('POST', `/sim/sessions/${d.sessionId}/inbound`, { from: contact, type: 'image', media: { base64: bytes.toString('base64'), mimetype: 'image/jpeg' } }, 200);
    const { message } = await d.next('message', from);
    expect(message.media).toMatchObject({ size: bytes.length, ref: { engine: 'sim' } });

    const source = new SimMediaSource(sim.url);
    const stream = await source.open(message.media!.ref);
    expect(stream).toBeInstanceOf(Readable);
    expect(sha256(await readAll(stream))).toBe(sha256(bytes));
    await expect(source.open({ engine: 'sim', mediaId: 'no-such-media' })).rejects.toBeInstanceOf(MediaUnavailableError);
    await d.conn.close();
  });

  it('refuses bad inbound input with 422 naming the field', async () => {
    const d = new Device();
    await d.pair('15552010043');
    const cases: [Record<string, unknown>, string][] = [
      [{ from: contact, type: 'gif' }, 'type'],
      [{ from: contact, type: 'text' }, 'text'],
      [{ from: contact, type: 'image', media: { base64: '***', mimetype: 'image/png' } }, 'media.base64'],
      [{ from: contact, type: 'image', media: { mimetype: 'png' } }, 'media.mimetype'],
      [{ from: contact, type: 'audio', text: 'no captions on voice notes' }, 'text'],
      [{ from: contact, type: 'location', location: { latitude: 91, longitude: 0 } }, 'location.latitude'],
      [{ from: contact, type: 'contact', contact: { fullName: 'X' } }, 'contact.phoneNumber'],
      [{ from: contact, text: 'hi', chatJid: '15550000000@s.whatsapp.net' }, 'chatJid'],
    ];
    for (const [body, field] of cases) {
      const res = await control('POST', `/sim/sessions/${d.sessionId}/inbound`, body, 422);
      expect(res.error).toMatchObject({ code: 'validation_error', details: { [field]: expect.anything() } });
    }
    await d.conn.close();
  });
});

describe('what a device sends', () => {
  it('lists a send of each type once in GET /sim/messages, media bytes kept and served', async () => {
    const d = new Device();
    const { account } = await d.pair('15552010051');
    const to = '15559992001@s.whatsapp.net';
    const photo = randomBytes(5000);
    const media = (data: Buffer, mimetype: string, filename: string | null = null) => ({ data, mimetype, filename });
    const first = outbound(to, { type: 'text', text: 'first' });
    const messages = [
      first,
      outbound(to, { type: 'image', media: media(photo, 'image/jpeg'), caption: 'look' }),
      outbound(to, { type: 'video', media: media(randomBytes(100), 'video/mp4'), caption: null }),
      outbound(to, { type: 'audio', media: media(randomBytes(100), 'audio/ogg; codecs=opus') }),
      outbound(to, { type: 'document', media: media(randomBytes(100), 'application/pdf', 'a.pdf'), caption: 'doc' }),
      outbound(to, { type: 'location', location: { latitude: 1.5, longitude: -2.5, name: null, address: 'Main St' } }),
      outbound(to, { type: 'contact', contact: { fullName: 'Grace Hopper', phoneNumber: '15551230000' } }),
      outbound(to, { type: 'reaction', target: { waMessageId: first.waMessageId, chatJid: to, fromMe: true, participant: null }, emoji: '👍' }),
      outbound('120363000000000002@g.us', { type: 'poll', poll: { name: 'Lunch?', options: ['pizza', 'sushi'], selectableCount: 1 } }),
      outbound(to, { type: 'text', text: 'replying @15550001234' }, {
        quoted: { waMessageId: first.waMessageId, chatJid: to, fromMe: true, participant: null, raw: null },
        mentions: ['15550001234@s.whatsapp.net'],
      }),
    ];
    for (const m of messages) expect((await d.conn.send(m)).waMessageId).toBe(m.waMessageId);

    const listed: SimSentMessage[] = (await control('GET', `/sim/messages?sessionId=${d.sessionId}`, undefined, 200)).data;
    expect(listed.map((m) => m.id)).toEqual(messages.map((m) => m.waMessageId));
    expect(listed.every((m) => m.from === account.jid && m.sends === 1)).toBe(true);
    expect(listed.map((m) => m.type)).toEqual(['text', 'image', 'video', 'audio', 'document', 'location', 'contact', 'reaction', 'poll', 'text']);
    expect(listed[1]).toMatchObject({ text: 'look', media: { mimetype: 'image/jpeg', size: 5000, caption: 'look', sha256: sha256(photo) } });
    expect(listed[3].media).toMatchObject({ mimetype: 'audio/ogg; codecs=opus', caption: null });
    expect(listed[4].media).toMatchObject({ filename: 'a.pdf', caption: 'doc' });
    expect(listed[5].location).toEqual({ latitude: 1.5, longitude: -2.5, name: null, address: 'Main St' });
    expect(listed[6].contact).toEqual({ fullName: 'Grace Hopper', phoneNumber: '15551230000' });
    expect(listed[7].reaction).toEqual({ waMessageId: first.waMessageId, emoji: '👍' });
    expect(listed[8]).toMatchObject({ to: '120363000000000002@g.us', poll: { name: 'Lunch?', options: ['pizza', 'sushi'], selectableCount: 1 } });
    expect(listed[9]).toMatchObject({ quotedWaMessageId: first.waMessageId, mentions: ['15550001234@s.whatsapp.net'] });

    const served = await readAll(await new SimMediaSource(sim.url).open({ engine: 'sim', mediaId: listed[1].media!.mediaId }));
    expect(sha256(served)).toBe(sha256(photo));
    await d.conn.close();
  });

  it('stores a re-sent waMessageId once, also across reconnects, and counts the re-send', async () => {
    const d = new Device();
    await d.pair('15552010052');
    const message = outbound('15559992002@s.whatsapp.net', { type: 'text', text: 'exactly once' });
    const first = await d.conn.send(message);
    await d.conn.close();
    await d.next('open', await d.connect());
    const again = await d.conn.send(message);
    expect(again).toMatchObject({ waMessageId: message.waMessageId, timestamp: first.timestamp });

    const listed = (await control('GET', `/sim/messages?sessionId=${d.sessionId}`, undefined, 200)).data;
    expect(listed).toEqual([expect.objectContaining({ id: message.waMessageId, text: 'exactly once', sends: 2 })]);
    // the same id from another device is that device's own message
    const other = new Device();
    await other.pair('15552010053');
    await other.conn.send(message);
    expect((await control('GET', `/sim/messages?sessionId=${other.sessionId}`)).data).toHaveLength(1);
    await d.conn.close();
    await other.conn.close();
  });

  it('records composing, paused and read receipts in the presence log, in order', async () => {
    const d = new Device();
    await d.pair('15552010054');
    const chat = '15559992003@s.whatsapp.net';
    await d.conn.sendPresence(chat, 'composing');
    await d.conn.sendPresence(chat, 'paused');
    await d.conn.markRead([
      { waMessageId: 'IN1', chatJid: chat, fromMe: false, participant: null },
      { waMessageId: 'IN2', chatJid: '120363000000000003@g.us', fromMe: false, participant: '15559992004@s.whatsapp.net' },
    ]);
    const log = (await control('GET', `/sim/sessions/${d.sessionId}/presence-log`, undefined, 200)).data;
    expect(log).toEqual([
      { type: 'presence', chatJid: chat, presence: 'composing', at: expect.any(Number) },
      { type: 'presence', chatJid: chat, presence: 'paused', at: expect.any(Number) },
      { type: 'read', chatJid: chat, waMessageId: 'IN1', participant: null, at: expect.any(Number) },
      { type: 'read', chatJid: '120363000000000003@g.us', waMessageId: 'IN2', participant: '15559992004@s.whatsapp.net', at: expect.any(Number) },
    ]);
    expect(log[0].at).toBeLessThanOrEqual(log[1].at);
    await expect(d.conn.sendPresence('nobody', 'composing')).rejects.toMatchObject({ code: 'validation_error', details: { chatJid: expect.any(String) } });
    await d.conn.close();
  });
});

describe('network events for a device', () => {
  it('receipts, reactions, poll votes, presence, calls and group changes sent while offline arrive after reconnecting', async () => {
    const d = new Device();
    const { account } = await d.pair('15552010061');
    const contact = '15559993001@s.whatsapp.net';
    const text = outbound(contact, { type: 'text', text: 'hi' });
    const poll = outbound(contact, { type: 'poll', poll: { name: 'When?', options: ['mon', 'tue', 'wed'], selectableCount: 2 } });
    await d.conn.send(text);
    await d.conn.send(poll);
    const group = await d.conn.createGroup('Crew', [contact]);
    await d.conn.close();

    const s = `/sim/sessions/${d.sessionId}`;
    expect(await control('POST', `${s}/receipt`, { waMessageId: text.waMessageId, status: 'read' }, 200)).toEqual({ queued: true });
    await control('POST', `${s}/reaction`, { from: contact, waMessageId: text.waMessageId, emoji: '❤️' }, 200);
    await control('POST', `${s}/poll-vote`, { from: contact, pollWaMessageId: poll.waMessageId, options: ['tue', 'wed'] }, 200);
    await control('POST', `${s}/presence`, { jid: contact, presence: 'composing' }, 200);
    const call = await control('POST', `${s}/call`, { from: contact, isVideo: true }, 200);
    expect(call).toEqual({ callId: expect.any(String), queued: true });
    const added = await control('POST', `/sim/groups/${group.groupJid}/participants`, { action: 'add', participants: ['15559993002@s.whatsapp.net'] }, 200);
    expect(added).toMatchObject({ participants: [account.jid, contact, '15559993002@s.whatsapp.net'], delivered: [d.sessionId] });
    const patched = await control('PATCH', `/sim/groups/${group.groupJid}`, { subject: 'Crew 2', isAnnounce: true }, 200);
    expect(patched).toMatchObject({ subject: 'Crew 2', isAnnounce: true });
    expect(await control('GET', s)).toMatchObject({ pendingInbound: 7 });

    const from = await d.connect();
    await waitFor(() => d.events.length - from >= 8, 5000, 'the offline events');
    expect(d.events.slice(from)).toEqual([
      { type: 'open', account },
      { type: 'receipt', waMessageId: text.waMessageId, chatJid: contact, status: 'read' },
      { type: 'reaction', waMessageId: text.waMessageId, chatJid: contact, from: contact, emoji: '❤️', fromMe: false },
      { type: 'poll-vote', pollWaMessageId: poll.waMessageId, chatJid: contact, voter: contact, selectedOptions: ['tue', 'wed'] },
      { type: 'presence', chatJid: contact, jid: contact, presence: 'composing' },
      { type: 'call', callId: call.callId, from: contact, isVideo: true, isGroup: false },
      { type: 'group-participants', groupJid: group.groupJid, action: 'add', participants: ['15559993002@s.whatsapp.net'] },
      { type: 'group-update', groupJid: group.groupJid, changes: { subject: 'Crew 2', isAnnounce: true } },
    ]);
    await waitFor(async () => (await control('GET', s)).pendingInbound === 0, 3000, 'acks');
    await d.conn.close();
  });

  it('group changes reach every member that is a session, including one that is removed', async () => {
    const owner = new Device();
    const member = new Device();
    await owner.pair('15552010062');
    const { account } = await member.pair('15552010063');
    const group = await owner.conn.createGroup('Both', [account.jid]);
    const [o, m] = [owner.events.length, member.events.length];
    await control('PATCH', `/sim/groups/${group.groupJid}`, { description: 'we two' }, 200);
    expect((await owner.next('group-update', o)).changes).toEqual({ description: 'we two' });
    expect((await member.next('group-update', m)).changes).toEqual({ description: 'we two' });

    const removed = await control('POST', `/sim/groups/${group.groupJid}/participants`, { action: 'remove', participants: [account.jid] }, 200);
    expect(removed.participants).not.toContain(account.jid);
    expect(await member.next('group-participants', m)).toMatchObject({ action: 'remove', participants: [account.jid] });
    expect((await control('GET', `/sim/groups?sessionId=${owner.sessionId}`)).data[0].description).toBe('we two');
    await owner.conn.close();
    await member.conn.close();
  });

  it('validates control input: unknown messages 404, poll options checked against the poll, 422 naming the field', async () => {
    const d = new Device();
    await d.pair('15552010064');
    const contact = '15559993003@s.whatsapp.net';
    const poll = outbound(contact, { type: 'poll', poll: { name: 'One?', options: ['a', 'b'], selectableCount: 1 } });
    await d.conn.send(poll);
    const s = `/sim/sessions/${d.sessionId}`;

    expect((await control('POST', `${s}/receipt`, { waMessageId: 'NEVERSENT', status: 'read' }, 404)).error.details).toEqual({ waMessageId: 'NEVERSENT' });
    expect((await control('POST', `${s}/receipt`, { waMessageId: poll.waMessageId, status: 'seen' }, 422)).error.details).toHaveProperty('status');
    expect((await control('POST', `${s}/reaction`, { from: contact, waMessageId: 'NEVERSEEN', emoji: '👍' }, 404)).error.code).toBe('not_found');
    expect((await control('POST', `${s}/poll-vote`, { from: contact, pollWaMessageId: poll.waMessageId, options: ['a', 'z'] }, 422)).error.details).toEqual({ options: ['z'] });
    expect((await control('POST', `${s}/poll-vote`, { from: contact, pollWaMessageId: poll.waMessageId, options: ['a', 'b'] }, 422)).error.details).toHaveProperty('options');
    expect((await control('POST', `${s}/presence`, { jid: contact, presence: 'dancing' }, 422)).error.details).toHaveProperty('presence');
    expect((await control('POST', `${s}/call`, { from: 'someone' }, 422)).error.details).toHaveProperty('from');
    expect((await control('POST', '/sim/groups/1-1@g.us/participants', { action: 'add', participants: [contact] }, 404)).error.code).toBe('not_found');
    const group = await d.conn.createGroup('G', []);
    expect((await control('POST', `/sim/groups/${group.groupJid}/participants`, { action: 'kick', participants: [contact] }, 422)).error.details).toHaveProperty('action');
    expect((await control('PATCH', `/sim/groups/${group.groupJid}`, { isLocked: 'yes' }, 422)).error.details).toHaveProperty('isLocked');
    expect((await control('PATCH', `/sim/groups/${group.groupJid}`, {}, 422)).error.code).toBe('validation_error');
    await d.conn.close();
  });
});

describe('control API', () => {
  it('answers errors in the envelope: unknown device 404, unknown route 404, bad JSON 422, wrong state 409', async () => {
    const unknown = await control('GET', '/sim/sessions/never-seen', undefined, 404);
    expect(unknown).toEqual({ error: { code: 'not_found', message: expect.any(String), details: { sessionId: 'never-seen' } } });
    expect((await control('POST', '/sim/sessions/never-seen/scan', { phoneNumber: '15550000000' }, 404)).error.code).toBe('not_found');
    expect((await control('GET', '/sim/nothing', undefined, 404)).error.code).toBe('not_found');

    const d = new Device();
    await d.pair('15552010031');
    expect((await control('POST', `/sim/sessions/${d.sessionId}/scan`, '{not json', 422)).error.code).toBe('validation_error');
    expect((await control('POST', `/sim/sessions/${d.sessionId}/scan`, { phoneNumber: '15550000000' }, 409)).error.code).toBe('conflict');
    expect((await control('POST', `/sim/sessions/${d.sessionId}/inbound`, { from: 'x', text: 'hi' }, 422)).error.details).toHaveProperty('from');
    await d.conn.close();
    expect((await control('POST', `/sim/sessions/${d.sessionId}/drop`, {}, 409)).error.code).toBe('conflict');
  });

  it('refuses a scan of a QR that has already rotated away', async () => {
    const d = new Device();
    await d.next('qr', await d.connect());
    const res = await control('POST', `/sim/sessions/${d.sessionId}/scan`, { phoneNumber: '15552010032', qr: '2@stale' }, 409);
    expect(res.error.message).toMatch(/expired/);
    expect(await control('GET', `/sim/sessions/${d.sessionId}`)).toMatchObject({ state: 'unpaired' });
    await d.conn.close();
  });
});

describe('as a process (npm run sim)', () => {
  it('starts from the build output on the given port, logs where it listens and serves /healthz', async () => {
    const port = await freePort();
    const app = await startApp('sim', { SIM_PORT: String(port), SIM_HOST: '127.0.0.1', LOG_LEVEL: 'info' }, `http://127.0.0.1:${port}/healthz`);
    try {
      await waitFor(() => app.output().includes('"msg":"network simulator listening"'), 3000, 'listening log line');
      expect(app.output()).toContain(`"port":${port}`);
      const d = new Device(new SimEngine({ simUrl: `http://127.0.0.1:${port}` }));
      const base = `http://127.0.0.1:${port}`;
      const from = await d.connect();
      const qr = await d.next('qr', from);
      expect(await control('GET', `/sim/sessions/${d.sessionId}`, undefined, 200, base)).toMatchObject({ qr: qr.qr });
      // a whole messaging round over the real process: inbound media in, its bytes streamed back, a send stored once
      await control('POST', `/sim/sessions/${d.sessionId}/scan`, { phoneNumber: '15552010099' }, 200, base);
      await d.next('open', from);
      const bytes = randomBytes(150 * 1024);
      await control('POST', `/sim/sessions/${d.sessionId}/inbound`, { from: '15559994001', type: 'image', media: { base64: bytes.toString('base64'), mimetype: 'image/jpeg' } }, 200, base);
      const { message } = await d.next('message', from);
      expect(sha256(await readAll(await new SimMediaSource(base).open(message.media!.ref)))).toBe(sha256(bytes));
      const out = outbound('15559994001@s.whatsapp.net', { type: 'text', text: 'got it' });
      await d.conn.send(out);
      await d.conn.send(out);
      expect((await control('GET', `/sim/messages?sessionId=${d.sessionId}`, undefined, 200, base)).data).toEqual([expect.objectContaining({ id: out.waMessageId, sends: 2 })]);
      await d.conn.close();
    } finally {
      await app.stop();
    }
    expect(app.child.exitCode).toBe(0);
  });
});
