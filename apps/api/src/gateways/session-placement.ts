import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { DomainError } from '@app/contracts';
import { GatewayDirectory } from '@app/fleet';

/**
 * Chooses the live gateway with the most free capacity for a session.
 * Load is counted from the sessions table (sessions placed there that should run), not from the heartbeats,
 * so a burst of creates spreads at once instead of piling onto the node whose last heartbeat looked emptiest.
 */
@Injectable()
export class SessionPlacement {
  constructor(
    private readonly directory: GatewayDirectory,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  async choose(): Promise<string> {
    const live = await this.directory.live();
    if (live.length === 0) throw new DomainError('gateway_unavailable', 'no gateway is available to host the session');
    const rows: Array<{ gateway_id: string; n: string }> = await this.db.query(
      `SELECT gateway_id, count(*) AS n FROM sessions WHERE desired_state = 'running' AND gateway_id = ANY($1) GROUP BY gateway_id`,
      [live.map((g) => g.id)],
    );
    const placed = new Map(rows.map((r) => [r.gateway_id, Number(r.n)]));
    const ranked = live
      .map((g) => ({ id: g.id, placed: placed.get(g.id) ?? 0, free: g.capacity - (placed.get(g.id) ?? 0) }))
      .sort((a, b) => b.free - a.free || a.placed - b.placed || a.id.localeCompare(b.id));
    const best = ranked[0];
    if (best.free <= 0) throw new DomainError('gateway_unavailable', 'every gateway is at capacity');
    return best.id;
  }
}
