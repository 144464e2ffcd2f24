import { CommandMap, CommandName, CommandRequest, DomainError } from '@app/contracts';
import {
  AdoptSignal,
  CommandBus,
  CommandExecutor,
  CommandServer,
  FleetLogger,
  GatewayDirectory,
  GatewayRegistry,
  GatewaySignals,
  RedisQrBoard,
  RedisSessionLeases,
} from '@app/fleet';
import { SendSignal } from '@app/messaging';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { waitFor } from './support/processes';

/** Both sides of each gateway protocol against real Redis, as an API replica and a gateway node would use them. */
describe('Fleet protocols (libs/fleet) against Redis', () => {
  // this file's own namespace inside the run's prefix, so nothing else in the run sees these gateways or sessions
  const keys = new RedisKeys(`${process.env.REDIS_KEY_PREFIX}:fleet-${process.pid}`);
  const redisUrl = process.env.REDIS_URL!;
  let redis: Redis;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(() => {
    redis = createRedis(redisUrl);
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await redis.quit();
  });

  describe('gateway registry and directory', () => {
    const node = { id: 'gw-registry', capacity: 7, engine: 'sim', version: '1.2.3' };

    it('lists a node that beats as alive, keeps it listed but not alive once the heartbeat expires, drops it on deregister', async () => {
      const registry = new GatewayRegistry(redis, keys, node, 300);
      const directory = new GatewayDirectory(redis, keys);

      await registry.heartbeat(3);
      expect(await directory.list()).toEqual([expect.objectContaining({ ...node, sessionCount: 3, alive: true })]);
      expect((await directory.live()).map((g) => g.id)).toEqual([node.id]);
      expect(await directory.isAlive(node.id)).toBe(true);

      await waitFor(async () => !(await directory.isAlive(node.id)), 5000, 'the heartbeat to expire');
      expect(await directory.list()).toEqual([expect.objectContaining({ id: node.id, alive: false })]);
      expect(await directory.live()).toEqual([]);

      await registry.heartbeat(1);
      expect(await directory.isAlive(node.id)).toBe(true);
      await registry.deregister();
      expect(await directory.list()).toEqual([]);
      expect(await directory.isAlive(node.id)).toBe(false);
    });

    it('takes a drain request for a listed gateway only, and leaves a draining gateway out of the live ones', async () => {
      const drained = { ...node, id: 'gw-draining' };
      const registry = new GatewayRegistry(redis, keys, drained, 60_000);
      const directory = new GatewayDirectory(redis, keys);

      expect(await directory.requestDrain(drained.id)).toBe(false);
      await registry.heartbeat(2);
      expect(await registry.drainRequested()).toBe(false);
      expect(await directory.requestDrain(drained.id)).toBe(true);
      expect(await registry.drainRequested()).toBe(true);

      await registry.startDraining(2);
      expect(await directory.list()).toEqual([expect.objectContaining({ id: drained.id, alive: true, draining: true })]);
      expect(await directory.live()).toEqual([]);
      await registry.heartbeat(1);
      expect((await directory.list())[0].draining).toBe(true);

      // a gateway restarted under the same id must not drain again
      await registry.deregister();
      expect(await registry.drainRequested()).toBe(false);
    });

    it('knows nothing of a gateway that never registered', async () => {
      expect(await new GatewayDirectory(redis, keys).isAlive('gw-never')).toBe(false);
    });
  });

  describe('session leases', () => {
    /** the session row's fencing counter, as PostgreSQL keeps it; counts how often a token was taken */
    const tokenCounter = () => {
      let n = 0;
      const take = async () => ++n;
      return Object.assign(take, { taken: () => n });
    };

    it('lets one gateway hold a session: the other is refused until the holder releases it', async () => {
      const a = new RedisSessionLeases(redis, keys, 'gw-a', 60_000);
      const b = new RedisSessionLeases(redis, keys, 'gw-b', 60_000);
      const tokens = tokenCounter();

      expect(await a.acquire('ses_held', tokens)).toBe(1);
      expect(await a.acquire('ses_held', tokens)).toBe(2);
      expect(await a.holderOf('ses_held')).toEqual({ gatewayId: 'gw-a', token: 2 });
      expect(await b.acquire('ses_held', tokens)).toBeNull();
      await b.release('ses_held');
      expect(await b.acquire('ses_held', tokens)).toBeNull();
      // a gateway waiting for the lease never takes a token: it would fence out the holder it waits for
      expect(tokens.taken()).toBe(2);

      await a.release('ses_held');
      expect(await b.acquire('ses_held', tokens)).toBe(3);
      expect(await b.holderOf('ses_held')).toEqual({ gatewayId: 'gw-b', token: 3 });
      expect(await a.acquire('ses_held', tokens)).toBeNull();
    });

    it('renew reports only the sessions another gateway holds, and takes back a lease that merely expired', async () => {
      const a = new RedisSessionLeases(redis, keys, 'gw-a', 200);
      const b = new RedisSessionLeases(redis, keys, 'gw-b', 60_000);
      const tokens = tokenCounter();
      expect(await a.acquire('ses_kept', tokens)).not.toBeNull();
      expect(await a.acquire('ses_stalled', tokens)).not.toBeNull();
      expect(await a.acquire('ses_taken', tokens)).not.toBeNull();

      // a stall longer than the TTL: every lease of gw-a expires, and gw-b takes one of them meanwhile
      await waitFor(async () => (await b.acquire('ses_taken', tokens)) !== null, 5000, 'gw-a’s lease to expire');
      expect(await a.renew(['ses_kept', 'ses_stalled', 'ses_taken'])).toEqual(['ses_taken']);
      expect(await b.acquire('ses_stalled', tokens)).toBeNull();
      expect(await a.renew([])).toEqual([]);
    });
  });

  describe('adopt signal', () => {
    it('reaches the gateway it names, not another, and nothing after it stops listening', async () => {
      const signal = new AdoptSignal(keys);
      const subscribers = [createRedis(redisUrl), createRedis(redisUrl)];
      closers.push(async () => void (await Promise.all(subscribers.map((s) => s.quit()))));
      const [signalsA, signalsB] = subscribers.map((s) => new GatewaySignals(s));
      const heard: string[] = [];
      const unlistenA = await signal.listen(signalsA, 'gw-a', () => heard.push('gw-a'));
      await signal.listen(signalsB, 'gw-b', () => heard.push('gw-b'));

      await signal.notify(redis, 'gw-a');
      await waitFor(() => heard.length === 1, 10000, 'the signal to gw-a heard');
      await signal.notify(redis, 'gw-b');
      await waitFor(() => heard.length === 2, 10000, 'the signal to gw-b heard');
      expect(heard).toEqual(['gw-a', 'gw-b']);

      // gw-a stops listening (unsubscribed once this resolves): a signal sent now reaches nobody, and the next
      // listener of gw-a hears only what is sent after it subscribed
      await unlistenA();
      await signal.notify(redis, 'gw-a');
      await signal.listen(signalsA, 'gw-a', () => heard.push('gw-a again'));
      await signal.notify(redis, 'gw-a');
      await waitFor(() => heard.length === 3, 10000, 'the signal to the new listener heard');
      expect(heard).toEqual(['gw-a', 'gw-b', 'gw-a again']);
    });

    it('shares the gateway’s one subscriber connection with the send signal, each hearing only its own', async () => {
      const subscriber = createRedis(redisUrl);
      closers.push(async () => void (await subscriber.quit()));
      const signals = new GatewaySignals(subscriber);
      const adopt = new AdoptSignal(keys);
      const send = new SendSignal(keys);
      const heard: string[] = [];
      const unlistenSend = await send.listen(signals, 'gw-both', (sessionId) => heard.push(`send ${sessionId}`));
      const unlistenAdopt = await adopt.listen(signals, 'gw-both', () => heard.push('adopt'));

      await send.notify(redis, 'gw-both', 'ses_1');
      await adopt.notify(redis, 'gw-both');
      await send.notify(redis, 'gw-both', 'ses_2');
      await waitFor(() => heard.length === 3, 10000, 'both signals heard on one connection');
      expect(heard).toEqual(['send ses_1', 'adopt', 'send ses_2']);

      // one unsubscribed, the other still heard on the same connection
      await unlistenAdopt();
      await adopt.notify(redis, 'gw-both');
      await send.notify(redis, 'gw-both', 'ses_3');
      await waitFor(() => heard.length === 4, 10000, 'the send signal heard after the adopt signal left');
      expect(heard).toEqual(['send ses_1', 'adopt', 'send ses_2', 'send ses_3']);
      await unlistenSend();
    });
  });

  describe('QR board', () => {
    it('shows a QR to readers until it expires or is cleared', async () => {
      const board = new RedisQrBoard(redis, keys);
      const qr = { qr: '2@abc,def', expiresAt: 1_700_000_000_000 };

      expect(await board.read('ses_qr')).toBeNull();
      await board.show('ses_qr', qr, 300);
      expect(await board.read('ses_qr')).toEqual(qr);
      await waitFor(async () => (await board.read('ses_qr')) === null, 5000, 'the QR to expire');

      await board.show('ses_qr', qr, 60_000);
      await board.clear('ses_qr');
      expect(await board.read('ses_qr')).toBeNull();
    });
  });

  describe('command bus', () => {
    class RecordingExecutor implements CommandExecutor {
      readonly seen: CommandRequest[] = [];
      async execute<N extends CommandName>(request: CommandRequest<N>): Promise<CommandMap[N]['result']> {
        this.seen.push(request);
        const { sessionId } = request.args;
        if (sessionId === 'ses_missing') throw new DomainError('not_found', 'session not found', { id: sessionId });
        if (sessionId === 'ses_broken') throw new Error('connection string with password leaked');
        return { sessionId, status: 'starting' } as CommandMap[N]['result'];
      }
    }
    class RecordingLogger implements FleetLogger {
      readonly lines: Array<{ level: string; fields: object; message: string }> = [];
      warn(fields: object, message: string): void {
        this.lines.push({ level: 'warn', fields, message });
      }
      error(fields: object, message: string): void {
        this.lines.push({ level: 'error', fields, message });
      }
    }

    const serve = async (gatewayId: string, executor: CommandExecutor, clock: () => number = Date.now) => {
      const outcomes: string[] = [];
      const server = new CommandServer({ redisUrl, gatewayId, concurrency: 4 }, keys, executor, new RecordingLogger(), (name, outcome) => outcomes.push(`${name}:${outcome}`), clock);
      await server.start();
      closers.push(() => server.close());
      return outcomes;
    };
    const bus = (timeoutMs: number, logger: FleetLogger = new RecordingLogger()) => {
      const b = new CommandBus({ redisUrl, timeoutMs }, redis, keys, logger);
      closers.push(() => b.close());
      return b;
    };

    it('carries a command to its gateway and the reply back, domain errors included, unexpected ones hidden', async () => {
      const executor = new RecordingExecutor();
      const outcomes = await serve('gw-round-trip', executor);
      const api = bus(10_000);

      expect(await api.send('gw-round-trip', 'session.start', { sessionId: 'ses_1' })).toEqual({ sessionId: 'ses_1', status: 'starting' });
      expect(executor.seen).toEqual([expect.objectContaining({ name: 'session.start', args: { sessionId: 'ses_1' } })]);

      const missing = await api.send('gw-round-trip', 'session.stop', { sessionId: 'ses_missing' }).catch((e) => e);
      expect(missing).toBeInstanceOf(DomainError);
      expect(missing).toMatchObject({ code: 'not_found', details: { id: 'ses_missing' } });

      const broken = await api.send('gw-round-trip', 'session.stop', { sessionId: 'ses_broken' }).catch((e) => e);
      expect(broken).toMatchObject({ code: 'internal' });
      expect(String(broken.message)).not.toContain('password');
      expect(outcomes).toEqual(['session.start:ok', 'session.stop:not_found', 'session.stop:internal']);
    });

    it('carries a burst of 50 commands at once, each reply to its own caller', async () => {
      await serve('gw-burst', new RecordingExecutor());
      const api = bus(10_000);
      const ids = Array.from({ length: 50 }, (_, i) => `ses_${i}`);
      const replies = await Promise.all(ids.map((sessionId) => api.send('gw-burst', 'session.start', { sessionId })));
      expect(replies.map((r) => (r as { sessionId: string }).sessionId)).toEqual(ids);
    });

    it('a gateway refuses a command whose deadline has passed, without running it', async () => {
      const executor = new RecordingExecutor();
      // the gateway's clock runs a minute ahead: every request it picks up is already past its deadline
      const outcomes = await serve('gw-late', executor, () => Date.now() + 60_000);

      const err = await bus(10_000).send('gw-late', 'session.start', { sessionId: 'ses_late' }).catch((e) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: 'gateway_unavailable', message: 'command expired before the gateway picked it up' });
      expect(executor.seen).toEqual([]);
      expect(outcomes).toEqual(['session.start:gateway_unavailable']);
    });

    it('no reply in time is gateway_unavailable, and the gateway never runs that command once it is back', async () => {
      const logger = new RecordingLogger();
      const api = bus(300, logger);

      const err = await api.send('gw-down', 'session.start', { sessionId: 'ses_unanswered' }).catch((e) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: 'gateway_unavailable', details: { gatewayId: 'gw-down' } });
      expect(logger.lines).toEqual([expect.objectContaining({ level: 'warn', fields: { gatewayId: 'gw-down', command: 'session.start' } })]);

      const executor = new RecordingExecutor();
      await serve('gw-down', executor);
      expect(await bus(10_000).send('gw-down', 'session.restart', { sessionId: 'ses_after' })).toEqual({ sessionId: 'ses_after', status: 'starting' });
      expect(executor.seen.map((r) => r.args)).toEqual([{ sessionId: 'ses_after' }]);
    });
  });
});
