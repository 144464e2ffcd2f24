import pino from 'pino';
import { GatewayNode, GatewayNodeParts } from './gateway-node';

/** Fakes of every part, recording the calls that matter to the lifecycle in one list. */
function fakeNode(over: { resume?: () => Promise<number> } = {}) {
  const calls: string[] = [];
  const parts: GatewayNodeParts = {
    host: {
      sessionCount: 0,
      leasedSessionIds: () => [],
      leaseLost: async () => undefined,
      signal: (id) => calls.push(`signal ${id}`),
      sweepQueued: async () => undefined,
      resume: over.resume ?? (async () => (calls.push('resume sessions'), 2)),
      shutdown: async () => void calls.push('shut down sessions'),
    },
    registry: {
      heartbeat: async (n) => (calls.push(`heartbeat ${n}`), { id: 'gw', capacity: 1, engine: 'sim', version: '1', sessionCount: n, startedAt: 0, lastHeartbeatAt: 0 }),
      deregister: async () => void calls.push('deregister'),
    },
    leases: { renew: async () => [] },
    commands: {
      start: async () => void calls.push('start commands'),
      close: async () => void calls.push('close commands'),
    },
    signals: {
      listen: async (onSession) => {
        calls.push('listen');
        onSession('ses_1');
        return async () => void calls.push('unlisten');
      },
    },
    opsServer: async () => (calls.push('open ops'), { port: 1234, close: async () => void calls.push('close ops') }),
    metrics: { sessions: { set: () => undefined } },
    logger: pino({ level: 'silent' }),
  };
  const node = new GatewayNode({ gatewayId: 'gw', engine: 'sim', heartbeatMs: 60_000, sweepMs: 60_000 }, parts);
  return { node, calls };
}

describe('GatewayNode', () => {
  it('takes commands and registers before resuming sessions, and serves health last', async () => {
    const { node, calls } = fakeNode();
    await node.start();
    expect(calls).toEqual(['start commands', 'heartbeat 0', 'listen', 'signal ses_1', 'resume sessions', 'heartbeat 0', 'open ops']);
    await node.stop();
  });

  it('stops taking commands first, then closes sessions, leaves the registry and closes the ops server', async () => {
    const { node, calls } = fakeNode();
    await node.start();
    calls.length = 0;
    await node.beforeApplicationShutdown();
    expect(calls).toEqual(['unlisten', 'close commands', 'shut down sessions', 'deregister', 'close ops']);
  });

  it('stops once however often it is asked (a signal during the context close)', async () => {
    const { node, calls } = fakeNode();
    await node.start();
    calls.length = 0;
    await Promise.all([node.stop(), node.beforeApplicationShutdown(), node.stop()]);
    expect(calls.filter((c) => c === 'deregister')).toHaveLength(1);
  });

  it('a start that fails half-way still stops cleanly', async () => {
    const { node, calls } = fakeNode({
      resume: async () => {
        throw new Error('database gone');
      },
    });
    await expect(node.start()).rejects.toThrow('database gone');
    calls.length = 0;
    await node.stop();
    expect(calls).toEqual(['unlisten', 'close commands', 'shut down sessions', 'deregister']);
  });
});
