import pino from 'pino';
import type { MessageKeyRef, OutboundMessage, SentMessage, SessionStatus } from '@app/contracts';
import type { AuthStateStore, ConnectOptions, EngineConnection, EngineEvent, GroupInfo, SessionEngine } from '../engine/engine.interface';
import type { QrBoard, SessionEventSink, SessionLeases, SessionRecordPatch, SessionRecords, Timers } from './session-ports';
import { SessionRunner } from './session-runner';

class FakeConnection implements EngineConnection {
  closed = false;
  loggedOut = false;
  constructor(readonly options: ConnectOptions) {}
  emit(event: EngineEvent) {
    this.options.onEvent(event);
  }
  async requestPairingCode() {
    return 'ABCD1234';
  }
  async createGroup(subject: string, participants: string[]): Promise<GroupInfo> {
    return { groupJid: '1-2@g.us', subject, description: '', ownerJid: '111@s.whatsapp.net', participants, isAnnounce: false, isLocked: false };
  }
  sent: OutboundMessage[] = [];
  presences: Array<[string, string]> = [];
  reads: MessageKeyRef[] = [];
  async send(message: OutboundMessage): Promise<SentMessage> {
    this.sent.push(message);
    return { waMessageId: message.waMessageId, timestamp: 1, raw: null };
  }
  async sendPresence(chatJid: string, presence: 'composing' | 'paused') {
    this.presences.push([chatJid, presence]);
  }
  async markRead(keys: MessageKeyRef[]) {
    this.reads.push(...keys);
  }
  async logout() {
    this.loggedOut = true;
    this.closed = true;
  }
  async close() {
    this.closed = true;
    this.emit({ type: 'close', reason: 'closed_by_us', statusCode: null, message: 'closed' });
  }
}

class FakeEngine implements SessionEngine {
  readonly name = 'sim' as const;
  connections: FakeConnection[] = [];
  failNext = 0;
  async connect(options: ConnectOptions) {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('connection refused');
    }
    const c = new FakeConnection(options);
    this.connections.push(c);
    return c;
  }
  get last() {
    return this.connections[this.connections.length - 1];
  }
}

class ManualTimers implements Timers {
  pending: Array<{ fn: () => void; ms: number; id: number }> = [];
  private seq = 0;
  setTimeout(fn: () => void, ms: number) {
    const id = ++this.seq;
    this.pending.push({ fn, ms, id });
    return id;
  }
  clearTimeout(id: unknown) {
    this.pending = this.pending.filter((t) => t.id !== id);
  }
  fireAll() {
    const due = this.pending;
    this.pending = [];
    due.forEach((t) => t.fn());
  }
}

const flush = () => new Promise((r) => setImmediate(r));

function setup(status: SessionStatus = 'stopped', settings: Partial<Parameters<typeof build>[0]> = {}) {
  return build({ status, ...settings });
}

