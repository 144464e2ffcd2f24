import pino from 'pino';
import type { MessageKeyRef, OutboundMessage, SentMessage, SessionStatus, SyncHistoryMode } from '@app/contracts';
import type { AuthStateStore, ConnectOptions, EngineConnection, EngineEvent, GroupInfo, InboundMessage, SessionEngine } from '../engine/engine.interface';
import { CredentialsUnusableError } from '../engine/credentials-unusable';
import { MemoryMessageStore } from '../../../../test/fakes/memory-message-store';
import type { QrBoard, SessionLeases, Timers } from './session-ports';
import type { SessionEventSink, SessionRecordPatch, SessionRecords } from '../store-ports';
import { MAX_PENDING_HISTORY_BATCHES } from './history-queue';
import { INBOUND_RETRY_MAX_MS } from './inbound-intake';
import { EventNotTakenError } from './session-errors';
import { SessionRunner } from './session-runner';
import type { ChatStore } from '../messages/chat-events';

class FakeConnection implements EngineConnection {
  closed = false;
  loggedOut = false;
  constructor(readonly options: ConnectOptions) {}
  /** What the engine does: hands the event over; a real engine would not ack one that is not taken. */
  emit(event: EngineEvent): Promise<void> {
    const taken = this.options.onEvent(event);
    taken.catch(() => undefined);
    return taken;
  }
  async requestPairingCode() {
    return 'ABCD1234';
  }
  createdGroups: string[] = [];
  async createGroup(subject: string, participants: string[]): Promise<GroupInfo> {
    this.createdGroups.push(subject);
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
  readonly performed: { action: string; args: unknown }[] = [];
  async perform(action: string, args: unknown): Promise<never> {
    this.performed.push({ action, args });
    return { performed: action } as never;
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
  /** sessions whose engine state was dropped, in order */
  forgotten: string[] = [];
  forget(sessionId: string) {
    this.forgotten.push(sessionId);
  }
  /** set: every connect throws CredentialsUnusableError with this detail, as an engine that refuses the stored one */
  refuseCredentials: string | null = null;
  attempts = 0;
  async connect(options: ConnectOptions) {
    this.attempts += 1;
    if (this.refuseCredentials) throw new CredentialsUnusableError(this.refuseCredentials);
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

function build(opts: {
  status: SessionStatus;
  qrMaxRetries?: number;
  reconnectMaxAttempts?: number;
  leaseFree?: boolean;
  autoRead?: boolean;
  groupStoreFails?: boolean;
  leasesTrusted?: () => boolean;
  /** the account on the row when the session starts: a paired session (phoneNumber set) never gives up */
  phoneNumber?: string | null;
  /** the jitter's random source; 0 = the full backoff delay */
  random?: () => number;
  clientVersionRefused?: (sessionId: string) => void;
  /** the row cannot be read when the runner starts */
  findFails?: boolean;
  /** PostgreSQL as the runner's stores see it: while `down`, every write through them fails as on a refused connection */
  db?: { down: boolean };
  /** the session setting, and the chat store history and chat updates go to */
  syncHistory?: SyncHistoryMode;
  chats?: ChatStore;
}) {
  const db = opts.db ?? { down: false };
  const unreachable = () => {
    if (db.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
  };
  const engine = new FakeEngine();
  const rows: SessionRecordPatch[] = [];
  const row: SessionRecordPatch = {};
  const events: Array<{ event: string; payload: Record<string, unknown> }> = [];
  const groups: GroupInfo[] = [];
  const groupChanges: unknown[] = [];
  const messages = new MemoryMessageStore();
  let rowToken = 0;
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
    find: async () => {
      if (opts.findFails) throw new Error('Connection terminated unexpectedly');
      return { id: 'ses_1', organizationId: 'org_1', status: opts.status, desiredState: 'running', phoneNumber: opts.phoneNumber ?? null, autoRead: opts.autoRead ?? true, presenceTyping: false, syncHistory: opts.syncHistory };
    },
    // the row's fencing: a write carrying an older token than the row's newest is refused
    update: async (_id, patch, leaseToken) => {
      unreachable();
      if (leaseToken !== null && leaseToken !== rowToken) return false;
      rows.push(patch);
      Object.assign(row, patch);
      return true;
    },
    takeLeaseToken: async () => ++rowToken,
    notPlacedOn: async () => [],
    saveGroup: async (_o, _s, g) => {
      if (opts.groupStoreFails) throw new Error('invalid byte sequence for encoding "UTF8": 0x00');
      groups.push({ ...g });
    },
    updateGroup: async (_s, jid, changes, network) => void groupChanges.push({ jid, changes, ...(network ? { network } : {}) }),
    addGroupParticipants: async (_s, jid, jids, network) => {
      groupChanges.push({ jid, added: jids, ...(network ? { network } : {}) });
      for (const g of groups) if (g.groupJid === jid) g.participants = [...new Set([...g.participants, ...jids])];
    },
    removeGroupParticipants: async (_s, jid, jids, network) => {
      groupChanges.push({ jid, removed: jids, ...(network ? { network } : {}) });
      for (const g of groups) if (g.groupJid === jid) g.participants = g.participants.filter((p) => !jids.includes(p));
    },
    setGroupAdmins: async (_s, jid, jids, admin, network) => void groupChanges.push({ jid, admin, members: jids, ...(network ? { network } : {}) }),
    findGroup: async (_s, jid) => groups.find((g) => g.groupJid === jid) ?? null,
    resumable: async () => [],
  };
  /** the catalog's payload interfaces have no index signature; the assertions read them by key */
  const loose = (payload: object) => payload as Record<string, unknown>;
  const sink: SessionEventSink = {
    publish: async (e) => {
      unreachable();
      events.push({ event: e.event, payload: loose(e.payload) });
    },
    // committed together: the events of a transaction that throws are never seen
    transact: async (work) => {
      unreachable();
      const pending: Array<{ event: string; payload: Record<string, unknown> }> = [];
      const result = await work(undefined, (e) => void pending.push({ event: e.event, payload: loose(e.payload) }));
      events.push(...pending);
      return result;
    },
    // one statement: the events count only when it changed something
    withOutbox: async (named, write) => {
      const changed = await write(undefined);
      if (changed) events.push(...named.map((e) => ({ event: e.event, payload: loose(e.payload) })));
      return changed;
    },
    withOutboxEach: async (named, write, wrote) => {
      const result = await write(undefined);
      events.push(...named.filter((_e, i) => wrote(result, i)).map((e) => ({ event: e.event, payload: loose(e.payload) })));
      return result;
    },
  };
  const leaseLog: string[] = [];
  let leaseFree = opts.leaseFree ?? true;
  const leases: SessionLeases = {
    acquire: async (_id, takeToken) => (leaseLog.push('acquire'), leaseFree ? takeToken() : null),
    release: async () => void leaseLog.push('release'),
  };
  const qrShown: Record<string, unknown> = {};
  const qr: QrBoard = {
    show: async (id, q) => void (qrShown[id] = q),
    clear: async (id) => void delete qrShown[id],
  };
  const timers = new ManualTimers();
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const runner = new SessionRunner('ses_1', 'org_1', opts.status, {
    engine,
    authState: () => auth,
    records,
    events: sink,
    leases,
    qr,
    timers,
    clock: () => 1_000,
    random: opts.random ?? (() => 0),
    clientVersionRefused: opts.clientVersionRefused,
    leasesTrusted: opts.leasesTrusted,
    logger,
    messages,
    chats: opts.chats,
    messaging: { ttlMs: 60_000, typingMsPerChar: 40, typingMinMs: 500, typingMaxMs: 3000 },
    settings: { qrMaxRetries: opts.qrMaxRetries ?? 3, qrTtlMs: 20_000, reconnectMaxAttempts: opts.reconnectMaxAttempts ?? 3, reconnectBaseDelayMs: 100, reconnectMaxDelayMs: 1000 },
  });
  const statuses = () => events.filter((e) => e.event === 'session.status').map((e) => e.payload.status);
  return {
    runner, engine, rows, row, events, groups, groupChanges, messages, leaseLog, qrShown, timers, statuses, logs,
    setCreds: (c: unknown) => (creds = c),
    getCreds: () => creds,
    freeLease: () => (leaseFree = true),
    /** another gateway acquires the lease: the row's token moves past this runner's */
    takeOverElsewhere: () => void ++rowToken,
  };
}

const account = { jid: '15550001111@s.whatsapp.net', lid: '99887766@lid', phoneNumber: '15550001111' };

/** Lets `rounds` scheduled reconnects happen (each fails while the engine's failNext lasts); the delays they waited. */
async function fireRetries(t: ReturnType<typeof setup>, rounds: number): Promise<number[]> {
  const delays: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    delays.push(...t.timers.pending.map((p) => p.ms));
    t.timers.fireAll();
    await flush();
  }
  return delays;
}

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

  it('makes the engine forget the session whenever it leaves this gateway: stop, hand-off (shutdown), lease lost', async () => {
    for (const leave of ['stop', 'shutdown', 'leaseLost'] as const) {
      const t = setup('stopped');
      await t.runner.start();
      t.engine.last.emit({ type: 'open', account });
      await flush();
      // a reconnect keeps what the engine holds for the session
      t.engine.last.emit({ type: 'close', reason: 'restart_required', statusCode: 515, message: 'restart' });
      await flush();
      expect(t.engine.forgotten).toEqual([]);
      await t.runner[leave]();
      expect(t.engine.forgotten).toEqual(['ses_1']);
    }
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

  it('fails with statusReason qr_not_scanned and no next attempt on the row', async () => {
    const t = setup('stopped', { qrMaxRetries: 1 });
    await t.runner.start();
    for (const qr of ['a', 'b']) t.engine.last.emit({ type: 'qr', qr });
    await flush();
    expect(t.row).toMatchObject({ status: 'failed', lastReason: 'qr_not_scanned', nextAttemptAt: null });
  });

  describe('pairing by code', () => {
    it('QR rotations stop counting once a code is requested: the code can be typed long after QR_MAX_RETRIES rotations', async () => {
      const t = setup('stopped', { qrMaxRetries: 2 });
      await t.runner.start();
      t.engine.last.emit({ type: 'qr', qr: 'q1' });
      await flush();
      expect(await t.runner.requestPairingCode('15550001111')).toEqual({ code: 'ABCD1234' });
      expect(t.row).toMatchObject({ status: 'scan_qr_code', lastReason: 'pairing_code_requested' });
      for (let i = 2; i <= 10; i += 1) t.engine.last.emit({ type: 'qr', qr: `q${i}` });
      await flush();
      expect(t.runner.currentStatus).toBe('scan_qr_code');
      expect(t.engine.last.closed).toBe(false);
      // one status event for the request, none per rotation
      const reasons = t.events.filter((e) => e.event === 'session.status').map((e) => e.payload.reason);
      expect(reasons).toEqual(['start_requested', 'qr_shown', 'pairing_code_requested']);
      t.engine.last.emit({ type: 'open', account });
      await flush();
      expect(t.row).toMatchObject({ status: 'working', lastReason: 'connected', phoneNumber: account.phoneNumber });
    });

    it('a drop while the code is typed says so (pairing_code_dropped) on the next QR, until a new code is requested; its QRs count again', async () => {
      const t = setup('stopped', { qrMaxRetries: 2, reconnectMaxAttempts: 5 });
      await t.runner.start();
      t.engine.last.emit({ type: 'qr', qr: 'q1' });
      await flush();
      await t.runner.requestPairingCode('15550001111');
      t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: 428, message: 'Connection Terminated' });
      await flush();
      expect(t.row).toMatchObject({ status: 'starting', lastReason: 'pairing_code_dropped: Connection Terminated (close code 428)', nextAttemptAt: new Date(1100) });
      t.timers.fireAll();
      await flush();
      t.engine.last.emit({ type: 'qr', qr: 'q2' });
      await flush();
      expect(t.row).toMatchObject({ status: 'scan_qr_code', lastReason: 'pairing_code_dropped: Connection Terminated (close code 428)', nextAttemptAt: null });
      await t.runner.requestPairingCode('15550001111');
      expect(t.row.lastReason).toBe('pairing_code_requested');
      // a drop of a socket with no code requested on it is an ordinary connect failure, and its QRs count
      t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: 428, message: 'Connection Terminated' });
      await flush();
      t.timers.fireAll();
      await flush();
      t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: 428, message: 'Connection Terminated' });
      await flush();
      expect(t.row.lastReason).toBe('connect_failed: Connection Terminated (close code 428)');
      t.timers.fireAll();
      await flush();
      for (const qr of ['q3', 'q4', 'q5']) t.engine.last.emit({ type: 'qr', qr });
      await flush();
      expect(t.row).toMatchObject({ status: 'failed', lastReason: 'qr_not_scanned' });
    });

