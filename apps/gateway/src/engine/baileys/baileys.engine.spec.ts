import { EventEmitter } from 'node:events';
import pino from 'pino';
import type {
  AuthenticationCreds,
  BaileysEventMap,
  ConnectionState,
  Contact,
  GroupMetadata,
  SignalKeyStore,
  UserFacingSocketConfig,
  WAMessage,
  WASocket,
} from '@whiskeysockets/baileys';
import type { AuthStateStore, EngineConnection, EngineEvent } from '../engine.interface';
import type { BaileysRuntime } from './baileys-runtime';
import { BaileysEngine, EngineConnectionClosedError } from './baileys.engine';

/** A Boom error as Baileys closes sockets with it: the status code sits in output.statusCode. */
function boom(statusCode: number, message = `boom ${statusCode}`): Error {
  return Object.assign(new Error(message), { isBoom: true, output: { statusCode } });
}

/**
 * Stands in for Baileys' socket: typed against Baileys' own event map, and closing the way Baileys' end() does
 * (one connection.update with connection 'close' and lastDisconnect, then no more events).
 */
class FakeSocket {
  readonly emitter = new EventEmitter();
  readonly ev = {
    on: <K extends keyof BaileysEventMap>(event: K, listener: (data: BaileysEventMap[K]) => void) => {
      this.emitter.on(event, listener);
    },
    off: <K extends keyof BaileysEventMap>(event: K, listener: (data: BaileysEventMap[K]) => void) => {
      this.emitter.off(event, listener);
    },
  };
  user: Contact | undefined = undefined;
  ended = false;
  endCalls = 0;
  groupCreate = jest.fn(async (subject: string, participants: string[]): Promise<GroupMetadata> => ({
    id: '120363000000000001@g.us',
    subject,
    desc: 'the description',
    owner: '98765432109876@lid',
    ownerPn: '491701234567@s.whatsapp.net',
    participants: participants.map((id) => ({ id })),
    announce: true,
    restrict: false,
  }));
  sendMessage = jest.fn(async (jid: string): Promise<WAMessage> => ({ key: { id: '3EB0ABCDEF', remoteJid: jid, fromMe: true } }) as WAMessage);
  requestPairingCode = jest.fn(async (): Promise<string> => 'ABCD1234');
  logout = jest.fn(async () => {
    void this.end(boom(401, 'Intentional Logout'));
  });

  constructor(readonly config: UserFacingSocketConfig) {}

  emit<K extends keyof BaileysEventMap>(event: K, data: BaileysEventMap[K]): void {
    this.emitter.emit(event, data);
  }

  update(update: Partial<ConnectionState>): void {
    this.emit('connection.update', update);
  }

  async end(error: Error | undefined): Promise<void> {
    this.endCalls += 1;
    if (this.ended) return;
    this.ended = true;
    await Promise.resolve();
    this.update({ connection: 'close', lastDisconnect: { error, date: new Date() } });
    this.emitter.removeAllListeners();
  }
}

function fakeCreds(overrides: Partial<AuthenticationCreds> = {}): AuthenticationCreds {
  return { registered: false, advSecretKey: 'fresh', ...overrides } as AuthenticationCreds;
}

class MemoryAuthState implements AuthStateStore {
  readonly sessionId = 'ses_test';
  creds: unknown = null;
  keys = new Map<string, unknown>();
  credsWrites: unknown[] = [];
  /** lets a test hold creds writes open to observe ordering */
  credsWriteGate: Promise<void> = Promise.resolve();
  async readCreds<T>() {
    return this.creds as T | null;
  }
  async writeCreds(creds: unknown) {
    await this.credsWriteGate;
    const snapshot = JSON.parse(JSON.stringify(creds));
    this.credsWrites.push(snapshot);
    this.creds = snapshot;
  }
  async readKeys<T>(category: string, ids: string[]) {
    const out: Record<string, T> = {};
    for (const id of ids) if (this.keys.has(`${category}/${id}`)) out[id] = this.keys.get(`${category}/${id}`) as T;
    return out;
  }
  async writeKeys(data: Record<string, Record<string, unknown>>) {
    for (const [category, items] of Object.entries(data)) {
      for (const [id, value] of Object.entries(items)) {
        if (value === null) this.keys.delete(`${category}/${id}`);
        else this.keys.set(`${category}/${id}`, value);
      }
    }
  }
  async clear() {
    this.creds = null;
    this.keys.clear();
  }
}

