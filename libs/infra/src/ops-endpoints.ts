import type { Db } from '@app/database';
import { checkDependencies, startOpsServer } from '@app/observability';
import type { Redis } from '@app/redis';
import type { MetricsRegistry } from './metrics';

/**
 * Health, readiness (PostgreSQL and Redis answer) and metrics (the shared registry) of an app without a public HTTP
 * API, the gateway and the dispatcher, on a port of their choosing.
 */
export class OpsEndpoints {
  constructor(
    private readonly metrics: MetricsRegistry,
    private readonly db: Db,
    private readonly redis: Redis,
  ) {}

  /**
   * On `host` (OPS_HOST) and `port`. `accepting`: the app's own say in readiness (a draining gateway takes no sessions,
   * whatever its stores).
   */
  start(port: number, host: string, accepting: () => boolean = () => true): Promise<{ port: number; close: () => Promise<void> }> {
    return startOpsServer({ port, host, registry: this.metrics.registry, ready: async () => accepting() && (await this.ready()) });
  }

  async ready(): Promise<boolean> {
    return Object.values(await checkDependencies(this.db, this.redis)).every(Boolean);
  }
}
