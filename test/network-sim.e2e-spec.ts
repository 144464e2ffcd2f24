import { DomainError, OutboundContent, OutboundMessage } from '@app/contracts';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
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
    this.conn = await this.simEngine.connect({ sessionId: this.sessionId, auth: this.auth, onEvent: (e) => this.events.push(e), logger });
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

  it('a credential that is not the simulator’s closes with bad_session', async () => {
    const d = new Device();
    await d.auth.writeCreds({ noiseKey: 'something from another engine' });
    const from = await d.connect();
    expect(await d.next('close', from)).toMatchObject({ reason: 'bad_session' });
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
      const qr = await d.next('qr', await d.connect());
      expect(await control('GET', `/sim/sessions/${d.sessionId}`, undefined, 200, `http://127.0.0.1:${port}`)).toMatchObject({ qr: qr.qr });
      await d.conn.close();
    } finally {
      await app.stop();
    }
    expect(app.child.exitCode).toBe(0);
  });
});
