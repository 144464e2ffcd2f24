import type { GatewayEntry } from '@app/fleet';

/** A gateway the leader has declared dead, and the moment its death is counted from (its last heartbeat). */
export interface DeadGateway {
  id: string;
  /** epoch ms: the last heartbeat the registry still has, else when this leader first saw the gateway missing */
  diedAt: number;
}

/** Past a heartbeat's TTL, how long the leader waits for the alive key to have expired before it looks. */
export const VERDICT_MARGIN_MS = 50;

export interface DeathWatchSettings {
  /** GATEWAY_TTL_MS: a heartbeat older than this is expired */
  ttlMs: number;
  /** how long an expired gateway must stay missing in this leader's own eyes (one heartbeat: every live node re-registers within it) */
  confirmMs: number;
}

/**
 * The leader's record of which gateways it has watched being missing, and since when. A gateway is dead only after
 * this leader has seen its alive key missing continuously: at once when its registry entry shows a heartbeat older than
 * the TTL and this leader saw it alive earlier in the same uninterrupted view (it watched it stop beating); for
 * `confirmMs` when it shows such a heartbeat but this leader never saw it alive (a new leader, a view interrupted by a
 * Redis restart: every live gateway re-registers within a heartbeat); for a whole TTL when the entry is gone too
 * (deregistered, or Redis came back empty). A new leader, or one whose view was interrupted, starts watching afresh.
 */
export class DeathWatch {
  private readonly missingSince = new Map<string, number>();
  /** gateways this leader has seen alive since its view began: their death needs no further confirmation */
  private readonly seenAlive = new Set<string>();

  constructor(private readonly settings: DeathWatchSettings) {}

  /**
   * One observation: the registry as listed now, and the gateways sessions are placed on (which may be absent from the
   * registry). Returns the gateways to fail over.
   */
  observe(registry: GatewayEntry[], placedOn: Iterable<string>, now: number): DeadGateway[] {
    const entries = new Map(registry.map((g) => [g.id, g]));
    const watched = new Set([...entries.keys(), ...placedOn]);
    for (const id of [...this.missingSince.keys()]) if (!watched.has(id)) this.missingSince.delete(id);
    for (const id of [...this.seenAlive]) if (!watched.has(id)) this.seenAlive.delete(id);
    const dead: DeadGateway[] = [];
    for (const id of watched) {
      const entry = entries.get(id);
      if (entry?.alive) {
        this.missingSince.delete(id);
        this.seenAlive.add(id);
        continue;
      }
      const since = this.missingSince.get(id) ?? now;
      this.missingSince.set(id, since);
      const watchedFor = now - since;
      if (entry) {
        // seen beating, then silent for a whole TTL under this leader's own eyes: its leases have expired with it, so
        // nothing is gained by waiting longer (a Redis restart interrupts the view, and then the confirmation applies)
        const confirmed = this.seenAlive.has(id) || watchedFor >= this.settings.confirmMs;
        if (confirmed && now - entry.lastHeartbeatAt >= this.settings.ttlMs) dead.push({ id, diedAt: entry.lastHeartbeatAt });
      } else if (watchedFor >= this.settings.ttlMs) {
        dead.push({ id, diedAt: since });
      }
    }
    return dead;
  }

  /**
   * The next moment a verdict may change for a gateway this leader watches beating: its last heartbeat plus the TTL
   * (when its alive key expires, if no heartbeat comes), plus VERDICT_MARGIN_MS for the key's own expiry (set a moment
   * after the heartbeat's stamp). Only moments after `now`; null when there is none. The leader looks again then
   * rather than up to a whole interval later: a death is acted on at the TTL, not at the next tick after it.
   */
  nextVerdictAt(registry: GatewayEntry[], now: number): number | null {
    let next: number | null = null;
    for (const g of registry) {
      if (!g.alive || !this.seenAlive.has(g.id)) continue;
      const at = g.lastHeartbeatAt + this.settings.ttlMs + VERDICT_MARGIN_MS;
      if (at > now && (next === null || at < next)) next = at;
    }
    return next;
  }

  /** The view was interrupted (leadership lost, Redis unreadable): nothing seen so far counts any more. */
  forget(): void {
    this.missingSince.clear();
    this.seenAlive.clear();
  }
}
