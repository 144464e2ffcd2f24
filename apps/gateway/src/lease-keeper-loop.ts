import type { GatewayRegistry, NodeLease } from '@app/fleet';
import { newLeaseEpoch } from '@app/fleet';

/**
 * What the lease keeper thread and the main thread share, one BigInt64 slot each (Atomics: either side reads the
 * other's latest write at once, however busy the reader's event loop is, with no message to wait for).
 */
export const KEEPER_SLOTS = {
  /** when the last renewal that kept the acknowledged epoch live started (ms); written by the keeper */
  renewStartedAt: 0,
  /** the node's live epoch; written by the keeper (a new one after the old expired) */
  epoch: 1,
  /** the epoch the main thread has re-stamped its leases with; written by the main thread */
  ackedEpoch: 2,
  /** the main thread's last sign of life (ms); written by the main thread */
  mainAliveAt: 3,
  /** sessions held, for the heartbeat; written by the main thread */
  sessionCount: 4,
  /** 1: the main thread asks for a new epoch (after a lapse, every lease of the old one must die) */
  rotate: 5,
  /** when the renewal that wrote the live epoch started (ms): its node key lives at least until then + TTL */
  epochStartedAt: 6,
} as const;
export const KEEPER_SLOT_COUNT = 7;

export interface KeeperState {
  load(slot: number): number;
  store(slot: number, value: number): void;
}

/** A KeeperState over a SharedArrayBuffer of KEEPER_SLOT_COUNT BigInt64 slots. */
export function sharedKeeperState(buffer: SharedArrayBuffer): KeeperState {
  const slots = new BigInt64Array(buffer);
  return {
    load: (slot) => Number(Atomics.load(slots, slot)),
    store: (slot, value) => void Atomics.store(slots, slot, BigInt(Math.trunc(value))),
  };
}

export interface LeaseKeeperLoopSettings {
  /**
   * Longest the main thread may go without a sign of life before the keeper stops renewing: much longer than the TTL
   * (a busy engine is slow, not dead), bounded (a deadlocked main thread must not keep its leases forever).
   */
  mainStallMs: number;
}

export type KeeperReport = { kind: 'renewed' } | { kind: 'epoch'; epoch: number } | { kind: 'failed'; err: string } | { kind: 'main-stalled'; sinceMs: number };

/**
 * One renewal tick of the lease keeper thread: the registry heartbeat and the node epoch (one command each, whatever the
 * sessions held). Kept apart from the thread's plumbing so a unit spec drives it with fakes.
 */
export class LeaseKeeperLoop {
  private stalledSaid = false;

  constructor(
    private readonly state: KeeperState,
    private readonly registry: Pick<GatewayRegistry, 'heartbeat'>,
    private readonly node: Pick<NodeLease, 'renew'>,
    private readonly settings: LeaseKeeperLoopSettings,
    private readonly clock: () => number = Date.now,
  ) {}

  async tick(): Promise<KeeperReport> {
    const { state } = this;
    const startedAt = this.clock();
    const silentMs = startedAt - state.load(KEEPER_SLOTS.mainAliveAt);
    if (silentMs > this.settings.mainStallMs) {
      // the node stops looking alive: its leases and its registry entry expire, and failover moves its sessions
      const first = !this.stalledSaid;
      this.stalledSaid = true;
      return first ? { kind: 'main-stalled', sinceMs: silentMs } : { kind: 'failed', err: 'main thread stalled' };
    }
    this.stalledSaid = false;
    try {
      await this.registry.heartbeat(state.load(KEEPER_SLOTS.sessionCount));
      const epoch = state.load(KEEPER_SLOTS.epoch);
      const next = newLeaseEpoch();
      const forced = state.load(KEEPER_SLOTS.rotate) === 1;
      // a forced rotation renews a fresh epoch nobody holds, so the old one dies with its node key's TTL gone
      if (!forced && (await this.node.renew(epoch, next))) {
        if (state.load(KEEPER_SLOTS.ackedEpoch) === epoch) state.store(KEEPER_SLOTS.renewStartedAt, startedAt);
        return { kind: 'renewed' };
      }
      if (forced) await this.node.renew(next, next);
      state.store(KEEPER_SLOTS.epochStartedAt, startedAt);
      state.store(KEEPER_SLOTS.epoch, next);
      state.store(KEEPER_SLOTS.rotate, 0);
      return { kind: 'epoch', epoch: next };
    } catch (err) {
      return { kind: 'failed', err: String(err) };
    }
  }
}
