import pino from 'pino';
import type { SessionStatus } from '@app/contracts';
import type { ConnectOptions, EngineConnection, SessionEngine } from '../engine/engine.interface';
import { MemoryMessageStore } from '../../../../test/fakes/memory-message-store';
import { SessionHost } from './session-host';
import type { SessionLeases } from './session-ports';
import type { SessionRecords } from '../store-ports';

/** The network side: which sessions have an open socket from this gateway. */
class FakeEngine implements SessionEngine {
  forget(): void {}
  readonly name = 'sim' as const;
  readonly open = new Set<string>();
  async connect(options: ConnectOptions): Promise<EngineConnection> {
    this.open.add(options.sessionId);
    const unsupported = async (): Promise<never> => {
      throw new Error('not used here');
    };
    return {
      close: async () => void this.open.delete(options.sessionId),
      logout: async () => void this.open.delete(options.sessionId),
      requestPairingCode: unsupported,
      createGroup: unsupported,
      send: unsupported,
      sendPresence: async () => undefined,
      markRead: async () => undefined,
      perform: unsupported,
    };
  }
}

function setup() {
  const me = 'gw-a';
  /** the sessions table: session → gateway it is placed on */
  const placedOn = new Map<string, string>([
    ['ses_1', me],
    ['ses_2', me],
    ['ses_3', 'gw-b'],
  ]);
  /** the rest of each row: what the runners write */
  const rows = new Map<string, { status: SessionStatus; desiredState: 'running' | 'stopped' }>();
  const row = (id: string) => rows.get(id) ?? { status: 'working' as const, desiredState: 'running' as const };
  /** a test can hold the converge pass right after its read of the table */
  let tableRead: { listed: () => void; release: Promise<void> } = { listed: () => undefined, release: Promise.resolve() };
  const engine = new FakeEngine();
  const leaseHolders = new Map<string, string>();
  const records: SessionRecords = {
    find: async (id) => ({ id, organizationId: 'org_1', ...row(id), phoneNumber: null, autoRead: false, presenceTyping: false }),
    update: async (id, patch) => {
      const { status, desiredState } = { ...row(id), ...patch };
      rows.set(id, { status, desiredState });
      return true;
    },
    takeLeaseToken: async () => 1,
    saveGroup: async () => undefined,
    updateGroup: async () => undefined,
    addGroupParticipants: async () => undefined,
    removeGroupParticipants: async () => undefined,
    setGroupAdmins: async () => undefined,
    findGroup: async () => null,
    resumable: async (gw) => {
      const listed = [...placedOn]
        .filter(([id, g]) => g === gw && row(id).desiredState === 'running' && !['stopped', 'failed', 'logged_out'].includes(row(id).status))
        .map(([id]) => ({ id, organizationId: 'org_1', status: row(id).status }));
      tableRead.listed();
      await tableRead.release;
      return listed;
    },
    notPlacedOn: async (ids, gw) => ids.filter((id) => placedOn.get(id) !== gw),
  };
  const leases: SessionLeases = {
    acquire: async (id, takeToken) => {
      const holder = leaseHolders.get(id);
      if (holder && holder !== me) return null;
      leaseHolders.set(id, me);
      return takeToken();
    },
    release: async (id) => void (leaseHolders.get(id) === me && leaseHolders.delete(id)),
  };
  const logger = pino({ level: 'silent' });
  const host = new SessionHost(
    me,
    {
      engine,
      authState: (sessionId) => ({ sessionId, readCreds: async () => null, writeCreds: async () => undefined, readKeys: async () => ({}), writeKeys: async () => undefined, clear: async () => undefined }),
      records,
      events: { publish: async () => undefined, transact: async (work) => work(undefined, () => undefined), withOutbox: async (_events, write) => write(undefined), withOutboxEach: async (_events, write) => write(undefined) },
      leases,
      qr: { show: async () => undefined, clear: async () => undefined },
      settings: { qrMaxRetries: 3, qrTtlMs: 20_000, reconnectMaxAttempts: 3, reconnectBaseDelayMs: 100, reconnectMaxDelayMs: 1000 },
      logger,
      messages: new MemoryMessageStore(),
      messaging: { ttlMs: 60_000, typingMsPerChar: 40, typingMinMs: 500, typingMaxMs: 3000 },
    },
    logger,
  );
  return { host, engine, placedOn, leaseHolders, rows, holdTableRead };

  /** Holds the next pass once it has read the table: resolves when it has, with the function that lets it go on. */
  function holdTableRead(): Promise<() => void> {
    let release: () => void = () => undefined;
    return new Promise((listed) => {
      tableRead = { listed: () => listed(release), release: new Promise<void>((r) => (release = r)) };
    });
  }
}

