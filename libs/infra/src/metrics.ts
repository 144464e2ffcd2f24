import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The process's one Prometheus registry, with Node's default metrics. Each app registers its own series on it
 * (`registers: [metrics.registry]`) and serves it on its metrics endpoint.
 */
export class MetricsRegistry {
  readonly registry = new Registry();

  constructor(defaultLabels: Record<string, string> = {}) {
    this.registry.setDefaultLabels(defaultLabels);
    collectDefaultMetrics({ register: this.registry });
  }
}
