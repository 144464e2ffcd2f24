import { EventEmitter } from 'node:events';
import pino from 'pino';
import type { AuthenticationCreds, ConnectionState, SignalKeyStore, UserFacingSocketConfig, WASocket } from '@whiskeysockets/baileys';
import type { AuthStateStore, EngineEvent } from '../engine.interface';
import type { BaileysRuntime } from './baileys-runtime';
import { BaileysEngine } from './baileys.engine';
import { WaWebVersion, WaWebVersionProbe, WaWebVersionSource } from './wa-web-version';

const BUNDLED: WaWebVersion = [2, 3000, 1];
const CONFIGURED: WaWebVersion = [2, 3000, 2];
const CURRENT: WaWebVersion = [2, 3000, 3];

function source(options: { configured?: WaWebVersion | null; fetch?: boolean; fetchTimeoutMs?: number }, fetchLatest: WaWebVersionProbe['fetchLatest']) {
  const calls = { fetch: 0 };
  const probe: WaWebVersionProbe = {
    bundled: BUNDLED,
    fetchLatest: (signal) => {
      calls.fetch += 1;
      return fetchLatest(signal);
    },
  };
  const s = new WaWebVersionSource(
    { configured: options.configured ?? null, fetch: options.fetch ?? false, fetchTimeoutMs: options.fetchTimeoutMs ?? 5000, logger: pino({ level: 'silent' }) },
    () => probe,
  );
  return { s, calls };
}

describe('WaWebVersionSource', () => {
  it('without the fetch: WHATSAPP_WEB_VERSION, else Baileys’ bundled version; no outbound call', async () => {
    const configured = source({ configured: CONFIGURED }, async () => CURRENT);
    expect(await configured.s.current()).toEqual({ version: CONFIGURED, origin: 'configured' });
    expect(configured.s.inUse()).toBe('2.3000.2');
    const bundled = source({}, async () => CURRENT);
    expect(bundled.s.inUse()).toBeNull();
    expect(await bundled.s.current()).toEqual({ version: BUNDLED, origin: 'bundled' });
    expect(configured.calls.fetch + bundled.calls.fetch).toBe(0);
  });

  it('with the fetch: WhatsApp Web’s current version, read once for every session', async () => {
    const t = source({ fetch: true, configured: CONFIGURED }, async () => CURRENT);
    const [a, b] = await Promise.all([t.s.current(), t.s.current()]);
    expect(a).toEqual({ version: CURRENT, origin: 'fetched' });
    expect(b).toBe(a);
    await t.s.current();
    expect(t.calls.fetch).toBe(1);
  });

  it('offline (the fetch fails or finds nothing): falls back to the configured, then the bundled version', async () => {
    const failing = source({ fetch: true, configured: CONFIGURED }, async () => {
      throw new Error('getaddrinfo ENOTFOUND web.whatsapp.com');
    });
    expect(await failing.s.current()).toEqual({ version: CONFIGURED, origin: 'configured' });
    const nothing = source({ fetch: true }, async () => null);
    expect(await nothing.s.current()).toEqual({ version: BUNDLED, origin: 'bundled' });
  });

  it('a fetch that hangs is cut at the timeout and aborted', async () => {
    jest.useFakeTimers();
    try {
      let aborted = false;
      const t = source({ fetch: true, fetchTimeoutMs: 3000 }, (signal) => {
        signal.addEventListener('abort', () => (aborted = true));
        return new Promise(() => undefined);
      });
      const read = t.s.current();
      await jest.advanceTimersByTimeAsync(2999);
      expect(aborted).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      expect(await read).toEqual({ version: BUNDLED, origin: 'bundled' });
      expect(aborted).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('after WhatsApp refused the version in use, the next read fetches again; a refusal of an older one changes nothing', async () => {
    const answers = [CONFIGURED, CURRENT];
    const t = source({ fetch: true }, async () => answers.shift() ?? null);
    expect((await t.s.current()).version).toEqual(CONFIGURED);
    t.s.refused([2, 3000, 0]);
    expect((await t.s.current()).version).toEqual(CONFIGURED);
    expect(t.calls.fetch).toBe(1);
    t.s.refused(CONFIGURED);
    expect((await t.s.current()).version).toEqual(CURRENT);
    expect(t.calls.fetch).toBe(2);
  });
});

/** Just enough of Baileys' socket for a connect and a close. */
class FakeSocket {
  readonly emitter = new EventEmitter();
  readonly ev = { on: (e: string, l: (d: unknown) => void) => this.emitter.on(e, l), off: (e: string, l: (d: unknown) => void) => this.emitter.off(e, l) };
  user = undefined;
  constructor(readonly config: UserFacingSocketConfig) {}
  update(update: Partial<ConnectionState>): void {
    this.emitter.emit('connection.update', update);
  }
  async end(): Promise<void> {
    this.update({ connection: 'close', lastDisconnect: { error: undefined, date: new Date() } });
  }
}

describe('BaileysEngine and the WhatsApp Web version', () => {
  const auth: AuthStateStore = {
    sessionId: 'ses_v',
    readCreds: async () => null,
    writeCreds: async () => undefined,
    readKeys: async () => ({}),
    writeKeys: async () => undefined,
    clear: async () => {
      throw new Error('must not be called');
    },
  };
  const runtime = {
    initAuthCreds: () => ({ me: undefined }) as unknown as AuthenticationCreds,
    makeCacheableSignalKeyStore: (store: SignalKeyStore) => store,
  } as unknown as BaileysRuntime;

  it('announces the version in use to makeWASocket, and a 405 makes the next connect read it again', async () => {
    const answers = [CONFIGURED, CURRENT];
    const t = source({ fetch: true }, async () => answers.shift() ?? null);
    const sockets: FakeSocket[] = [];
    const engine = new BaileysEngine({
      runtime,
      waWebVersion: t.s,
      makeSocket: (config) => {
        const socket = new FakeSocket(config);
        sockets.push(socket);
        return socket as unknown as WASocket;
      },
    });
    const events: EngineEvent[] = [];
    const connect = () => engine.connect({ sessionId: 'ses_v', auth, logger: pino({ level: 'silent' }), onEvent: async (e) => void events.push(e) });
    await connect();
    expect(sockets[0].config.version).toEqual(CONFIGURED);
    expect(engine.waWebVersion()).toBe('2.3000.2');
    const refused = Object.assign(new Error('Connection Failure'), { isBoom: true, output: { statusCode: 405 } });
    sockets[0].update({ connection: 'close', lastDisconnect: { error: refused, date: new Date() } });
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual([{ type: 'close', reason: 'client_version_refused', statusCode: 405, message: 'Connection Failure' }]);
    await connect();
    expect(sockets[1].config.version).toEqual(CURRENT);
    expect(engine.waWebVersion()).toBe('2.3000.3');
  });

  it('without a version source, makeWASocket gets no version (Baileys’ own default)', async () => {
    let config: UserFacingSocketConfig | null = null;
    const engine = new BaileysEngine({ runtime, makeSocket: (c) => ((config = c), new FakeSocket(c) as unknown as WASocket) });
    await engine.connect({ sessionId: 'ses_v', auth, logger: pino({ level: 'silent' }), onEvent: async () => undefined });
    expect(config!.version).toBeUndefined();
    expect(engine.waWebVersion()).toBeNull();
  });
});
