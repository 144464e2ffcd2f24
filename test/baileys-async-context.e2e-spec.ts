import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { spawnRegistered } from './support/process-registry';
import { REPO_ROOT } from './support/run-context';

/**
 * Issue 36, item 1: Baileys sockets must not leave a cost on every later promise of the process. Unpatched Baileys
 * creates one AsyncLocalStorage per socket and enables it on the first key-store transaction; on Node < 24 every
 * enabled store stamps every promise for the rest of the process's life. test/support/baileys-async-context-probe.js
 * opens 200 real sockets (makeWASocket, connected to a local WebSocket server, a transaction through each socket's
 * signal repository, closed) in one child and compares it with a baseline child that opened none. The await cost is
 * a ratio of CPU time, samples alternated between the two children so both see the same machine load.
 */
interface ProbeCounts {
  sockets: number;
  asyncLocalStorages: number;
  hiddenProperties: number;
}

interface Probe {
  child: ChildProcess;
  counts: ProbeCounts;
}

const SOCKETS = 200;
const SAMPLES = 9;

function startProbe(sockets: number): Promise<Probe> {
  const child = spawnRegistered(
    process.execPath,
    ['--expose-gc', join(REPO_ROOT, 'test/support/baileys-async-context-probe.js')],
    { cwd: REPO_ROOT, env: { ...process.env, SOCKETS: String(sockets) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    `baileys-async-context-probe (${sockets} sockets)`,
  );
  return new Promise((resolve, reject) => {
    child.once('message', (counts) => resolve({ child, counts: counts as ProbeCounts }));
    child.once('exit', (code) => reject(new Error(`the probe with ${sockets} sockets exited (${code}) before reporting`)));
  });
}

function sample(probe: Probe): Promise<number> {
  return new Promise((resolve) => {
    probe.child.once('message', (reply) => resolve((reply as { awaitsCpuMs: number }).awaitsCpuMs));
    probe.child.send('sample');
  });
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

describe('Baileys sockets leave no cost on later promises (one shared AsyncLocalStorage)', () => {
  let baseline: Probe;
  let loaded: Probe;

  beforeAll(async () => {
    [baseline, loaded] = await Promise.all([startProbe(0), startProbe(SOCKETS)]);
  }, 120_000);

  afterAll(async () => {
    const running = [baseline, loaded].filter((probe) => probe && probe.child.exitCode === null);
    await Promise.all(running.map((probe) => new Promise((resolve) => {
      probe.child.once('exit', resolve);
      probe.child.send('exit');
    })));
  });

  it(`after ${SOCKETS} sockets, a fresh promise carries no more hidden properties than in a process that opened none`, () => {
    expect(loaded.counts.sockets).toBe(SOCKETS);
    expect(loaded.counts.hiddenProperties).toBeLessThanOrEqual(baseline.counts.hiddenProperties);
    // every runtime: the sockets constructed no store of their own (on Node 24 a store stamps nothing, but still exists)
    expect(loaded.counts.asyncLocalStorages).toBeLessThanOrEqual(baseline.counts.asyncLocalStorages);
  });

  it('100,000 awaits cost within 1.2× of that process (median CPU time, samples alternated)', async () => {
    const costs = { baseline: [] as number[], loaded: [] as number[] };
    for (let i = 0; i < SAMPLES; i++) {
      costs.baseline.push(await sample(baseline));
      costs.loaded.push(await sample(loaded));
    }
    const ratio = median(costs.loaded) / median(costs.baseline);
    // on failure jest prints the ratio and every sample
    expect({ withinBound: ratio <= 1.2, ratio, costs }).toMatchObject({ withinBound: true });
  }, 120_000);
});