    it('a 515 after the code was entered is the pairing completing, not a drop', async () => {
      const t = setup('stopped');
      await t.runner.start();
      t.engine.last.emit({ type: 'qr', qr: 'q1' });
      await flush();
      await t.runner.requestPairingCode('15550001111');
      t.engine.last.emit({ type: 'close', reason: 'restart_required', statusCode: 515, message: 'restart' });
      await flush();
      t.engine.last.emit({ type: 'open', account });
      await flush();
      const reasons = t.events.filter((e) => e.event === 'session.status').map((e) => e.payload.reason);
      expect(reasons).not.toContainEqual(expect.stringMatching(/^pairing_code_dropped/));
      expect(t.runner.currentStatus).toBe('working');
    });
  });

  it('reconnects at once when the network asks for a restart', async () => {
    const t = setup();
    await t.runner.start();
    t.engine.last.emit({ type: 'close', reason: 'restart_required', statusCode: 515, message: 'restart' });
    await flush();
    expect(t.engine.connections).toHaveLength(2);
    expect(t.timers.pending).toHaveLength(0);
  });

  it('a session that never paired backs off and fails after RECONNECT_MAX_ATTEMPTS in a row', async () => {
    const t = setup('stopped', { reconnectMaxAttempts: 3 });
    await t.runner.start();
    t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: 408, message: 'lost' });
    await flush();
    expect(t.runner.currentStatus).toBe('starting');
    expect(t.timers.pending.map((p) => p.ms)).toEqual([100]);
    t.engine.failNext = 5;
    t.timers.fireAll();
    await flush();
    expect(t.timers.pending.map((p) => p.ms)).toEqual([200]);
    t.timers.fireAll();
    await flush();
    expect(t.runner.currentStatus).toBe('failed');
    expect(t.row.lastReason).toBe('reconnect_attempts_exhausted: connect_failed: connection refused');
    expect(t.timers.pending).toHaveLength(0);
  });

  describe('a paired session never gives up', () => {
    it('after it connected here: keeps reconnecting at the capped delay past RECONNECT_MAX_ATTEMPTS, with the next attempt on the row', async () => {
      const t = setup('stopped', { reconnectMaxAttempts: 3 });
      await t.runner.start();
      t.engine.last.emit({ type: 'open', account });
      await flush();
      t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: 408, message: 'lost' });
      await flush();
      expect(t.runner.currentStatus).toBe('reconnecting');
      expect(t.events.map((e) => e.event)).toContain('session.disconnected');
      t.engine.failNext = 50;
      const delays = await fireRetries(t, 20);
      expect(delays.slice(0, 6)).toEqual([100, 200, 400, 800, 1000, 1000]);
      expect(delays).toHaveLength(20);
      expect(t.runner.currentStatus).toBe('reconnecting');
      expect(t.runner.isActive).toBe(true);
      // the row says why and when the next attempt is (clock 1000 + 1000 ms); the event's reason stays the cause
      expect(t.row).toMatchObject({ lastReason: 'connection_lost: connection refused', nextAttemptAt: new Date(2000) });
      expect(t.statuses().filter((s) => s === 'failed')).toHaveLength(0);
      t.engine.failNext = 0;
      t.timers.fireAll();
      await flush();
      t.engine.last.emit({ type: 'open', account });
      await flush();
      expect(t.runner.currentStatus).toBe('working');
    });

    it('resumed with an account on its row (after a gateway restart), an outage never ends it in failed', async () => {
      const t = setup('working', { reconnectMaxAttempts: 2, phoneNumber: account.phoneNumber });
      t.engine.failNext = 30;
      await t.runner.start();
      await fireRetries(t, 25);
      expect(t.runner.currentStatus).toBe('starting');
      expect(t.timers.pending).toHaveLength(1);
      expect(t.logs.filter((l) => l.msg === 'connect failed; giving up')).toHaveLength(0);
      expect(t.logs.filter((l) => l.msg === 'connect failed; retrying').at(-1)).toMatchObject({ attempt: 26, of: null, retryInMs: 1000 });
    });

    it('a row that cannot be read at start counts as paired: retried past RECONNECT_MAX_ATTEMPTS', async () => {
      const t = setup('working', { reconnectMaxAttempts: 2, findFails: true });
      t.engine.failNext = 10;
      await t.runner.start();
      await fireRetries(t, 5);
      expect(t.runner.currentStatus).toBe('starting');
      expect(t.timers.pending).toHaveLength(1);
    });

    it('spreads its delays with jitter: within [delay/2, delay]', async () => {
      const draws = [0, 0.999, 0.5];
      const t = setup('stopped', { phoneNumber: account.phoneNumber, random: () => draws.shift() ?? 0 });
      t.engine.failNext = 3;
      await t.runner.start();
      const delays = await fireRetries(t, 3);
      // base 100, 200, 400 less RECONNECT_JITTER (half) of it times the draw
      expect(delays).toEqual([100, 100, 300]);
    });

    it('jitter stays within bounds with the real random source', async () => {
      const t = setup('stopped', { phoneNumber: account.phoneNumber, random: Math.random });
      t.engine.failNext = 40;
      await t.runner.start();
      const delays = await fireRetries(t, 40);
      const capped = delays.slice(5);
      for (const d of capped) {
        expect(d).toBeGreaterThanOrEqual(500);
        expect(d).toBeLessThanOrEqual(1000);
      }
      // not one burst: the capped delays differ
      expect(new Set(capped).size).toBeGreaterThan(5);
    });
  });

  it('a session that never connected stays starting, says why in session.status and on its row, then fails naming the cause', async () => {
    const t = setup('stopped', { reconnectMaxAttempts: 2 });
    await t.runner.start();
    const dns = { type: 'close', reason: 'transient', statusCode: null, message: 'getaddrinfo ENOTFOUND web.whatsapp.com' } as const;
    t.engine.last.emit(dns);
    await flush();
    expect(t.runner.currentStatus).toBe('starting');
    const statusEvents = t.events.filter((e) => e.event === 'session.status').map((e) => e.payload);
    expect(statusEvents).toEqual([
      { status: 'starting', previousStatus: 'stopped', reason: 'start_requested' },
      { status: 'starting', previousStatus: 'starting', reason: 'connect_failed: getaddrinfo ENOTFOUND web.whatsapp.com' },
    ]);
    expect(t.row).toMatchObject({
      status: 'starting',
      lastReason: 'connect_failed: getaddrinfo ENOTFOUND web.whatsapp.com',
      nextAttemptAt: new Date(1100),
    });
    expect(t.events.map((e) => e.event)).not.toContain('session.disconnected');
    expect(t.logs).toContainEqual(
      expect.objectContaining({ level: 40, sessionId: 'ses_1', reason: 'connect_failed: getaddrinfo ENOTFOUND web.whatsapp.com', attempt: 1 }),
    );
    t.timers.fireAll();
    await flush();
    t.engine.last.emit(dns);
    await flush();
    expect(t.runner.currentStatus).toBe('failed');
    expect(t.row).toMatchObject({ lastReason: 'reconnect_attempts_exhausted: connect_failed: getaddrinfo ENOTFOUND web.whatsapp.com', nextAttemptAt: null });
    expect(t.logs.filter((l) => l.level === 40 && String(l.reason).includes('ENOTFOUND'))).toHaveLength(2);
  });

  it('names the close code of a close the network chose, and a connect error as thrown', async () => {
    const t = setup('stopped', { reconnectMaxAttempts: 5 });
    await t.runner.start();
    t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: 503, message: 'Stream Errored (unavailable)' });
    await flush();
    expect(t.row.lastReason).toBe('connect_failed: Stream Errored (unavailable) (close code 503)');
    expect(t.row.nextAttemptAt).toBeInstanceOf(Date);
    t.engine.failNext = 1;
    t.timers.fireAll();
    await flush();
    expect(t.runner.currentStatus).toBe('starting');
    expect(t.row.lastReason).toBe('connect_failed: connection refused');
  });

  it('a session that was connected and lost its socket is reconnecting, with the cause', async () => {
    const t = setup();
    await t.runner.start();
    t.engine.last.emit({ type: 'open', account });
    await flush();
    t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: null, message: 'read ECONNRESET' });
    await flush();
    expect(t.runner.currentStatus).toBe('reconnecting');
    const last = t.events.filter((e) => e.event === 'session.status').at(-1)!.payload;
    expect(last).toEqual({ status: 'reconnecting', previousStatus: 'working', reason: 'connection_lost: read ECONNRESET' });
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

  it('a holder whose row write is refused (another gateway took the lease) closes its socket and publishes nothing', async () => {
    const t = setup();
    await t.runner.start();
    t.engine.last.emit({ type: 'open', account });
    await flush();
    t.takeOverElsewhere();
    t.engine.last.emit({ type: 'close', reason: 'replaced', statusCode: 440, message: 'replaced' });
    await flush();
    expect(t.row.status).toBe('working');
    expect(t.statuses()).toEqual(['starting', 'working']);
    expect(t.engine.connections).toHaveLength(1);
    expect(t.runner.isActive).toBe(false);
    expect(t.timers.pending).toHaveLength(0);
  });

  it('acts on no socket event and opens no socket while the lease renewals have lapsed', async () => {
    let trusted = true;
    const t = setup('stopped', { leasesTrusted: () => trusted });
    await t.runner.start();
    t.engine.last.emit({ type: 'open', account });
    await flush();
    trusted = false;
    t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: 408, message: 'lost' });
    t.engine.last.emit({ type: 'close', reason: 'restart_required', statusCode: 515, message: 'restart' });
    await flush();
    expect(t.runner.currentStatus).toBe('working');
    expect(t.engine.connections).toHaveLength(1);
    expect(t.timers.pending).toHaveLength(0);
  });

  describe('close codes mean what WhatsApp means', () => {
    const paired = async (opts: Parameters<typeof setup>[1] = {}) => {
      const t = setup('stopped', opts);
      t.setCreds({ me: 'paired' });
      await t.runner.start();
      t.engine.last.emit({ type: 'open', account });
      await flush();
      return t;
    };

    it('440 once: retried after a delay, holding the lease; twice: failed with reason replaced', async () => {
      const t = await paired();
      t.engine.last.emit({ type: 'close', reason: 'replaced', statusCode: 440, message: 'Stream Errored (conflict)' });
      await flush();
      expect(t.runner.currentStatus).toBe('reconnecting');
      expect(t.timers.pending.map((p) => p.ms)).toEqual([100]);
      expect(t.leaseLog).not.toContain('release');
      t.timers.fireAll();
      await flush();
      t.engine.last.emit({ type: 'open', account });
      await flush();
      expect(t.runner.currentStatus).toBe('working');
      t.engine.last.emit({ type: 'close', reason: 'replaced', statusCode: 440, message: 'Stream Errored (conflict)' });
      await flush();
      expect(t.runner.currentStatus).toBe('failed');
      expect(t.row.lastReason).toBe('replaced');
      expect(t.engine.connections).toHaveLength(2);
      expect(t.timers.pending).toHaveLength(0);
      expect(t.leaseLog).toContain('release');
      expect(t.getCreds()).toEqual({ me: 'paired' });
    });

    it('403 stops at once with reason forbidden: no retry, the pairing kept', async () => {
      const t = await paired();
      t.engine.last.emit({ type: 'close', reason: 'forbidden', statusCode: 403, message: 'Connection Failure' });
      await flush();
      expect(t.runner.currentStatus).toBe('failed');
      expect(t.row.lastReason).toBe('forbidden');
      expect(t.timers.pending).toHaveLength(0);
      expect(t.engine.connections).toHaveLength(1);
      expect(t.runner.isActive).toBe(false);
      expect(t.getCreds()).toEqual({ me: 'paired' });
    });

    it('405 shows client_version_refused, retries after the long delay (10 capped delays) and tells the host each time', async () => {
      const told: string[] = [];
      const t = await paired({ clientVersionRefused: (id) => void told.push(id) });
      t.engine.last.emit({ type: 'close', reason: 'client_version_refused', statusCode: 405, message: 'Connection Failure' });
      await flush();
      expect(t.runner.currentStatus).toBe('reconnecting');
      expect(t.events.filter((e) => e.event === 'session.status').at(-1)!.payload).toMatchObject({ reason: 'client_version_refused' });
      expect(t.row).toMatchObject({ lastReason: 'client_version_refused', nextAttemptAt: new Date(11_000) });
      expect(t.timers.pending.map((p) => p.ms)).toEqual([10_000]);
      t.timers.fireAll();
      await flush();
      t.engine.last.emit({ type: 'close', reason: 'client_version_refused', statusCode: 405, message: 'Connection Failure' });
      await flush();
      expect(t.timers.pending.map((p) => p.ms)).toEqual([10_000]);
      expect(told).toEqual(['ses_1', 'ses_1']);
      expect(t.getCreds()).toEqual({ me: 'paired' });
    });

    it('515 reconnects at once, but a loop of them is bounded: backed off, and a never-paired session ends in failed', async () => {
      const t = setup('stopped', { reconnectMaxAttempts: 2 });
      await t.runner.start();
      for (let i = 0; i < 3; i += 1) {
        t.engine.last.emit({ type: 'close', reason: 'restart_required', statusCode: 515, message: 'Stream Errored (restart required)' });
        await flush();
      }
      expect(t.engine.connections).toHaveLength(4);
      expect(t.timers.pending).toHaveLength(0);
      t.engine.last.emit({ type: 'close', reason: 'restart_required', statusCode: 515, message: 'Stream Errored (restart required)' });
      await flush();
      expect(t.engine.connections).toHaveLength(4);
      expect(t.timers.pending.map((p) => p.ms)).toEqual([100]);
      expect(t.row.lastReason).toMatch(/^connect_failed: restart requested 4 times in a row: Stream Errored \(restart required\) \(close code 515\)$/);
      t.timers.fireAll();
      await flush();
      t.engine.last.emit({ type: 'close', reason: 'restart_required', statusCode: 515, message: 'Stream Errored (restart required)' });
      await flush();
      expect(t.runner.currentStatus).toBe('failed');
      expect(t.engine.connections).toHaveLength(5);
    });

    it('an open ends a 515 streak: the restart after pairing is always at once', async () => {
      const t = setup();
      await t.runner.start();
      for (let round = 0; round < 3; round += 1) {
        for (let i = 0; i < 3; i += 1) {
          t.engine.last.emit({ type: 'close', reason: 'restart_required', statusCode: 515, message: 'restart' });
          await flush();
        }
        t.engine.last.emit({ type: 'open', account });
        await flush();
      }
      expect(t.engine.connections).toHaveLength(10);
      expect(t.timers.pending).toHaveLength(0);
    });

    it('credentials are never cleared by a close except 401 (a logout)', async () => {
      const closes = [
        { reason: 'transient', statusCode: 500, message: 'Stream Errored (ack)' },
        { reason: 'transient', statusCode: 411, message: 'Multi-device beta not joined' },
        { reason: 'transient', statusCode: 428, message: 'Connection Terminated' },
        { reason: 'transient', statusCode: null, message: 'read ECONNRESET' },
        { reason: 'restart_required', statusCode: 515, message: 'restart' },
        { reason: 'replaced', statusCode: 440, message: 'conflict' },
        { reason: 'forbidden', statusCode: 403, message: 'failure' },
        { reason: 'client_version_refused', statusCode: 405, message: 'failure' },
      ] as const;
      for (const close of closes) {
        for (const pairedRow of [true, false]) {
          const t = setup('stopped', { phoneNumber: pairedRow ? account.phoneNumber : null });
          t.setCreds({ me: 'kept' });
          await t.runner.start();
          t.engine.last.emit({ type: 'close', ...close });
          await flush();
          t.timers.fireAll();
          await flush();
          expect({ close: close.statusCode, pairedRow, creds: t.getCreds() }).toEqual({ close: close.statusCode, pairedRow, creds: { me: 'kept' } });
          expect(t.row.phoneNumber).toBeUndefined();
        }
      }
    });

    it("bad_session (the network refused another engine's credential) logs the session out: wiped, a reason to scan again, no retry", async () => {
      const t = setup('stopped', { phoneNumber: account.phoneNumber });
      t.setCreds({ broken: true });
      await t.runner.start();
      t.engine.last.emit({ type: 'close', reason: 'bad_session', statusCode: null, message: 'not a simulator credential' });
      await flush();
      t.timers.fireAll();
      await flush();
      expect(t.getCreds()).toBeNull();
      expect(t.runner.currentStatus).toBe('logged_out');
      expect(t.row.lastReason).toBe('credentials_unusable: not a simulator credential; start the session and scan a new QR');
      expect(t.row).toMatchObject({ phoneNumber: null, desiredState: 'stopped' });
      expect(t.events.filter((e) => e.event === 'session.logged_out').map((e) => e.payload)).toEqual([{ reason: 'credentials_unusable' }]);
      expect(t.engine.connections).toHaveLength(1);
      expect(t.logs.filter((l) => (l.level as number) >= 40)).toEqual([expect.objectContaining({ msg: 'stored credentials unusable; logged out' })]);
    });

    it("a credential the engine refuses before connecting (another engine's, undecodable) logs out once, with no socket and no retry", async () => {
      const t = setup('stopped', { phoneNumber: account.phoneNumber });
      t.setCreds({ kind: 'sim-device' });
      t.engine.refuseCredentials = 'the stored credential is the sim engine\'s, this gateway runs baileys';
      await t.runner.start();
      await flush();
      t.timers.fireAll();
      await flush();
      expect(t.runner.currentStatus).toBe('logged_out');
      expect(t.row.lastReason).toBe("credentials_unusable: the stored credential is the sim engine's, this gateway runs baileys; start the session and scan a new QR");
      expect(t.getCreds()).toBeNull();
      expect(t.engine.connections).toHaveLength(0);
      expect(t.engine.attempts).toBe(1);
      expect(t.timers.pending).toHaveLength(0);
      expect(t.logs.filter((l) => (l.level as number) >= 40)).toHaveLength(1);
    });

    it('a pairing that never completed (401 before any open: a pairing code never entered) resets to a fresh pairing, reason pairing_expired', async () => {
      const t = setup('stopped', { reconnectMaxAttempts: 3 });
      await t.runner.start();
      t.engine.last.emit({ type: 'qr', qr: 'Q1' });
      await flush();
      await t.runner.requestPairingCode('15550001111');
      t.setCreds({ me: { id: '15550001111@s.whatsapp.net', name: '~' }, pairingCode: 'ABCD1234' });
      t.engine.last.emit({ type: 'close', reason: 'logged_out', statusCode: 401, message: 'Connection Failure' });
      await flush();
      expect(t.runner.currentStatus).toBe('starting');
      expect(t.row.lastReason).toBe('pairing_expired');
      expect(t.events.map((e) => e.event)).not.toContain('session.logged_out');
      expect(t.statuses().filter((s) => s === 'logged_out')).toHaveLength(0);
      // the half-made device is forgotten, so the new socket shows a new QR
      expect(t.getCreds()).toBeNull();
      expect(t.engine.connections).toHaveLength(2);
      t.engine.last.emit({ type: 'qr', qr: 'fresh' });
      await flush();
      expect(t.runner.currentStatus).toBe('scan_qr_code');
    });
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

  it('performs a session action only while working: 409 conflict before, naming the status, and nothing reaches the network', async () => {
    const t = setup();
    await t.runner.start();
    await expect(t.runner.perform('x' as never, {} as never)).rejects.toMatchObject({ code: 'conflict', details: { status: 'starting' } });
    expect(t.engine.last.performed).toEqual([]);
    t.engine.last.emit({ type: 'open', account });
    await flush();
    await expect(t.runner.perform('x' as never, { a: 1 } as never)).resolves.toEqual({ performed: 'x' });
    expect(t.engine.last.performed).toEqual([{ action: 'x', args: { a: 1 } }]);
  });

  it('a group the network created is returned even when storing it fails, and a retry does not create a second one', async () => {
    const t = setup('stopped', { groupStoreFails: true });
    await t.runner.start();
    t.engine.last.emit({ type: 'open', account });
    await flush();
    const first = await t.runner.createGroup('Team', ['15550002222@s.whatsapp.net', '15550003333@s.whatsapp.net']);
    expect(first.groupJid).toBe('1-2@g.us');
    const retry = await t.runner.createGroup('Team', ['15550003333@s.whatsapp.net', '15550002222@s.whatsapp.net']);
    expect(retry).toEqual(first);
    expect(t.engine.last.createdGroups).toEqual(['Team']);
    await t.runner.createGroup('Other team', []);
    expect(t.engine.last.createdGroups).toEqual(['Team', 'Other team']);
  });

  describe('chats and history sync', () => {
    const contact = '15559990000@s.whatsapp.net';
    const message = (id: string, over: Partial<InboundMessage> = {}): InboundMessage => ({ id, from: contact, chatJid: contact, text: id, timestamp: 5, fromMe: false, ...over });
    /** a chat store whose history writes wait until `release()` */
    const gatedChats = () => {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const applied: unknown[] = [];
      const store: ChatStore = {
        apply: async (_o, _s, facts) => {
          applied.push(facts);
          return { changes: facts.jid === contact ? { archived: true } : {} };
        },
        applyHistory: async (_o, _s, chats) => {
          await gate;
          return chats.length;
        },
      };
      return { store, applied, release: () => open() };
    };
    const working = async (syncHistory: SyncHistoryMode, chats: ChatStore) => {
      const t = build({ status: 'stopped', syncHistory, chats });
      await t.runner.start();
      expect(t.engine.last.options.syncHistory).toBe(syncHistory);
      t.engine.last.emit({ type: 'open', account });
      await flush();
      t.events.length = 0;
      return t;
    };

    it('stores a history batch beside the event queue: a live message is stored and announced while the batch waits', async () => {
      const chats = gatedChats();
      const t = await working('recent', chats.store);
      const history = t.engine.last.emit({ type: 'history', chats: [{ jid: contact, name: 'C', unreadCount: 1, archived: false, pinned: false, mutedUntil: null }], messages: [message('H1'), message('H2', { fromMe: true, from: account.jid })] });
      await flush();
      await t.engine.last.emit({ type: 'message', message: message('LIVE') });
      expect(t.events.map((e) => e.event)).toEqual(['message.received']);

      chats.release();
      await history;
      expect(t.events.map((e) => e.event)).toEqual(['message.received', 'history.synced']);
      expect(t.events[1].payload).toEqual({ chats: 1, messages: 2 });
      const stored = t.messages.rows.filter((r) => r.fromHistory);
      expect(stored.map((r) => [r.waMessageId, r.direction, r.status])).toEqual([['H1', 'in', 'received'], ['H2', 'out', 'sent']]);
    });

    it('holds at most a few batches in memory: one more is not taken, so the network keeps it', async () => {
      const chats = gatedChats();
      const t = await working('full', chats.store);
      const taken = Array.from({ length: MAX_PENDING_HISTORY_BATCHES }, (_, i) => t.engine.last.emit({ type: 'history', chats: [], messages: [message(`B${i}`)] }));
      await expect(t.engine.last.emit({ type: 'history', chats: [], messages: [message('OVER')] })).rejects.toBeInstanceOf(EventNotTakenError);
      chats.release();
      await Promise.all(taken);
      expect(t.events.filter((e) => e.event === 'history.synced')).toHaveLength(MAX_PENDING_HISTORY_BATCHES);
    });

    it('with syncHistory none, a batch is taken and nothing stored; a chat update is stored and announced when it changed something', async () => {
      const chats = gatedChats();
      const t = await working('none', chats.store);
      await t.engine.last.emit({ type: 'history', chats: [], messages: [message('H1')] });
      expect(t.messages.rows).toEqual([]);
      await t.engine.last.emit({ type: 'chat-update', chats: [{ jid: contact, archived: true }, { jid: '1@s.whatsapp.net', pinned: false }] });
      expect(chats.applied).toHaveLength(2);
      expect(t.events).toEqual([{ event: 'chat.update', payload: { jid: contact, changes: { archived: true } } }]);
    });
  });

  describe('inbound events', () => {
    const working = async (opts: { autoRead?: boolean } = {}) => {
      const t = build({ status: 'stopped', ...opts });
      await t.runner.start();
      t.engine.last.emit({ type: 'open', account });
      await flush();
      t.events.length = 0;
      return t;
    };
    const emit = async (t: ReturnType<typeof build>, event: EngineEvent) => {
      t.engine.last.emit(event);
      await flush();
      await flush();
    };
    const contact = '15559990000@s.whatsapp.net';
    const inbound = (over: Partial<InboundMessage> = {}): InboundMessage => ({ id: 'IN1', from: contact, chatJid: contact, text: 'hi', timestamp: 5, fromMe: false, ...over });

    it('stores an inbound message once, publishes message.received {message} once and marks it read', async () => {
      const t = await working();
      await emit(t, { type: 'message', message: inbound() });
      await emit(t, { type: 'message', message: inbound({ text: 're-delivered' }) });
      const received = t.events.filter((e) => e.event === 'message.received');
      expect(received).toHaveLength(1);
      expect(received[0].payload).toEqual({
        message: {
          id: expect.stringMatching(/^msg_/), sessionId: 'ses_1', organizationId: 'org_1', waMessageId: 'IN1', direction: 'in', chatJid: contact,
          from: contact, type: 'text', text: 'hi', media: null, location: null, contact: null, poll: null, quotedMessageId: null,
          status: 'received', error: null, createdAt: 1_000, updatedAt: 1_000, sentAt: null, editedAt: null, revokedAt: null, reactions: [], pollVotes: [], fromHistory: false,
          sendAt: null, campaignId: null,
        },
      });
      expect(t.messages.rows).toHaveLength(1);
      expect(t.engine.last.reads).toEqual([{ waMessageId: 'IN1', chatJid: contact, fromMe: false, participant: null }]);
    });

    it('does not mark read with autoRead off', async () => {
      const t = await working({ autoRead: false });
      await emit(t, { type: 'message', message: inbound() });
      expect(t.events.map((e) => e.event)).toEqual(['message.received']);
      expect(t.engine.last.reads).toEqual([]);
    });

    it('stores media metadata and the download handle, resolves a reply to our id, and reads group messages by participant', async () => {
      const t = await working();
      await emit(t, { type: 'message', message: inbound() });
      const media = { mimetype: 'image/jpeg', size: 1234, filename: null, caption: 'cat', ref: { engine: 'sim' as const, mediaId: 'med_1' } };
      await emit(t, { type: 'message', message: inbound({ id: 'IN2', chatJid: '1-2@g.us', type: 'image', text: null, media, quotedWaMessageId: 'IN1' }) });
      const [, second] = t.events.filter((e) => e.event === 'message.received');
      const quotedId = t.messages.rows[0].id;
      expect(second.payload.message).toMatchObject({ type: 'image', chatJid: '1-2@g.us', media: { mimetype: 'image/jpeg', size: 1234, filename: null, caption: 'cat' }, quotedMessageId: quotedId });
      expect(t.messages.rows[1].mediaRef).toEqual({ engine: 'sim', mediaId: 'med_1' });
      expect(t.engine.last.reads[1]).toEqual({ waMessageId: 'IN2', chatJid: '1-2@g.us', fromMe: false, participant: contact });
    });

    it('logs a message sent from the phone as out/sent without an event, and our own echo not twice', async () => {
      const t = await working();
      t.messages.queue({ id: 'msg_01', waMessageId: 'OURS', chatJid: contact });
      await t.runner.drainQueued();
      t.events.length = 0;
      await emit(t, { type: 'message', message: inbound({ id: 'PHONE', from: account.jid, fromMe: true, text: 'from my phone', timestamp: 7 }) });
      await emit(t, { type: 'message', message: inbound({ id: 'OURS', from: account.jid, fromMe: true }) });
      expect(t.events).toEqual([]);
      expect(t.messages.rows.map((r) => [r.waMessageId, r.direction, r.status])).toEqual([['OURS', 'out', 'sent'], ['PHONE', 'out', 'sent']]);
    });

    it('receipts become message.ack for our messages', async () => {
      const t = await working();
      t.messages.queue({ id: 'msg_01', waMessageId: 'OUT1', chatJid: contact });
      await t.runner.drainQueued();
      await emit(t, { type: 'receipt', waMessageId: 'OUT1', chatJid: contact, status: 'delivered' });
      expect(t.events.filter((e) => e.event === 'message.ack').map((e) => e.payload)).toEqual([{ messageId: 'msg_01', waMessageId: 'OUT1', chatJid: contact, status: 'delivered' }]);
    });

    it('reactions and poll votes name our message ids; presence, calls and group changes are published as the contract shows', async () => {
      const t = await working();
      t.messages.queue({ id: 'msg_01', waMessageId: 'POLL', chatJid: '1-2@g.us', type: 'poll', text: null, poll: { name: 'Lunch?', options: ['yes', 'no'], selectableCount: 1 } });
      await t.runner.drainQueued();
      t.events.length = 0;
      await emit(t, { type: 'reaction', waMessageId: 'POLL', chatJid: '1-2@g.us', from: contact, emoji: '👍', fromMe: false });
      await emit(t, { type: 'reaction', waMessageId: 'NOT-OURS', chatJid: contact, from: contact, emoji: '', fromMe: false });
      await emit(t, { type: 'poll-vote', pollWaMessageId: 'POLL', chatJid: '1-2@g.us', voter: contact, selectedOptions: ['yes'] });
      await emit(t, { type: 'presence', chatJid: contact, jid: contact, presence: 'composing' });
      await emit(t, { type: 'call', callId: 'C1', from: contact, isVideo: true, isGroup: false });
      await emit(t, { type: 'group-update', groupJid: '1-2@g.us', changes: { subject: 'New name', isLocked: true } });
      await emit(t, { type: 'group-participants', groupJid: '1-2@g.us', action: 'add', participants: [contact, '15550007777@s.whatsapp.net'] });
      await emit(t, { type: 'group-participants', groupJid: '1-2@g.us', action: 'promote', participants: [contact], actor: '15550009999@s.whatsapp.net' });
      expect(t.events).toEqual([
        { event: 'message.reaction', payload: { messageId: 'msg_01', waMessageId: 'POLL', chatJid: '1-2@g.us', from: contact, emoji: '👍' } },
        { event: 'message.reaction', payload: { messageId: null, waMessageId: 'NOT-OURS', chatJid: contact, from: contact, emoji: '' } },
        { event: 'poll.vote', payload: { pollMessageId: 'msg_01', chatJid: '1-2@g.us', voter: contact, selectedOptions: ['yes'] } },
        { event: 'presence.update', payload: { chatJid: contact, jid: contact, presence: 'composing' } },
        { event: 'call.incoming', payload: { callId: 'C1', from: contact, isVideo: true, isGroup: false, rejected: false } },
        // the actor when the network named one, null when it did not
        { event: 'group.update', payload: { groupJid: '1-2@g.us', changes: { subject: 'New name', isLocked: true }, actor: null } },
        { event: 'group.participants', payload: { groupJid: '1-2@g.us', action: 'add', participants: [contact, '15550007777@s.whatsapp.net'], actor: null } },
        { event: 'group.participants', payload: { groupJid: '1-2@g.us', action: 'promote', participants: [contact], actor: '15550009999@s.whatsapp.net' } },
      ]);
      expect(t.groupChanges).toEqual([
        { jid: '1-2@g.us', changes: { subject: 'New name', isLocked: true } },
        { jid: '1-2@g.us', added: [contact, '15550007777@s.whatsapp.net'] },
        { jid: '1-2@g.us', admin: 'admin', members: [contact] },
      ]);
      // what a conversation shows: the reaction and the vote kept on the poll's row
      expect(t.messages.rows.find((r) => r.id === 'msg_01')).toMatchObject({ reactions: [{ from: contact, emoji: '👍' }], pollVotes: [{ voter: contact, options: ['yes'] }] });
    });

    it('member changes and whole-group refreshes hand the network form to the store; the events stay as they were', async () => {
      const t = await working();
      const lid = { id: '11111@lid', phoneNumber: contact };
      await emit(t, { type: 'group-participants', groupJid: '1-2@g.us', action: 'add', participants: [contact], network: [{ ...lid, admin: null }] });
      await emit(t, { type: 'group-participants', groupJid: '1-2@g.us', action: 'promote', participants: [contact], network: [lid] });
      await emit(t, { type: 'group-participants', groupJid: '1-2@g.us', action: 'demote', participants: [contact], network: [lid] });
      await emit(t, { type: 'group-participants', groupJid: '1-2@g.us', action: 'remove', participants: [contact], network: [lid] });
      const refreshed = { addressingMode: 'lid' as const, participants: [{ id: '99@lid', phoneNumber: '15550009999@s.whatsapp.net' }] };
      await emit(t, { type: 'group-update', groupJid: '1-2@g.us', changes: { subject: 'Team' }, network: refreshed });
      await emit(t, { type: 'group-update', groupJid: '1-2@g.us', changes: {}, network: refreshed });
      expect(t.groupChanges).toEqual([
        { jid: '1-2@g.us', added: [contact], network: [{ ...lid, admin: null }] },
        { jid: '1-2@g.us', admin: 'admin', members: [contact], network: [lid] },
        { jid: '1-2@g.us', admin: null, members: [contact], network: [lid] },
        { jid: '1-2@g.us', removed: [contact], network: [lid] },
        { jid: '1-2@g.us', changes: { subject: 'Team' }, network: refreshed },
        { jid: '1-2@g.us', changes: {}, network: refreshed },
      ]);
      expect(t.events).toEqual([
        ...(['add', 'promote', 'demote', 'remove'] as const).map((action) => ({ event: 'group.participants', payload: { groupJid: '1-2@g.us', action, participants: [contact], actor: null } })),
        { event: 'group.update', payload: { groupJid: '1-2@g.us', changes: { subject: 'Team' }, actor: null } },
      ]);
    });

    it('group metadata the engine fetched is stored and not announced', async () => {
      const t = await working();
      const network = { addressingMode: 'lid' as const, participants: [{ id: '11111@lid', phoneNumber: contact, admin: 'superadmin' as const }] };
      await emit(t, { type: 'group-metadata', group: { groupJid: '7-8@g.us', subject: 'Known', description: '', ownerJid: contact, participants: [contact], isAnnounce: false, isLocked: false, network } });
      expect(t.groups).toEqual([expect.objectContaining({ groupJid: '7-8@g.us', participants: [contact], network })]);
      expect(t.events).toEqual([]);
    });

    it('sends what was queued while disconnected once the session is working, and serves lookups from the log and the stored groups', async () => {
      const t = build({ status: 'stopped' });
      t.messages.queue({ id: 'msg_01', waMessageId: 'OUT1' });
      await t.runner.start();
      await t.runner.drainQueued();
      expect(t.engine.last.sent).toHaveLength(0);
      t.engine.last.emit({ type: 'open', account });
      await flush();
      await t.runner.drainQueued();
      expect(t.engine.last.sent.map((m) => m.waMessageId)).toEqual(['OUT1']);
      const lookups = t.engine.last.options.lookups!;
      await t.messages.insert({ id: 'msg_02', organizationId: 'org_1', sessionId: 'ses_1', waMessageId: 'IN9', direction: 'in', chatJid: '1@s.whatsapp.net', from: '1@s.whatsapp.net', type: 'text', status: 'received', raw: Buffer.from('raw') });
      expect(await lookups.message('1@s.whatsapp.net', 'IN9')).toEqual(Buffer.from('raw'));
      expect(await lookups.group('1-2@g.us')).toBeNull();
      await t.runner.createGroup('Team', ['15550002222@s.whatsapp.net']);
      await emit(t, { type: 'group-participants', groupJid: '1-2@g.us', action: 'add', participants: ['15550003333@s.whatsapp.net'] });
      expect((await lookups.group('1-2@g.us'))?.participants).toEqual(['15550002222@s.whatsapp.net', '15550003333@s.whatsapp.net']);
    });
  });

  describe('an inbound event the gateway cannot store now', () => {
    const contact = '15559990000@s.whatsapp.net';
    const message = (id: string): EngineEvent => ({ type: 'message', message: { id, from: contact, chatJid: contact, text: id, timestamp: 5, fromMe: false } });
    const working = async () => {
      const db = { down: false };
      const t = build({ status: 'stopped', db });
      await t.runner.start();
      t.engine.last.emit({ type: 'open', account });
      await flush();
      t.events.length = 0;
      return { t, db };
    };
    /** the engine's view of one event: settled how, and when */
    const watch = (taken: Promise<void>) => {
      const seen: { outcome: 'pending' | 'taken' | 'refused'; err?: unknown } = { outcome: 'pending' };
      taken.then(
        () => (seen.outcome = 'taken'),
        (err) => Object.assign(seen, { outcome: 'refused', err }),
      );
      return seen;
    };
    const retryTimers = (t: ReturnType<typeof build>) => t.timers.pending.map((p) => p.ms);
    const settle = async () => {
      for (let i = 0; i < 5; i++) await flush();
    };

    it('is retried in place with capped backoff, never acknowledged meanwhile, and the events behind it wait (order kept)', async () => {
      const { t, db } = await working();
      db.down = true;
      const first = watch(t.engine.last.emit(message('A')));
      const second = watch(t.engine.last.emit(message('B')));
      await settle();
      const delays: number[] = [];
      for (let i = 0; i < 7; i++) {
        expect(first.outcome).toBe('pending');
        expect(second.outcome).toBe('pending');
        delays.push(...retryTimers(t));
        t.timers.fireAll();
        await settle();
      }
      expect(delays).toEqual([200, 400, 800, 1600, 3200, INBOUND_RETRY_MAX_MS, INBOUND_RETRY_MAX_MS]);
      expect(t.messages.rows).toHaveLength(0);
      db.down = false;
      t.timers.fireAll();
      await settle();
      expect(first.outcome).toBe('taken');
      expect(second.outcome).toBe('taken');
      expect(t.messages.rows.map((r) => r.waMessageId)).toEqual(['A', 'B']);
      expect(t.events.filter((e) => e.event === 'message.received')).toHaveLength(2);
      expect(t.logs).toContainEqual(expect.objectContaining({ level: 40, msg: 'storing an inbound event failed; retrying it in place', attempt: 1 }));
    });

    it('is given back un-acknowledged when its socket is handed over mid-retry, and the handoff does not wait for the database', async () => {
      const { t, db } = await working();
      db.down = true;
      const first = watch(t.engine.last.emit(message('A')));
      const second = watch(t.engine.last.emit(message('B')));
      await settle();
      expect(retryTimers(t)).toEqual([200]);
      // the gateway hands the session over (drain, move): no timer is fired, the database stays down
      await t.runner.shutdown();
      await settle();
      expect(first).toMatchObject({ outcome: 'refused', err: expect.any(EventNotTakenError) });
      expect(second).toMatchObject({ outcome: 'refused', err: expect.any(EventNotTakenError) });
      expect(t.engine.last.closed).toBe(true);
      // released only after the socket closed and nothing of it is in flight
      expect(t.leaseLog[t.leaseLog.length - 1]).toBe('release');
      expect(t.messages.rows).toHaveLength(0);
      expect(t.timers.pending).toHaveLength(0);
    });

    it('is given back when the socket is replaced (restart) or the lease is lost while it is retried', async () => {
      const { t, db } = await working();
      db.down = true;
      const first = watch(t.engine.last.emit(message('A')));
      await settle();
      const restarted = t.runner.restart();
      await settle();
      expect(first).toMatchObject({ outcome: 'refused', err: expect.any(EventNotTakenError) });
      db.down = false;
      await restarted;
      // the new socket's copy (the network's redelivery) is stored once
      t.engine.last.emit({ type: 'open', account });
      await settle();
      const redelivered = watch(t.engine.last.emit(message('A')));
      await settle();
      expect(redelivered.outcome).toBe('taken');
      expect(t.messages.rows.map((r) => r.waMessageId)).toEqual(['A']);

      db.down = true;
      const second = watch(t.engine.last.emit(message('C')));
      await settle();
      await t.runner.leaseLost();
      await settle();
      expect(second).toMatchObject({ outcome: 'refused', err: expect.any(EventNotTakenError) });
    });

    it('gives the event back when the lease renewals lapse while it is retried', async () => {
      let trusted = true;
      const db = { down: false };
      const t = build({ status: 'stopped', db, leasesTrusted: () => trusted });
      await t.runner.start();
      t.engine.last.emit({ type: 'open', account });
      await settle();
      db.down = true;
      const first = watch(t.engine.last.emit(message('A')));
      await settle();
      trusted = false;
      t.timers.fireAll();
      await settle();
      expect(first).toMatchObject({ outcome: 'refused', err: expect.any(EventNotTakenError) });
      expect(t.messages.rows).toHaveLength(0);
    });

    it('a status write or an event that fails while the database is down does not wedge the runner: it still reconnects, and the row is written once it can be', async () => {
      const { t, db } = await working();
      db.down = true;
      t.engine.last.emit({ type: 'close', reason: 'transient', statusCode: 408, message: 'lost' });
      await settle();
      expect(t.runner.currentStatus).toBe('reconnecting');
      // the reconnect timer is set although neither the row nor the event could be written
      expect(t.timers.pending.length).toBeGreaterThan(0);
      expect(t.logs).toContainEqual(expect.objectContaining({ msg: 'writing the session row failed; kept for the next write' }));
      db.down = false;
      t.timers.fireAll();
      await settle();
      expect(t.engine.connections).toHaveLength(2);
      expect(t.row).toMatchObject({ status: 'reconnecting', lastReason: expect.stringMatching(/^connection_lost: lost \(close code 408\)/) });
      t.engine.last.emit({ type: 'open', account });
      await settle();
      expect(t.row).toMatchObject({ status: 'working', lastReason: 'connected' });

      // a stop during the outage: its `stopped` lands once the database is back
      db.down = true;
      await t.runner.stop();
      expect(t.runner.currentStatus).toBe('stopped');
      db.down = false;
      t.timers.fireAll();
      await settle();
      expect(t.row).toMatchObject({ status: 'stopped', lastReason: 'stop_requested', desiredState: 'stopped' });
    });
  });
});
