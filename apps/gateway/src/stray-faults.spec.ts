import { EventEmitter } from 'node:events';
import { connect, createServer, Server, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { currentSessionId, runInSessionContext } from './engine/session-context';
import { StrayFaults } from './stray-faults';

function harness(now = { t: 0 }) {
  const logged: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const restarted: string[] = [];
  const counted: string[] = [];
  const faults = new StrayFaults({
    logger: { error: ((fields: Record<string, unknown>, message: string) => void logged.push({ fields, message })) as never },
    sessionOf: currentSessionId,
    restartSession: async (sessionId) => {
      restarted.push(sessionId);
      return true;
    },
    clock: () => now.t,
    minRestartIntervalMs: 30_000,
    count: (kind, attributed) => void counted.push(`${kind}:${attributed}`),
  });
  return { faults, logged, restarted, counted, now };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
/** every socket and server a test opens, closed after it even when it fails (so jest exits) */
const sockets: Socket[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('StrayFaults', () => {
  it('traces a fault to the session whose socket it came from: network callbacks and timers run in the context the socket was made in', async () => {
    const t = harness();
    // the network: a server that writes to its clients from outside any session context
    const accepted: Socket[] = [];
    let bothAccepted!: () => void;
    const connected = new Promise<void>((resolve) => (bothAccepted = resolve));
    const server = createServer((socket) => {
      sockets.push(socket);
      if (accepted.push(socket) === 2) bothAccepted();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // what the engine does: each session's socket is made inside its context; the library's data callback starts a
    // timer whose promise rejects with nobody to catch it (the process hands such a rejection to StrayFaults in the
    // rejected promise's context; here the callback calls it, in the same context)
    const faulted = new Promise<void>((resolve) => {
      for (const sessionId of ['ses_a', 'ses_b']) {
        runInSessionContext(sessionId, () => {
          const socket = connect(port, '127.0.0.1');
          socket.on('data', (data) => {
            if (data.toString() !== sessionId) return;
            setTimeout(() => {
              t.faults.onFault('unhandled_rejection', new Error('bad MAC'));
              resolve();
            }, 1);
          });
          sockets.push(socket);
        });
      }
    });
    await connected;
    // outside any context, as the network's bytes arrive
    expect(currentSessionId()).toBeNull();
    for (const client of accepted) client.write('ses_b');
    await faulted;
    await tick();
    expect(t.restarted).toEqual(['ses_b']);
    expect(t.logged[0]).toMatchObject({ fields: { kind: 'unhandled_rejection', sessionId: 'ses_b', restart: true }, message: 'stray fault in a session; restarting its connection' });
    expect(t.counted).toEqual(['unhandled_rejection:true']);
  });

  it('installs both process-level handlers and removes them', () => {
    const t = harness();
    const target = new EventEmitter();
    const uninstall = t.faults.install(target as unknown as NodeJS.Process);
    expect(target.listenerCount('unhandledRejection')).toBe(1);
    expect(target.listenerCount('uncaughtException')).toBe(1);
    runInSessionContext('ses_a', () => target.emit('uncaughtException', new Error('thrown in a callback')));
    expect(t.counted).toEqual(['uncaught_exception:true']);
    uninstall();
    expect(target.listenerCount('unhandledRejection') + target.listenerCount('uncaughtException')).toBe(0);
  });

  it('restarts a session at most once per interval, so a fault on every connect cannot loop fast', async () => {
    const t = harness();
    runInSessionContext('ses_a', () => t.faults.onFault('uncaught_exception', new Error('boom')));
    t.now.t = 10_000;
    runInSessionContext('ses_a', () => t.faults.onFault('uncaught_exception', new Error('boom again')));
    t.now.t = 31_000;
    runInSessionContext('ses_a', () => t.faults.onFault('unhandled_rejection', 'a string'));
    await tick();
    expect(t.restarted).toEqual(['ses_a', 'ses_a']);
    expect(t.logged.map((l) => l.fields.restart)).toEqual([true, false, true]);
  });

  it('a fault outside any session is logged and nothing is restarted', async () => {
    const t = harness();
    t.faults.onFault('unhandled_rejection', new Error('somewhere else'));
    await tick();
    expect(t.restarted).toEqual([]);
    expect(t.logged[0]).toMatchObject({ fields: { kind: 'unhandled_rejection' }, message: 'stray fault outside any session; the process and every session are kept' });
    expect(t.counted).toEqual(['unhandled_rejection:false']);
  });

  it('a failing restart is logged, not thrown', async () => {
    const logged: string[] = [];
    const faults = new StrayFaults({
      logger: { error: ((_f: unknown, message: string) => void logged.push(message)) as never },
      sessionOf: () => 'ses_a',
      restartSession: async () => {
        throw new Error('db down');
      },
    });
    faults.onFault('unhandled_rejection', new Error('x'));
    await tick();
    expect(logged).toEqual(['stray fault in a session; restarting its connection', 'restarting a session after a stray fault failed']);
  });
});
