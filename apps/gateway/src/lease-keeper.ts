import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { GatewayInfo } from '@app/contracts';
import { KEEPER_SLOT_COUNT, KEEPER_SLOTS, KeeperReport, KeeperState, sharedKeeperState } from './lease-keeper-loop';

export interface KeeperWorkerData {
  buffer: SharedArrayBuffer;
  redisUrl: string;
  prefix: string;
  node: Pick<GatewayInfo, 'id' | 'capacity' | 'engine' | 'version' | 'simulated'>;
  ttlMs: number;
  heartbeatMs: number;
  mainStallMs: number;
}

export type ToKeeper = { kind: 'tick' } | { kind: 'info'; waWebVersion: string | null } | { kind: 'draining' } | { kind: 'stop' };

/** What the node asks of its lease keeper (LeaseKeeper; a fake in unit specs). */
export interface NodeKeeper {
  /** Starts renewing; resolves after the first renewal's report. */
  start(): Promise<void>;
  /** When the last renewal that kept the acknowledged epoch live started: read by the watchdog, never stale. */
  renewStartedAt(): number;
  /** The live epoch the main thread has not re-stamped its leases with yet, or null. */
  unackedEpoch(): number | null;
  /** The epoch the leases are stamped with (RedisSessionLeases' epoch source). */
  ackedEpoch(): number;
  /** The leases held were re-stamped with `epoch`: its renewals count from now, and one comes at once. */
  ack(epoch: number): void;
  /** When the renewal that wrote the live epoch started: the leases re-stamped with it are ours until then + TTL. */
  epochStartedAt(): number;
  /** After a lapse: a new epoch, so every lease of the old one dies even if its node key had not expired. */
  rotate(): void;
  sessionCount(n: number): void;
  waWebVersion(version: string | null): void;
  startDraining(): void;
  onReport(handler: (report: KeeperReport) => void): void;
  stop(): Promise<void>;
}

/**
 * Runs the node's lease and registry renewals on a thread of their own (lease-keeper.worker.ts) with a Redis
 * connection of their own: a main thread busy with the engine's crypto delays nothing the leases depend on. The main
 * thread writes a sign of life every `pingMs`; a main thread silent for longer than `mainStallMs` (deadlocked, spinning)
 * loses its renewals, so it never keeps its leases forever. A frozen process (SIGSTOP) stops both threads.
 */
export class LeaseKeeper implements NodeKeeper {
  private readonly buffer = new SharedArrayBuffer(KEEPER_SLOT_COUNT * 8);
  private readonly state: KeeperState = sharedKeeperState(this.buffer);
  private worker: Worker | null = null;
  private ping: NodeJS.Timeout | null = null;
  private handlers: Array<(report: KeeperReport) => void> = [];

  constructor(
    private readonly settings: Omit<KeeperWorkerData, 'buffer'> & { pingMs: number },
    private readonly clock: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    this.state.store(KEEPER_SLOTS.mainAliveAt, this.clock());
    this.ping = setInterval(() => this.state.store(KEEPER_SLOTS.mainAliveAt, this.clock()), this.settings.pingMs);
    const { pingMs: _pingMs, ...data } = this.settings;
    const worker = new Worker(join(__dirname, 'lease-keeper.worker.js'), { workerData: { ...data, buffer: this.buffer } satisfies KeeperWorkerData });
    this.worker = worker;
    const first = new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
    worker.on('message', (report: KeeperReport) => this.handlers.forEach((h) => h(report)));
    await first;
  }

  renewStartedAt(): number {
    return this.state.load(KEEPER_SLOTS.renewStartedAt);
  }

  unackedEpoch(): number | null {
    const epoch = this.state.load(KEEPER_SLOTS.epoch);
    return epoch !== 0 && epoch !== this.state.load(KEEPER_SLOTS.ackedEpoch) ? epoch : null;
  }

  epochStartedAt(): number {
    return this.state.load(KEEPER_SLOTS.epochStartedAt);
  }

  ackedEpoch(): number {
    return this.state.load(KEEPER_SLOTS.ackedEpoch);
  }

  ack(epoch: number): void {
    this.state.store(KEEPER_SLOTS.ackedEpoch, epoch);
    this.post({ kind: 'tick' });
  }

  rotate(): void {
    this.state.store(KEEPER_SLOTS.rotate, 1);
    this.post({ kind: 'tick' });
  }

  sessionCount(n: number): void {
    this.state.store(KEEPER_SLOTS.sessionCount, n);
  }

  waWebVersion(version: string | null): void {
    this.post({ kind: 'info', waWebVersion: version });
  }

  startDraining(): void {
    this.post({ kind: 'draining' });
  }

  onReport(handler: (report: KeeperReport) => void): void {
    this.handlers.push(handler);
  }

  async stop(): Promise<void> {
    if (this.ping) clearInterval(this.ping);
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    this.post({ kind: 'stop' }, worker);
    const timer = setTimeout(() => void worker.terminate(), 5000);
    await exited;
    clearTimeout(timer);
  }

  private post(message: ToKeeper, worker = this.worker): void {
    worker?.postMessage(message);
  }
}