function build(opts: { status: SessionStatus; qrMaxRetries?: number; reconnectMaxAttempts?: number; leaseFree?: boolean }) {
  const engine = new FakeEngine();
  const rows: SessionRecordPatch[] = [];
  const row: SessionRecordPatch = {};
  const events: Array<{ event: string; payload: Record<string, unknown> }> = [];
  const groups: GroupInfo[] = [];
  let creds: unknown = null;
  const auth: AuthStateStore = {
    sessionId: 'ses_1',
    readCreds: async <T>() => creds as T,
    writeCreds: async (c) => void (creds = c),
    readKeys: async () => ({}),
    writeKeys: async () => undefined,
    clear: async () => void (creds = null),
  };
  const records: SessionRecords = {
    find: async () => null,
    update: async (_id, patch) => {
      rows.push(patch);
      Object.assign(row, patch);
    },
    saveGroup: async (_o, _s, g) => void groups.push(g),
    resumable: async () => [],
  };
  const sink: SessionEventSink = { publish: async (e) => void events.push({ event: e.event, payload: e.payload as Record<string, unknown> }) };
  const leaseLog: string[] = [];
  let leaseFree = opts.leaseFree ?? true;
  const leases: SessionLeases = {
    acquire: async () => (leaseLog.push('acquire'), leaseFree),
    release: async () => void leaseLog.push('release'),
  };
  const qrShown: Record<string, unknown> = {};
  const qr: QrBoard = {
    show: async (id, q) => void (qrShown[id] = q),
    clear: async (id) => void delete qrShown[id],
  };
  const timers = new ManualTimers();
  const runner = new SessionRunner('ses_1', 'org_1', opts.status, {
    engine,
    authState: () => auth,
    records,
    events: sink,
    leases,
    qr,
    timers,
    clock: () => 1_000,
    logger: pino({ level: 'silent' }),
    settings: { qrMaxRetries: opts.qrMaxRetries ?? 3, qrTtlMs: 20_000, reconnectMaxAttempts: opts.reconnectMaxAttempts ?? 3, reconnectBaseDelayMs: 100, reconnectMaxDelayMs: 1000 },
  });
  const statuses = () => events.filter((e) => e.event === 'session.status').map((e) => e.payload.status);
  return {
    runner, engine, rows, row, events, groups, leaseLog, qrShown, timers, statuses,
    setCreds: (c: unknown) => (creds = c),
    getCreds: () => creds,
    freeLease: () => (leaseFree = true),
  };
}

const account = { jid: '15550001111@s.whatsapp.net', lid: '99887766@lid', phoneNumber: '15550001111' };