describe('SessionHost converge (adopt + hand off)', () => {
  it('starts the sessions placed on it that it does not hold, and only those', async () => {
    const t = setup();
    expect(await t.host.converge()).toEqual({ started: 2, handedOff: 0 });
    expect([...t.engine.open].sort()).toEqual(['ses_1', 'ses_2']);
    expect(t.host.activeSessionIds().sort()).toEqual(['ses_1', 'ses_2']);
    // a second pass changes nothing
    expect(await t.host.converge()).toEqual({ started: 0, handedOff: 0 });
  });

  it('hands off a session whose row names another gateway now: socket closed, lease released for the new holder', async () => {
    const t = setup();
    await t.host.converge();
    t.placedOn.set('ses_2', 'gw-b');
    expect(await t.host.converge()).toEqual({ started: 0, handedOff: 1 });
    expect([...t.engine.open]).toEqual(['ses_1']);
    expect(t.leaseHolders.has('ses_2')).toBe(false);
    expect(t.host.activeSessionIds()).toEqual(['ses_1']);
  });

  it('adopts a session moved onto it once the old holder has let the lease go', async () => {
    const t = setup();
    t.leaseHolders.set('ses_3', 'gw-b');
    t.placedOn.set('ses_3', 'gw-a');
    await t.host.converge();
    // the previous holder still has the lease: no second socket for that device
    expect(t.engine.open.has('ses_3')).toBe(false);
    // the old holder hands off: the waiting runner takes the lease on its next retry
    t.leaseHolders.delete('ses_3');
    while (!t.engine.open.has('ses_3')) await new Promise((r) => setTimeout(r, 20));
    expect(t.leaseHolders.get('ses_3')).toBe('gw-a');
    await t.host.shutdown();
  });

  it('does not start a session whose stop completed after the pass listed it (issue 20)', async () => {
    const t = setup();
    const held = t.holdTableRead();
    const pass = t.host.converge();
    // the pass has listed ses_1 and ses_2 as placed here and wanted running…
    const goOn = await held;
    // …then the owner's stop is answered before the pass gets to ses_1
    const stopped = await t.host.execute({ name: 'session.stop', args: { sessionId: 'ses_1' }, deadline: Date.now() + 10_000 });
    expect(stopped).toEqual({ sessionId: 'ses_1', status: 'stopped' });
    goOn();
    expect(await pass).toEqual({ started: 1, handedOff: 0 });
    // the stop stands: no socket, the row still stopped and wanted stopped, the runner stopped
    expect([...t.engine.open]).toEqual(['ses_2']);
    expect(t.rows.get('ses_1')).toEqual({ status: 'stopped', desiredState: 'stopped' });
    expect(t.host.activeSessionIds()).toEqual(['ses_2']);
    // and later passes leave it stopped too
    expect(await t.host.converge()).toEqual({ started: 0, handedOff: 0 });
    expect(t.engine.open.has('ses_1')).toBe(false);
  });

  it('closes every socket when the leases are no longer trusted, keeping them for a later pass', async () => {
    const t = setup();
    await t.host.converge();
    await t.host.closeAllUnfenced();
    expect(t.engine.open.size).toBe(0);
    expect(await t.host.converge()).toEqual({ started: 2, handedOff: 0 });
  });
});
