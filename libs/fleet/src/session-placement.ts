import { DomainError } from '@app/contracts';
import type { SessionsRepository, Tx } from '@app/database';
import type { GatewayDirectory } from './gateway-registry';

/** Where a new session goes, and the live fleet's total capacity it was chosen from (the fair-share base). */
export interface Placement {
  gatewayId: string;
  fleetCapacity: number;
}

/**
 * Chooses the live gateway with the most free capacity for a session.
 * Load is counted from the sessions table (sessions placed there that should run), not from the heartbeats,
 * so a burst of creates spreads at once instead of piling onto the node whose last heartbeat looked emptiest.
 */
export class SessionPlacement {
  constructor(
    private readonly directory: Pick<GatewayDirectory, 'live'>,
    private readonly sessions: Pick<SessionsRepository, 'placedCountsOn'>,
  ) {}

  /**
   * `tx`: the caller's transaction, when it holds one (a create under the organization's quota lock): the count runs
   * on its connection. Asking the pool for a second one while holding the first deadlocks a burst of creates, whose
   * waiters hold every pooled connection while the lock holder waits for one.
   */
  async choose(tx?: Tx): Promise<Placement> {
    const live = await this.directory.live();
    if (live.length === 0) throw new DomainError('gateway_unavailable', 'no gateway is available to host the session');
    const placed = await this.sessions.placedCountsOn(live.map((g) => g.id), tx);
    const ranked = live
      .map((g) => ({ id: g.id, placed: placed.get(g.id) ?? 0, free: g.capacity - (placed.get(g.id) ?? 0) }))
      .sort((a, b) => b.free - a.free || a.placed - b.placed || a.id.localeCompare(b.id));
    const best = ranked[0];
    if (best.free <= 0) throw new DomainError('gateway_unavailable', 'every gateway is at capacity');
    return { gatewayId: best.id, fleetCapacity: live.reduce((sum, g) => sum + g.capacity, 0) };
  }
}