describe('SessionRunner', () => {
  it('walks starting → scan_qr_code → working and persists the account', async () => {
    const t = setup();
    await t.runner.start();
    expect(t.runner.currentStatus).toBe('starting');
    t.engine.last.emit({ type: 'qr', qr: 'QR-1' });
    await flush();
    expect(t.runner.currentStatus).toBe('scan_qr_code');
    expect(t.qrShown['ses_1']).toEqual({ qr: 'QR-1', expiresAt: 21_000 });
    expect(t.events.find((e) => e.event === 'auth.qr')?.payload).toEqual({ qr: 'QR-1', expiresAt: 21_000 });
    t.engine.last.emit({ type: 'open', account });
    await flush();
    expect(t.runner.currentStatus).toBe('working');
    expect(t.row).toMatchObject({ status: 'working', phoneNumber: '15550001111', waJid: account.jid, waLid: account.lid, desiredState: 'running' });
    expect(t.qrShown['ses_1']).toBeUndefined();
    expect(t.statuses()).toEqual(['starting', 'scan_qr_code', 'working']);
    const status = t.events.find((e) => e.event === 'session.status' && e.payload.status === 'working')!;
    expect(status.payload).toEqual({ status: 'working', previousStatus: 'scan_qr_code', reason: 'connected' });
    expect(t.events.map((e) => e.event)).toContain('session.connected');
  });

  it('fails after QR_MAX_RETRIES unscanned QRs and closes the socket', async () => {
    const t = setup('stopped', { qrMaxRetries: 2 });
    await t.runner.start();
    for (const qr of ['a', 'b', 'c']) t.engine.last.emit({ type: 'qr', qr });
    await flush();
    expect(t.runner.currentStatus).toBe('failed');
    expect(t.engine.last.closed).toBe(true);
    expect(t.events.filter((e) => e.event === 'auth.qr')).toHaveLength(2);
    expect(t.leaseLog).toContain('release');
    expect(t.runner.isActive).toBe(false);
  });

  it('reconnects at once when the network asks for a restart', async () => {
    const t = setup();
    await t.runner.start();
    t.engine.last.emit({ type: 'close', reason: 'restart_required', statusCode: 515, message: 'restart' });
    await flush();
    expect(t.engine.connections).toHaveLength(2);
    expect(t.timers.pending).toHaveLength(0);
  });

  it('backs off on transient closes and fails after RECONNECT_MAX_ATTEMPTS in a row', async () => {
    const t = setup('stopped', { reconnectMaxAttempts: 3 });
    await t.runner.start();
    t.engine.last.emit({ type: 'open', account });
    await flush();
    t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: 408, message: 'lost' });
    await flush();
    expect(t.runner.currentStatus).toBe('reconnecting');
    expect(t.events.map((e) => e.event)).toContain('session.disconnected');
    expect(t.timers.pending.map((p) => p.ms)).toEqual([100]);
    t.engine.failNext = 5;
    t.timers.fireAll();
    await flush();
    expect(t.timers.pending.map((p) => p.ms)).toEqual([200]);
    t.timers.fireAll();
    await flush();
    expect(t.runner.currentStatus).toBe('failed');
    expect(t.timers.pending).toHaveLength(0);
  });

  it('a successful reconnect resets the failure count', async () => {
    const t = setup('stopped', { reconnectMaxAttempts: 2 });
    await t.runner.start();
    t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: null, message: 'lost' });
    await flush();
    t.timers.fireAll();
    await flush();
    t.engine.last.emit({ type: 'open', account });
    await flush();
    t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: null, message: 'lost' });
    await flush();
    expect(t.runner.currentStatus).toBe('reconnecting');
  });

  it('logged_out from the phone wipes auth state and the account, and does not reconnect', async () => {
    const t = setup();
    t.setCreds({ me: 1 });
    await t.runner.start();
    t.engine.last.emit({ type: 'open', account });
    await flush();
    t.engine.last.emit({ type: 'close', reason: 'logged_out', statusCode: 401, message: 'unlinked' });
    await flush();
    expect(t.runner.currentStatus).toBe('logged_out');
    expect(t.getCreds()).toBeNull();
    expect(t.row).toMatchObject({ phoneNumber: null, waJid: null, waLid: null });
    expect(t.events.map((e) => e.event)).toContain('session.logged_out');
    expect(t.engine.connections).toHaveLength(1);
    expect(t.timers.pending).toHaveLength(0);
  });

  it('replaced → failed without reconnecting', async () => {
    const t = setup();
    await t.runner.start();
    t.engine.last.emit({ type: 'close', reason: 'replaced', statusCode: 440, message: 'replaced' });
    await flush();
    expect(t.runner.currentStatus).toBe('failed');
    expect(t.engine.connections).toHaveLength(1);
  });

  it('bad_session wipes auth state and starts a fresh QR flow', async () => {
    const t = setup();
    t.setCreds({ broken: true });
    await t.runner.start();
    t.engine.last.emit({ type: 'close', reason: 'bad_session', statusCode: 500, message: 'bad' });
    await flush();
    expect(t.getCreds()).toBeNull();
    expect(t.engine.connections).toHaveLength(2);
    t.engine.last.emit({ type: 'qr', qr: 'fresh' });
    await flush();
    expect(t.runner.currentStatus).toBe('scan_qr_code');
  });

  it('stop closes the socket quietly, releases the lease and records the wish', async () => {
    const t = setup();
    await t.runner.start();
    t.engine.last.emit({ type: 'open', account });
    await flush();
    await t.runner.stop();
    await flush();
    expect(t.engine.last.closed).toBe(true);
    expect(t.runner.currentStatus).toBe('stopped');
    expect(t.row.desiredState).toBe('stopped');
    expect(t.leaseLog[t.leaseLog.length - 1]).toBe('release');
    expect(t.statuses()).toEqual(['starting', 'working', 'stopped']);
  });

  it('restart of an unpaired session opens a new socket (a new QR flow) and ignores the old one', async () => {
    const t = setup();
    await t.runner.start();
    const first = t.engine.last;
    first.emit({ type: 'qr', qr: 'old' });
    await flush();
    await t.runner.restart();
    expect(first.closed).toBe(true);
    first.emit({ type: 'qr', qr: 'late event of the old socket' });
    t.engine.last.emit({ type: 'qr', qr: 'new' });
    await flush();
    expect(t.qrShown['ses_1']).toMatchObject({ qr: 'new' });
    expect(t.engine.connections).toHaveLength(2);
  });

  it('logout of a connected session unlinks on the network, clears the account, and is idempotent', async () => {
    const t = setup();
    t.setCreds({ me: 1 });
    await t.runner.start();
    t.engine.last.emit({ type: 'open', account });
    await flush();
    await t.runner.logout(1000);
    expect(t.engine.last.loggedOut).toBe(true);
    expect(t.runner.currentStatus).toBe('logged_out');
    expect(t.getCreds()).toBeNull();
    expect(t.row).toMatchObject({ phoneNumber: null, waJid: null, waLid: null, desiredState: 'stopped' });
    const writes = t.rows.length;
    const published = t.events.length;
    await t.runner.logout(1000);
    expect(t.rows.length).toBe(writes);
    expect(t.events.length).toBe(published);
  });

  it('logout of a paired session without a socket connects briefly to unlink it', async () => {
    const t = setup('stopped');
    t.setCreds({ me: 1 });
    const done = t.runner.logout(1000);
    await flush();
    t.engine.last.emit({ type: 'open', account });
    await done;
    expect(t.engine.last.loggedOut).toBe(true);
    expect(t.runner.currentStatus).toBe('logged_out');
  });

  it('waits for the lease when another gateway still holds the session', async () => {
    const t = setup('stopped', { leaseFree: false });
    await t.runner.start();
    expect(t.engine.connections).toHaveLength(0);
    expect(t.runner.currentStatus).toBe('reconnecting');
    // still wanted here, but the lease is not ours: the heartbeat must not renew it (nor call it lost)
    expect(t.runner.isActive).toBe(true);
    expect(t.runner.holdsLease).toBe(false);
    t.freeLease();
    t.timers.fireAll();
    await flush();
    expect(t.engine.connections).toHaveLength(1);
    expect(t.runner.holdsLease).toBe(true);
    await t.runner.stop();
    expect(t.runner.holdsLease).toBe(false);
  });

  it('creates groups only while working, stores them and publishes group.created once', async () => {
    const t = setup();
    await t.runner.start();
    await expect(t.runner.createGroup('g', [])).rejects.toMatchObject({ code: 'not_implemented' });
    t.engine.last.emit({ type: 'open', account });
    await flush();
    const view = await t.runner.createGroup('Team', ['15550002222@s.whatsapp.net']);
    expect(view).toEqual({ groupJid: '1-2@g.us', subject: 'Team', description: '', ownerJid: '111@s.whatsapp.net', participants: 1, isAnnounce: false, isLocked: false });
    t.engine.last.emit({ type: 'group', action: 'created', group: { groupJid: '1-2@g.us', subject: 'Team', description: '', ownerJid: 'x', participants: [], isAnnounce: false, isLocked: false } });
    await flush();
    expect(t.groups).toHaveLength(2);
    expect(t.events.filter((e) => e.event === 'group.created')).toHaveLength(1);
  });

  it('publishes inbound messages as message.received, not our own echoes', async () => {
    const t = setup();
    await t.runner.start();
    t.engine.last.emit({ type: 'message', message: { id: 'm1', from: '1@s.whatsapp.net', chatJid: '1@s.whatsapp.net', text: 'hi', timestamp: 5, fromMe: false } });
    t.engine.last.emit({ type: 'message', message: { id: 'm2', from: 'me', chatJid: '1@s.whatsapp.net', text: 'echo', timestamp: 6, fromMe: true } });
    await flush();
    const received = t.events.filter((e) => e.event === 'message.received');
    expect(received).toHaveLength(1);
    expect(received[0].payload).toMatchObject({ id: 'm1', text: 'hi' });
  });
});