interface Harness {
  engine: BaileysEngine;
  sockets: FakeSocket[];
  events: EngineEvent[];
  auth: MemoryAuthState;
  conn: EngineConnection;
  socket: FakeSocket;
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

async function harness(options: { creds?: unknown; onEvent?: (e: EngineEvent) => void } = {}): Promise<Harness> {
  const sockets: FakeSocket[] = [];
  const events: EngineEvent[] = [];
  const auth = new MemoryAuthState();
  auth.creds = options.creds ?? null;
  const runtime: BaileysRuntime = {
    makeWASocket: () => {
      throw new Error('the real makeWASocket must not be used when makeSocket is given');
    },
    initAuthCreds: () => fakeCreds(),
    makeCacheableSignalKeyStore: (store: SignalKeyStore) => store,
    appStateSyncKeyFromObject: (value: object) => ({ ...value, rebuilt: true }) as never,
  };
  const engine = new BaileysEngine({
    runtime,
    connectTimeoutMs: 1000,
    makeSocket: (config) => {
      const socket = new FakeSocket(config);
      sockets.push(socket);
      return socket as unknown as WASocket;
    },
  });
  const conn = await engine.connect({
    sessionId: 'ses_test',
    auth,
    logger: pino({ level: 'silent' }),
    onEvent: (event) => {
      events.push(event);
      options.onEvent?.(event);
    },
  });
  return { engine, sockets, events, auth, conn, socket: sockets[0] };
}

describe('BaileysEngine', () => {
  it('starts from fresh creds when none are stored, and from the stored creds otherwise', async () => {
    const fresh = await harness();
    expect(fresh.socket.config.auth.creds).toMatchObject({ advSecretKey: 'fresh' });
    const resumed = await harness({ creds: fakeCreds({ advSecretKey: 'stored', registered: true }) });
    expect(resumed.socket.config.auth.creds).toMatchObject({ advSecretKey: 'stored', registered: true });
  });

  it('passes its options to the socket and keeps the phone the one that is online', async () => {
    const sockets: FakeSocket[] = [];
    const engine = new BaileysEngine({
      waWebSocketUrl: 'ws://127.0.0.1:9/ws/chat',
      browser: ['Gateway', 'Chrome', '1.0'],
      connectTimeoutMs: 1234,
      runtime: { initAuthCreds: () => fakeCreds(), makeCacheableSignalKeyStore: (s: SignalKeyStore) => s } as unknown as BaileysRuntime,
      makeSocket: (config) => {
        sockets.push(new FakeSocket(config));
        return sockets[0] as unknown as WASocket;
      },
    });
    await engine.connect({ sessionId: 's', auth: new MemoryAuthState(), logger: pino({ level: 'info' }), onEvent: () => undefined });
    expect(sockets[0].config).toMatchObject({
      waWebSocketUrl: 'ws://127.0.0.1:9/ws/chat',
      browser: ['Gateway', 'Chrome', '1.0'],
      connectTimeoutMs: 1234,
      markOnlineOnConnect: false,
    });
    // Baileys is chatty at info; it gets warn at most
    expect(sockets[0].config.logger!.level).toBe('warn');
  });

  it('emits every QR the network rotates', async () => {
    const t = await harness();
    t.socket.update({ connection: 'connecting' });
    t.socket.update({ qr: '2@first' });
    t.socket.update({ qr: '2@second' });
    expect(t.events).toEqual([
      { type: 'qr', qr: '2@first' },
      { type: 'qr', qr: '2@second' },
    ]);
  });

  it('emits open with the account normalized: device part stripped, lid, phone digits', async () => {
    const t = await harness();
    t.socket.user = { id: '491701234567:12@s.whatsapp.net', lid: '98765432109876:12@lid', name: 'Phone' };
    t.socket.update({ connection: 'open' });
    expect(t.events).toEqual([
      { type: 'open', account: { jid: '491701234567@s.whatsapp.net', lid: '98765432109876@lid', phoneNumber: '491701234567' } },
    ]);
  });

  it('takes the number from phoneNumber when WhatsApp names the account by its LID, and lid null when unknown', async () => {
    const byLid = await harness();
    byLid.socket.user = { id: '98765432109876:3@lid', phoneNumber: '15550001111:3@s.whatsapp.net' };
    byLid.socket.update({ connection: 'open' });
    expect(byLid.events[0]).toEqual({
      type: 'open',
      account: { jid: '15550001111@s.whatsapp.net', lid: '98765432109876@lid', phoneNumber: '15550001111' },
    });
    const noLid = await harness();
    noLid.socket.user = { id: '15550001111@s.whatsapp.net' };
    noLid.socket.update({ connection: 'open' });
    expect(noLid.events[0]).toMatchObject({ account: { jid: '15550001111@s.whatsapp.net', lid: null, phoneNumber: '15550001111' } });
  });

  it.each([
    [515, 'restart_required'],
    [401, 'logged_out'],
    [440, 'replaced'],
    [500, 'bad_session'],
    [408, 'transient'],
    [428, 'transient'],
    [503, 'transient'],
    [403, 'transient'],
    [499, 'transient'],
  ])('maps a close with status %i to %s', async (statusCode, reason) => {
    const t = await harness();
    t.socket.update({ connection: 'close', lastDisconnect: { error: boom(statusCode), date: new Date() } });
    await flush();
    expect(t.events).toEqual([{ type: 'close', reason, statusCode, message: `boom ${statusCode}` }]);
  });

  it('maps a close without a status code (plain network error) to transient with statusCode null', async () => {
    const t = await harness();
    t.socket.update({ connection: 'close', lastDisconnect: { error: new Error('ECONNRESET'), date: new Date() } });
    await flush();
    expect(t.events).toEqual([{ type: 'close', reason: 'transient', statusCode: null, message: 'ECONNRESET' }]);
  });

  it('reports one close only, and ignores events after it', async () => {
    const t = await harness();
    t.socket.update({ connection: 'close', lastDisconnect: { error: boom(428), date: new Date() } });
    t.socket.update({ connection: 'close', lastDisconnect: { error: boom(401), date: new Date() } });
    t.socket.update({ qr: 'late' });
    await flush();
    expect(t.events.map((e) => e.type)).toEqual(['close']);
  });

  it('persists creds on every creds.update, merged and in order', async () => {
    const t = await harness();
    t.socket.emit('creds.update', { me: { id: '491701234567:1@s.whatsapp.net' } });
    t.socket.emit('creds.update', { registered: true });
    await flush();
    expect(t.auth.credsWrites).toEqual([
      expect.objectContaining({ advSecretKey: 'fresh', me: { id: '491701234567:1@s.whatsapp.net' } }),
      expect.objectContaining({ advSecretKey: 'fresh', me: { id: '491701234567:1@s.whatsapp.net' }, registered: true }),
    ]);
  });

  it('reports a close only after pending creds writes, so the reconnect after pairing reads the paired creds', async () => {
    const t = await harness();
    let release!: () => void;
    t.auth.credsWriteGate = new Promise((resolve) => (release = resolve));
    t.socket.emit('creds.update', { registered: true });
    t.socket.update({ connection: 'close', lastDisconnect: { error: boom(515), date: new Date() } });
    await flush();
    expect(t.events).toEqual([]);
    release();
    await flush();
    expect(t.events).toEqual([{ type: 'close', reason: 'restart_required', statusCode: 515, message: 'boom 515' }]);
    expect(t.auth.creds).toMatchObject({ registered: true });
  });

  it('keeps a failing creds write from escaping as an unhandled rejection', async () => {
    const t = await harness();
    t.auth.writeCreds = async () => {
      throw new Error('db down');
    };
    t.socket.emit('creds.update', { registered: true });
    await flush();
    await t.conn.close();
    expect(t.events).toEqual([expect.objectContaining({ type: 'close', reason: 'closed_by_us' })]);
  });

  it('reads and writes signal keys through the auth-state store, rebuilding app-state keys', async () => {
    const t = await harness();
    const keys = t.socket.config.auth.keys;
    await keys.set({ 'pre-key': { '1': { public: new Uint8Array([1]), private: new Uint8Array([2]) } }, session: { a: null } });
    expect(await keys.get('pre-key', ['1', '2'])).toEqual({ '1': { public: new Uint8Array([1]), private: new Uint8Array([2]) } });
    await keys.set({ 'app-state-sync-key': { k: { keyData: new Uint8Array([9]) } } });
    expect(await keys.get('app-state-sync-key', ['k'])).toEqual({ k: { keyData: new Uint8Array([9]), rebuilt: true } });
  });

  it('maps inbound notify messages to message events and leaves out history, status and protocol stanzas', async () => {
    const t = await harness();
    t.socket.user = { id: '491701234567:2@s.whatsapp.net' };
    const messages = [
      { key: { id: 'A1', remoteJid: '15550001111@s.whatsapp.net', fromMe: false }, message: { conversation: 'hello' }, messageTimestamp: 1_700_000_000 },
      {
        key: { id: 'A2', remoteJid: '1203630001@g.us', participant: '15550002222@s.whatsapp.net', fromMe: false },
        message: { extendedTextMessage: { text: 'in a group' } },
        messageTimestamp: 1_700_000_001,
      },
      {
        key: { id: 'A3', remoteJid: '98765@lid', remoteJidAlt: '15550003333@s.whatsapp.net', fromMe: false },
        message: { ephemeralMessage: { message: { extendedTextMessage: { text: 'disappearing' } } } },
        messageTimestamp: 1_700_000_002,
      },
      { key: { id: 'A4', remoteJid: '15550001111@s.whatsapp.net', fromMe: true }, message: { conversation: 'sent from the phone' }, messageTimestamp: 1_700_000_003 },
      { key: { id: 'A5', remoteJid: '15550001111@s.whatsapp.net', fromMe: false }, message: { imageMessage: { mimetype: 'image/jpeg' } }, messageTimestamp: 1_700_000_004 },
      { key: { id: 'S1', remoteJid: 'status@broadcast', fromMe: false }, message: { conversation: 'a status' } },
      { key: { id: 'P1', remoteJid: '15550001111@s.whatsapp.net', fromMe: false }, message: { protocolMessage: { type: 0 } } },
      { key: { id: 'N1', remoteJid: '15550001111@s.whatsapp.net', fromMe: false } },
    ] as WAMessage[];
    t.socket.emit('messages.upsert', { messages, type: 'notify' });
    t.socket.emit('messages.upsert', { messages: [messages[0]], type: 'append' });

    expect(t.events).toEqual([
      { type: 'message', message: { id: 'A1', from: '15550001111@s.whatsapp.net', chatJid: '15550001111@s.whatsapp.net', text: 'hello', timestamp: 1_700_000_000_000, fromMe: false } },
      { type: 'message', message: { id: 'A2', from: '15550002222@s.whatsapp.net', chatJid: '1203630001@g.us', text: 'in a group', timestamp: 1_700_000_001_000, fromMe: false } },
      { type: 'message', message: { id: 'A3', from: '15550003333@s.whatsapp.net', chatJid: '15550003333@s.whatsapp.net', text: 'disappearing', timestamp: 1_700_000_002_000, fromMe: false } },
      { type: 'message', message: { id: 'A4', from: '491701234567@s.whatsapp.net', chatJid: '15550001111@s.whatsapp.net', text: 'sent from the phone', timestamp: 1_700_000_003_000, fromMe: true } },
      { type: 'message', message: { id: 'A5', from: '15550001111@s.whatsapp.net', chatJid: '15550001111@s.whatsapp.net', text: null, timestamp: 1_700_000_004_000, fromMe: false } },
    ]);
  });

  it('creates a group and maps its metadata to GroupInfo', async () => {
    const t = await harness();
    t.socket.user = { id: '491701234567:2@s.whatsapp.net' };
    t.socket.update({ connection: 'open' });
    const group = await t.conn.createGroup('Team', ['15550001111@s.whatsapp.net', '15550002222@s.whatsapp.net']);
    expect(t.socket.groupCreate).toHaveBeenCalledWith('Team', ['15550001111@s.whatsapp.net', '15550002222@s.whatsapp.net']);
    expect(group).toEqual({
      groupJid: '120363000000000001@g.us',
      subject: 'Team',
      description: 'the description',
      ownerJid: '491701234567@s.whatsapp.net',
      participants: ['15550001111@s.whatsapp.net', '15550002222@s.whatsapp.net'],
      isAnnounce: true,
      isLocked: false,
    });
  });

  it('sends text and returns the WhatsApp message id; a Baileys failure rejects with a clear error', async () => {
    const t = await harness();
    t.socket.user = { id: '491701234567:2@s.whatsapp.net' };
    t.socket.update({ connection: 'open' });
    await expect(t.conn.sendText('15550001111@s.whatsapp.net', 'hi')).resolves.toEqual({ waMessageId: '3EB0ABCDEF' });
    expect(t.socket.sendMessage).toHaveBeenCalledWith('15550001111@s.whatsapp.net', { text: 'hi' });
    t.socket.sendMessage.mockRejectedValueOnce(boom(408, 'Timed Out'));
    await expect(t.conn.sendText('15550001111@s.whatsapp.net', 'hi')).rejects.toThrow('cannot send a message: Timed Out');
  });

  it('refuses network calls before the connection is open', async () => {
    const t = await harness();
    await expect(t.conn.sendText('15550001111@s.whatsapp.net', 'hi')).rejects.toThrow(/not connected yet/);
    await expect(t.conn.createGroup('x', [])).rejects.toThrow(/not connected yet/);
    expect(t.socket.sendMessage).not.toHaveBeenCalled();
  });

  it('requests a pairing code once WhatsApp waits for a pairing, with the number as digits', async () => {
    const t = await harness();
    const code = t.conn.requestPairingCode('+49 170 1234567');
    await flush();
    expect(t.socket.requestPairingCode).not.toHaveBeenCalled();
    t.socket.update({ qr: '2@qr' });
    await expect(code).resolves.toBe('ABCD1234');
    expect(t.socket.requestPairingCode).toHaveBeenCalledWith('491701234567');
    await expect(t.conn.requestPairingCode('12')).rejects.toThrow(/6 to 15 digits/);
  });

  it('refuses a pairing code for a paired session', async () => {
    const t = await harness({ creds: fakeCreds({ registered: true }) });
    await expect(t.conn.requestPairingCode('491701234567')).rejects.toThrow(/already paired/);
  });

  it('close() reports closed_by_us, ends the socket once, never reconnects, and is idempotent', async () => {
    const t = await harness();
    t.socket.user = { id: '491701234567:2@s.whatsapp.net' };
    t.socket.update({ connection: 'open' });
    await t.conn.close();
    await t.conn.close();
    expect(t.events.slice(1)).toEqual([{ type: 'close', reason: 'closed_by_us', statusCode: null, message: 'connection closed' }]);
    expect(t.socket.endCalls).toBe(1);
    expect(t.sockets).toHaveLength(1);
  });

  it('reports closed_by_us even when the socket was already failing as close() was called', async () => {
    const t = await harness();
    const closing = t.conn.close();
    t.socket.update({ connection: 'close', lastDisconnect: { error: boom(428), date: new Date() } });
    await closing;
    expect(t.events).toEqual([expect.objectContaining({ type: 'close', reason: 'closed_by_us' })]);
  });

  it('rejects every call on a closed connection with EngineConnectionClosedError', async () => {
    const t = await harness();
    t.socket.update({ connection: 'open' });
    await t.conn.close();
    await expect(t.conn.sendText('15550001111@s.whatsapp.net', 'hi')).rejects.toBeInstanceOf(EngineConnectionClosedError);
    await expect(t.conn.createGroup('x', [])).rejects.toBeInstanceOf(EngineConnectionClosedError);
    await expect(t.conn.requestPairingCode('491701234567')).rejects.toBeInstanceOf(EngineConnectionClosedError);
    await expect(t.conn.logout()).rejects.toBeInstanceOf(EngineConnectionClosedError);
  });

  it('a pending pairing-code request fails clearly when the socket closes', async () => {
    const t = await harness();
    const code = t.conn.requestPairingCode('491701234567');
    t.socket.update({ connection: 'close', lastDisconnect: { error: boom(428), date: new Date() } });
    await expect(code).rejects.toBeInstanceOf(EngineConnectionClosedError);
  });

  it('logout() unlinks through Baileys and resolves once the socket closed as logged_out', async () => {
    const t = await harness();
    t.socket.user = { id: '491701234567:2@s.whatsapp.net' };
    t.socket.update({ connection: 'open' });
    await t.conn.logout();
    expect(t.socket.logout).toHaveBeenCalledTimes(1);
    expect(t.events.slice(1)).toEqual([{ type: 'close', reason: 'logged_out', statusCode: 401, message: 'Intentional Logout' }]);
  });

  it('logout() that cannot reach the network closes the socket and rejects', async () => {
    const t = await harness();
    t.socket.update({ connection: 'open' });
    t.socket.logout.mockRejectedValueOnce(boom(428, 'Connection Closed'));
    await expect(t.conn.logout()).rejects.toThrow('logout did not reach WhatsApp: Connection Closed');
    expect(t.events.at(-1)).toEqual(expect.objectContaining({ type: 'close', reason: 'closed_by_us' }));
  });

  it('a throwing event handler does not break the connection', async () => {
    const t = await harness({
      onEvent: (e) => {
        if (e.type === 'qr') throw new Error('handler bug');
      },
    });
    t.socket.update({ qr: '2@qr' });
    t.socket.user = { id: '491701234567:2@s.whatsapp.net' };
    t.socket.update({ connection: 'open' });
    expect(t.events.map((e) => e.type)).toEqual(['qr', 'open']);
  });
});
